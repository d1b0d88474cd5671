// SPDX-License-Identifier: GPL-2.0
/*
 * histogram: the kernel of Phoenix histogram, the red, green and blue
 * histograms of a 24-bit bitmap.  The main thread builds a synthetic BMP
 * image in memory (Phoenix maps a .bmp file) before it creates the
 * threads; each thread takes a contiguous run of the pixel bytes after
 * the header, counts it into its own three 256-entry histograms (on the
 * heap, as Phoenix's per-thread arrays) and merges them into the global
 * ones under a mutex.  Check: the global histograms equal the serial
 * ones the main thread counted while it generated the pixels.
 *
 * The image is one random row, the tile, repeated down the image with
 * every row's bytes xored with that row's own three key bytes.  So the
 * rows all differ, generating the image costs about a memcpy, and the
 * serial histogram is the tile's, permuted by each row's keys: 768
 * additions a row instead of 3 * WIDTH increments.  Otherwise the serial
 * work would dwarf the parallel counting.
 *
 * SIZE: 4096 x 16384 pixels (192 MiB) for -s 1; the height is linear in
 * SIZE.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "histogram"

#include "workload.h"

#define WIDTH 4096L /* pixels; 3 * WIDTH is a multiple of 4: no padding */
#define DEFAULT_HEIGHT 16384L
#define MAX_HEIGHT (1L << 20)
#define HEADER_BYTES 54 /* BITMAPFILEHEADER + BITMAPINFOHEADER */

struct histogram {
	int nthreads;
	const unsigned char *pixels; /* 3 bytes a pixel: blue, green, red */
	long npixels;

	pthread_mutex_t lock; /* protects the merged histograms */
	long red[256], green[256], blue[256];
};

struct worker {
	struct histogram *h;
	int id;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-t THREADS] [-s SIZE]\n"
		"  Phoenix histogram kernel: RGB histograms of a 24-bit bitmap.\n"
		"  -t THREADS  worker threads (default 2)\n"
		"  -s SIZE     data size factor (default 1.0: %ldx%ld pixels)\n",
		NAME, WIDTH, DEFAULT_HEIGHT);
}

static void put_le(unsigned char *p, uint32_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * Build the BMP (bottom-up rows of blue, green, red bytes) and count the
 * serial histograms on the way.  Green leans dark and red bright in the
 * tile, so that the histograms are not flat.
 */
static unsigned char *make_bitmap(long height, long ref[3][256])
{
	size_t row_bytes = 3 * WIDTH;
	size_t bytes = HEADER_BYTES + row_bytes * height;
	unsigned char *bmp = xmalloc(bytes);
	unsigned char tile[3 * WIDTH];
	long tile_count[3][256] = { { 0 } };

	memset(bmp, 0, HEADER_BYTES);
	bmp[0] = 'B';
	bmp[1] = 'M';
	put_le(bmp + 2, bytes > UINT32_MAX ? 0 : (uint32_t)bytes, 4);
	put_le(bmp + 10, HEADER_BYTES, 4); /* offset of the pixels */
	put_le(bmp + 14, 40, 4); /* BITMAPINFOHEADER */
	put_le(bmp + 18, WIDTH, 4);
	put_le(bmp + 22, (uint32_t)height, 4);
	put_le(bmp + 26, 1, 2); /* planes */
	put_le(bmp + 28, 24, 2); /* bits per pixel */

	for (long x = 0; x < WIDTH; x++) {
		uint64_t r = mix64((uint64_t)x);

		tile[3 * x] = (unsigned char)r;
		tile[3 * x + 1] = (unsigned char)((r >> 8) & (r >> 16));
		tile[3 * x + 2] = (unsigned char)((r >> 24) | (r >> 32));
		for (int c = 0; c < 3; c++)
			tile_count[c][tile[3 * x + c]]++;
	}
	memset(ref, 0, sizeof(long[3][256]));
	for (long y = 0; y < height; y++) {
		unsigned char *row = bmp + HEADER_BYTES + y * row_bytes;
		uint64_t key = mix64(~(uint64_t)y);
		unsigned char k[3] = { (unsigned char)key,
				       (unsigned char)(key >> 8),
				       (unsigned char)(key >> 16) };

		for (size_t i = 0; i < row_bytes; i += 3) {
			row[i] = tile[i] ^ k[0];
			row[i + 1] = tile[i + 1] ^ k[1];
			row[i + 2] = tile[i + 2] ^ k[2];
		}
		for (int c = 0; c < 3; c++)
			for (int v = 0; v < 256; v++)
				ref[c][v ^ k[c]] += tile_count[c][v];
	}
	return bmp;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct histogram *h = w->h;
	long first = (long)((int64_t)h->npixels * w->id / h->nthreads);
	long last = (long)((int64_t)h->npixels * (w->id + 1) / h->nthreads);
	const unsigned char *p = h->pixels + 3 * first;
	const unsigned char *end = h->pixels + 3 * last;
	/* Phoenix's per-thread red, green and blue arrays. */
	int *red = calloc(3 * 256, sizeof(*red));
	int *green = red + 256, *blue = red + 512;

	if (!red) {
		fprintf(stderr, "%s: out of memory\n", NAME);
		exit(1);
	}
	for (; p < end; p += 3) {
		blue[p[0]]++;
		green[p[1]]++;
		red[p[2]]++;
	}

	pthread_mutex_lock(&h->lock);
	for (int v = 0; v < 256; v++) {
		h->red[v] += red[v];
		h->green[v] += green[v];
		h->blue[v] += blue[v];
	}
	pthread_mutex_unlock(&h->lock);
	free(red);
	return NULL;
}

int main(int argc, char **argv)
{
	static struct histogram h;
	static long ref[3][256];
	const long *got[3] = { h.blue, h.green, h.red };
	static const char *const channel[3] = { "blue", "green", "red" };
	struct worker *workers;
	unsigned char *bmp;
	uint64_t checksum = 0;
	int threads, mode[3];
	long height;
	double size;

	if (workload_args(argc, argv, &threads, &size))
		return 2;
	if (size * DEFAULT_HEIGHT > (double)MAX_HEIGHT) {
		fprintf(stderr, "%s: size %g is too large\n", NAME, size);
		return 2;
	}
	height = lround(size * DEFAULT_HEIGHT);
	if (height < 1)
		height = 1;
	bmp = make_bitmap(height, ref);
	/* Read the header back, as Phoenix does with the file. */
	h.pixels = bmp + get_le32(bmp + 10);
	h.npixels = (long)get_le32(bmp + 18) * (long)get_le32(bmp + 22);
	h.nthreads = threads;
	pthread_mutex_init(&h.lock, NULL);

	workers = xmalloc(threads * sizeof(*workers));
	for (int i = 0; i < threads; i++) {
		workers[i].h = &h;
		workers[i].id = i;
	}
	run_threads(threads, worker_main, workers, sizeof(*workers));

	for (int c = 0; c < 3; c++) {
		mode[c] = 0;
		for (int v = 0; v < 256; v++) {
			if (got[c][v] != ref[c][v]) {
				fprintf(stderr,
					"%s: check=FAILED: %s[%d] = %ld, serial %ld\n",
					NAME, channel[c], v, got[c][v],
					ref[c][v]);
				return 1;
			}
			if (got[c][v] > got[c][mode[c]])
				mode[c] = v;
			checksum = checksum * 1000003 + (uint64_t)got[c][v];
		}
	}
	printf("%s threads=%d size=%g check=ok result=pixels=%ld,mode_rgb=%d/%d/%d,sum=%016llx\n",
	       NAME, threads, size, h.npixels, mode[2], mode[1], mode[0],
	       (unsigned long long)checksum);

	pthread_mutex_destroy(&h.lock);
	free(workers);
	free(bmp);
	return 0;
}
