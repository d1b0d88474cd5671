// SPDX-License-Identifier: GPL-2.0
/*
 * The event ring of a session: fault handlers push under session->lock,
 * one reader at a time copies records out.  A record is removed only
 * after it reached user space, so a read() into a bad buffer loses
 * nothing.  When the ring is full new records are counted, not queued,
 * and a LOST record carrying the count precedes the next one that fits.
 */
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "valor_kmod.h"

/* Records copied per round trip to user space. */
#define VALOR_READ_BATCH 64

int valor_ring_init(struct valor_ring *ring, unsigned int records)
{
	ring->rec = vmalloc(array_size(records, sizeof(*ring->rec)));
	if (!ring->rec)
		return -ENOMEM;
	ring->mask = records - 1;
	ring->head = 0;
	ring->tail = 0;
	ring->lost_pending = 0;
	ring->header_sent = false;
	init_waitqueue_head(&ring->wait);
	mutex_init(&ring->read_lock);
	return 0;
}

void valor_ring_free(struct valor_ring *ring)
{
	vfree(ring->rec);
	ring->rec = NULL;
}

static u64 ring_used(const struct valor_ring *ring)
{
	return ring->head - ring->tail;
}

/* Caller holds s->lock. */
void valor_ring_push(struct valor_session *s, const struct valor_event *ev)
{
	struct valor_ring *ring = &s->ring;
	u64 room = (u64)ring->mask + 1 - ring_used(ring);

	if (ring->lost_pending) {
		struct valor_event *lost;

		if (room < 2) {
			ring->lost_pending++;
			s->stats.lost++;
			return;
		}
		lost = &ring->rec[ring->head++ & ring->mask];
		memset(lost, 0, sizeof(*lost));
		lost->kind = VALOR_EV_LOST;
		lost->cpu = ev->cpu;
		lost->ts_ns = ev->ts_ns;
		lost->arg = ring->lost_pending;
		ring->lost_pending = 0;
	} else if (!room) {
		ring->lost_pending = 1;
		s->stats.lost++;
		return;
	}
	ring->rec[ring->head++ & ring->mask] = *ev;
	s->stats.events++;
	if (wq_has_sleeper(&ring->wait))
		wake_up_interruptible(&ring->wait);
}

static bool ring_readable(struct valor_session *s)
{
	bool ready;
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	ready = !s->ring.header_sent || ring_used(&s->ring) || s->dead ||
		!s->attached;
	spin_unlock_irqrestore(&s->lock, flags);
	return ready;
}

static ssize_t send_header(struct valor_ring *ring, char __user *buf)
{
	struct valor_stream_header h = {
		.magic = VALOR_STREAM_MAGIC,
		.version = VALOR_UAPI_VERSION,
		.record_size = sizeof(struct valor_event),
	};

	if (copy_to_user(buf, &h, sizeof(h)))
		return -EFAULT;
	ring->header_sent = true;
	return sizeof(h);
}

ssize_t valor_ring_read(struct valor_session *s, char __user *buf, size_t count,
			bool nonblock)
{
	struct valor_ring *ring = &s->ring;
	struct valor_event *batch;
	unsigned long flags;
	ssize_t done = 0;
	int err;

	if (count < sizeof(struct valor_event))
		return -EINVAL;
	batch = kmalloc_array(VALOR_READ_BATCH, sizeof(*batch), GFP_KERNEL);
	if (!batch)
		return -ENOMEM;
	if (mutex_lock_interruptible(&ring->read_lock)) {
		kfree(batch);
		return -ERESTARTSYS;
	}
	for (;;) {
		if (!ring->header_sent) {
			done = send_header(ring, buf);
			if (done < 0)
				goto out;
		}
		for (;;) {
			u64 n, i;

			spin_lock_irqsave(&s->lock, flags);
			n = min_t(u64, ring_used(ring), VALOR_READ_BATCH);
			n = min_t(u64, n, (count - done) / sizeof(*batch));
			for (i = 0; i < n; i++)
				batch[i] =
					ring->rec[(ring->tail + i) & ring->mask];
			spin_unlock_irqrestore(&s->lock, flags);
			if (!n)
				break;
			if (copy_to_user(buf + done, batch,
					 n * sizeof(*batch))) {
				if (!done)
					done = -EFAULT;
				goto out;
			}
			spin_lock_irqsave(&s->lock, flags);
			ring->tail += n;
			spin_unlock_irqrestore(&s->lock, flags);
			done += n * sizeof(*batch);
		}
		if (done || nonblock || s->dead || !s->attached) {
			if (!done && nonblock && !s->dead && s->attached)
				done = -EAGAIN;
			goto out;
		}
		mutex_unlock(&ring->read_lock);
		err = wait_event_interruptible(ring->wait, ring_readable(s));
		if (err) {
			kfree(batch);
			return err;
		}
		if (mutex_lock_interruptible(&ring->read_lock)) {
			kfree(batch);
			return -ERESTARTSYS;
		}
	}
out:
	mutex_unlock(&ring->read_lock);
	kfree(batch);
	return done;
}

__poll_t valor_ring_poll(struct valor_session *s, struct file *file,
			 poll_table *wait)
{
	__poll_t mask = 0;
	unsigned long flags;

	poll_wait(file, &s->ring.wait, wait);
	spin_lock_irqsave(&s->lock, flags);
	if (!s->ring.header_sent || ring_used(&s->ring))
		mask |= EPOLLIN | EPOLLRDNORM;
	else if (s->dead)
		mask |= EPOLLHUP;
	spin_unlock_irqrestore(&s->lock, flags);
	return mask;
}
