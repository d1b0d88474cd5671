// SPDX-License-Identifier: GPL-2.0
/*
 * The uapi header is an ABI: valor.ko, valord, libvalor and recorded traces
 * all read struct valor_event by offset.  These tests pin its layout at run
 * time (the header's static_asserts only cover part of it) and check the
 * invariants consumers rely on: distinct event kinds, disjoint flag bits,
 * no padding that could leak kernel memory to user space.
 */

/* First, before anything else: proves the header is self-contained. */
#include <linux/valor.h>

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kselftest_harness.h"

#define FIELD_SIZE(type, member) sizeof(((type *)0)->member)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Every kind the header defines; update together with the header. */
static const unsigned int event_kinds[] = {
	VALOR_EV_THREAD_CREATE, VALOR_EV_THREAD_EXIT, VALOR_EV_THREAD_JOIN,
	VALOR_EV_ACQUIRE,	VALOR_EV_RELEASE,     VALOR_EV_ACCESS,
	VALOR_EV_FREE,		VALOR_EV_MUNMAP,      VALOR_EV_REGION_END,
	VALOR_EV_VALIDATE,	VALOR_EV_LOST,	      VALOR_EV_PAGE_DISARM,
	VALOR_EV_TARGET_EXIT,
};

static const unsigned int event_flags[] = {
	VALOR_EVF_WRITE,       VALOR_EVF_KERNEL,   VALOR_EVF_ATOMIC,
	VALOR_EVF_FIRST_TOUCH, VALOR_EVF_EMULATED, VALOR_EVF_STEPPED,
	VALOR_EVF_STRIDED,
};

/* A strided access's stride and count survive the trip through @arg. */
TEST(strided_arg_round_trip)
{
	static const __u32 v[] = { 0, 1, 16, 0x80000000U, 0xffffffffU };

	for (size_t i = 0; i < ARRAY_LEN(v); i++) {
		for (size_t j = 0; j < ARRAY_LEN(v); j++) {
			__u64 arg = VALOR_ACCESS_STRIDED(v[i], v[j]);

			EXPECT_EQ(v[i], VALOR_ACCESS_STRIDE(arg));
			EXPECT_EQ(v[j], VALOR_ACCESS_COUNT(arg));
		}
	}
}

TEST(event_layout)
{
	ASSERT_EQ(48, sizeof(struct valor_event));
	ASSERT_EQ(8, _Alignof(struct valor_event));

	EXPECT_EQ(0, offsetof(struct valor_event, kind));
	EXPECT_EQ(2, offsetof(struct valor_event, flags));
	EXPECT_EQ(4, offsetof(struct valor_event, size));
	EXPECT_EQ(8, offsetof(struct valor_event, tid));
	EXPECT_EQ(12, offsetof(struct valor_event, cpu));
	EXPECT_EQ(16, offsetof(struct valor_event, addr));
	EXPECT_EQ(24, offsetof(struct valor_event, ip));
	EXPECT_EQ(32, offsetof(struct valor_event, ts_ns));
	EXPECT_EQ(40, offsetof(struct valor_event, arg));
}

/*
 * Implicit padding would carry uninitialised kernel stack bytes to user
 * space and make records differ for equal contents: the members must add
 * up to the whole struct.
 */
TEST(event_has_no_padding)
{
	size_t sum = FIELD_SIZE(struct valor_event, kind) +
		     FIELD_SIZE(struct valor_event, flags) +
		     FIELD_SIZE(struct valor_event, size) +
		     FIELD_SIZE(struct valor_event, tid) +
		     FIELD_SIZE(struct valor_event, cpu) +
		     FIELD_SIZE(struct valor_event, addr) +
		     FIELD_SIZE(struct valor_event, ip) +
		     FIELD_SIZE(struct valor_event, ts_ns) +
		     FIELD_SIZE(struct valor_event, arg);

	ASSERT_EQ(sizeof(struct valor_event), sum);
	/* Addresses, sites and times are 64-bit on every architecture. */
	EXPECT_EQ(8, FIELD_SIZE(struct valor_event, addr));
	EXPECT_EQ(8, FIELD_SIZE(struct valor_event, ip));
	EXPECT_EQ(8, FIELD_SIZE(struct valor_event, ts_ns));
	EXPECT_EQ(8, FIELD_SIZE(struct valor_event, arg));
}

TEST(event_kinds_distinct_and_in_range)
{
	unsigned int seen[VALOR_EV_KIND_MAX + 1] = { 0 };
	unsigned int highest = 0;

	ASSERT_EQ(0, VALOR_EV_NONE);
	for (size_t i = 0; i < ARRAY_LEN(event_kinds); i++) {
		unsigned int k = event_kinds[i];

		ASSERT_NE(VALOR_EV_NONE, k);
		ASSERT_LE(k, VALOR_EV_KIND_MAX);
		EXPECT_EQ(0, seen[k]) TH_LOG("kind %u defined twice", k);
		seen[k]++;
		if (k > highest)
			highest = k;
	}
	/* KIND_MAX names the last kind, and kinds are numbered densely. */
	EXPECT_EQ(VALOR_EV_KIND_MAX, highest);
	EXPECT_EQ(VALOR_EV_KIND_MAX, ARRAY_LEN(event_kinds));
	/* The kind field can hold every kind. */
	EXPECT_GT(1UL << (8 * FIELD_SIZE(struct valor_event, kind)),
		  (unsigned long)VALOR_EV_KIND_MAX);
}

TEST(event_flags_disjoint)
{
	unsigned int all = 0, flags_bits;

	for (size_t i = 0; i < ARRAY_LEN(event_flags); i++) {
		unsigned int f = event_flags[i];

		ASSERT_NE(0, f);
		EXPECT_EQ(0, f & (f - 1)) TH_LOG("flag %#x is not one bit", f);
		EXPECT_EQ(0, all & f) TH_LOG("flag %#x overlaps", f);
		all |= f;
	}
	EXPECT_EQ(all, VALOR_EVF_KNOWN);
	/* Every known flag fits the flags field. */
	flags_bits = 8 * FIELD_SIZE(struct valor_event, flags);
	EXPECT_EQ(0, VALOR_EVF_KNOWN >> flags_bits);
}

TEST(stream_header_layout)
{
	struct valor_stream_header h;

	ASSERT_EQ(16, sizeof(h));
	EXPECT_EQ(0, offsetof(struct valor_stream_header, magic));
	EXPECT_EQ(4, offsetof(struct valor_stream_header, version));
	EXPECT_EQ(6, offsetof(struct valor_stream_header, record_size));
	EXPECT_EQ(8, offsetof(struct valor_stream_header, flags));
	EXPECT_EQ(12, offsetof(struct valor_stream_header, reserved));
	EXPECT_EQ(sizeof(h), sizeof(h.magic) + sizeof(h.version) +
				     sizeof(h.record_size) + sizeof(h.flags) +
				     sizeof(h.reserved));

	/* The version and the record size fit their fields. */
	EXPECT_GE(VALOR_UAPI_VERSION, 1);
	EXPECT_LT(VALOR_UAPI_VERSION, 1 << 16);
	h.record_size = sizeof(struct valor_event);
	EXPECT_EQ(sizeof(struct valor_event), h.record_size);
}

/* Streams are little-endian on disk; a hex dump shows "VLOR". */
TEST(stream_magic_bytes)
{
	uint32_t le = htole32(VALOR_STREAM_MAGIC);
	char bytes[4];

	memcpy(bytes, &le, sizeof(bytes));
	EXPECT_EQ(0, memcmp(bytes, "VLOR", 4));
}

/* ioctl type numbers are 8 bits wide (_IOC_TYPEBITS). */
TEST(ioctl_magic_fits)
{
	EXPECT_EQ(0, VALOR_IOC_MAGIC >> 8);
	EXPECT_NE(0, VALOR_IOC_MAGIC);
}

TEST_HARNESS_MAIN
