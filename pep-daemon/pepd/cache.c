// SPDX-License-Identifier: GPL-2.0-only
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "seq.h"

#define SEGQ_MIN_CAP 16
#define BUF_HDR offsetof(struct seg_buf, data)

/*
 * The pool's size classes: what one copy takes, header included, each at
 * most 1.5 times the one before (a copy wastes at most a third; an MTU
 * packet fits 1536 with 12 bytes to spare), the last a 64 KiB IP packet.
 */
static const uint32_t class_size[CACHE_CLASSES] = {
	64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
	49152, BUF_HDR + 65536,
};

_Static_assert(BUF_HDR + 40 <= 64, "the smallest class holds a bare IPv4 ACK");

static int class_of(uint32_t len)
{
	int c;

	for (c = 0; c < CACHE_CLASSES; c++)
		if (BUF_HDR + (uint64_t)len <= class_size[c])
			return c;
	return -1;
}

uint64_t cache_charge(uint32_t len)
{
	int c = class_of(len);

	return c < 0 ? cache_alloc_size(BUF_HDR + (uint64_t)len) : cache_alloc_size(class_size[c]);
}

static uint64_t class_mem(int c)
{
	return cache_alloc_size(class_size[c]);
}

/* ---------------------------------------------------------------- the pool */

/* Free-list copies back to malloc until `need` more bytes fit under the bound, or none is left. */
static void pool_make_room(struct cache_budget *b, uint64_t need)
{
	int c;

	for (c = CACHE_CLASSES - 1; c >= 0 && b->mem + b->pool.mem + need > b->limit; c--) {
		while (b->pool.free[c] && b->mem + b->pool.mem + need > b->limit) {
			struct seg_buf *f = b->pool.free[c];

			b->pool.free[c] = f->next_free;
			b->pool.nfree[c]--;
			b->pool.mem -= class_mem(c);
			free(f);
		}
	}
}

static bool fits(struct cache_budget *b, uint64_t need)
{
	if (b->mem + b->pool.mem + need > b->limit)
		pool_make_room(b, need);
	return b->mem + b->pool.mem + need <= b->limit;
}

struct seg_buf *seg_buf_new(struct cache_budget *b, const uint8_t *pkt, uint32_t len)
{
	int c = class_of(len);
	struct seg_buf *buf;

	if (c < 0) {
		b->refused_nomem++;	/* longer than an IP packet can be: cannot happen */
		return NULL;
	}
	if (b->pool.free[c]) {
		buf = b->pool.free[c];
		b->pool.free[c] = buf->next_free;
		b->pool.nfree[c]--;
		b->pool.taken[c]++;
		b->pool.mem -= class_mem(c);
		b->pool.reused++;
	} else {
		if (!fits(b, class_mem(c))) {
			b->refused_total++;
			return NULL;
		}
		buf = malloc(class_size[c]);
		if (!buf) {
			b->refused_nomem++;
			return NULL;
		}
		b->pool.fresh++;
	}
	b->mem += class_mem(c);
	buf->next_free = NULL;
	buf->refs = 1;
	buf->len = len;
	buf->cls = (uint8_t)c;
	memcpy(buf->data, pkt, len);
	return buf;
}

void seg_buf_put(struct cache_budget *b, struct seg_buf *buf)
{
	int c;

	if (!buf || --buf->refs)
		return;
	c = buf->cls;
	b->mem -= class_mem(c);
	buf->next_free = b->pool.free[c];
	b->pool.free[c] = buf;
	b->pool.nfree[c]++;
	b->pool.mem += class_mem(c);
	/* the free lists count against the bound too: never more than it allows */
	if (b->mem + b->pool.mem > b->limit)
		pool_make_room(b, 0);
}

void cache_pool_trim(struct cache_budget *b)
{
	int c;

	for (c = 0; c < CACHE_CLASSES; c++) {
		/* keep what the last period took from this list: the working set of a steady flow */
		while (b->pool.nfree[c] > b->pool.taken[c]) {
			struct seg_buf *f = b->pool.free[c];

			b->pool.free[c] = f->next_free;
			b->pool.nfree[c]--;
			b->pool.mem -= class_mem(c);
			free(f);
		}
		b->pool.taken[c] = 0;
	}
}

void cache_pool_drain(struct cache_budget *b)
{
	int c;

	for (c = 0; c < CACHE_CLASSES; c++)
		b->pool.taken[c] = 0;
	cache_pool_trim(b);
}

/* ---------------------------------------------------------------- the ring */

static uint64_t ring_mem(uint32_t cap)
{
	return cap ? cache_alloc_size((uint64_t)cap * sizeof(struct seg)) : 0;
}

static void seg_free(struct segq *q, struct cache_budget *b, struct seg *s)
{
	q->bytes -= s->len;
	b->bytes -= s->len;
	b->packets--;
	seg_buf_put(b, s->buf);
	s->buf = NULL;
}

/* An empty queue gives its ring back: an idle flow holds no memory. */
static void segq_release(struct segq *q, struct cache_budget *b)
{
	if (q->count || !q->ring)
		return;
	b->mem -= ring_mem(q->cap);
	free(q->ring);
	q->ring = NULL;
	q->cap = 0;
	q->head = 0;
}

static enum cache_insert segq_grow(struct segq *q, struct cache_budget *b, uint64_t need)
{
	uint32_t ncap = q->cap ? q->cap * 2 : SEGQ_MIN_CAP, i;
	struct seg *ring;

	if (ncap < q->cap)
		return CACHE_NOMEM;
	if (!fits(b, ring_mem(ncap) - ring_mem(q->cap) + need)) {
		b->refused_total++;
		return CACHE_FULL;
	}
	ring = calloc(ncap, sizeof(*ring));
	if (!ring) {
		b->refused_nomem++;
		return CACHE_NOMEM;
	}
	for (i = 0; i < q->count; i++)
		ring[i] = *segq_at(q, i);
	free(q->ring);
	b->mem = b->mem - ring_mem(q->cap) + ring_mem(ncap);
	q->ring = ring;
	q->cap = ncap;
	q->head = 0;
	return CACHE_INSERTED;
}

long segq_find(const struct segq *q, uint32_t seq)
{
	uint32_t lo = 0, hi = q->count, mid;
	long i;
	int steps;

	/* Starts are strictly increasing: find the last segment starting at or before seq. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (seq_leq(segq_at(q, mid)->seq, seq))
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * A sender that repacketizes (collapsed retransmissions) can leave a
	 * longer segment just before shorter ones: look back a little.
	 */
	for (i = (long)lo - 1, steps = 0; i >= 0 && steps < 4; i--, steps++)
		if (seq_after(segq_at(q, (uint32_t)i)->end, seq))
			return i;
	return -1;
}

/*
 * Where a segment starting at seq goes, if every per-flow bound and the
 * ring allow it (with `need` more bytes of memory to come for its copy):
 * CACHE_INSERTED and *pos, or why not (*out at the duplicate).
 */
static enum cache_insert segq_place(struct segq *q, struct cache_budget *b, uint32_t seq, uint32_t charge,
				    uint64_t need, uint32_t *pos, struct seg **out)
{
	uint32_t p = q->count;

	*out = NULL;
	/* position: after every segment that starts before seq */
	while (p > 0 && seq_after(segq_at(q, p - 1)->seq, seq))
		p--;
	if (p > 0 && segq_at(q, p - 1)->seq == seq) {
		*out = segq_at(q, p - 1);
		return CACHE_DUPLICATE;
	}
	if (b->seg_limit && q->count >= b->seg_limit) {
		b->refused_flow_segments++;
		return CACHE_FULL;
	}
	if ((uint64_t)q->bytes + charge > b->flow_limit) {
		b->refused_flow_bytes++;
		return CACHE_FULL;
	}
	if (q->count == q->cap) {
		enum cache_insert r = segq_grow(q, b, need);

		if (r != CACHE_INSERTED)
			return r;
	}
	*pos = p;
	return CACHE_INSERTED;
}

/* Put a descriptor for [seq, end) of buf at pos (segq_place said where); it takes a reference. */
static struct seg *segq_put(struct segq *q, struct cache_budget *b, uint32_t pos, uint32_t seq, uint32_t end,
			    struct seg_buf *buf, uint32_t charge)
{
	struct seg *s;
	uint32_t i;

	for (i = q->count; i > pos; i--)
		*segq_at(q, i) = *segq_at(q, i - 1);
	q->count++;
	s = segq_at(q, pos);
	memset(s, 0, sizeof(*s));
	s->seq = seq;
	s->end = end;
	s->len = charge;
	s->buf = buf;
	buf->refs++;
	q->bytes += charge;
	b->bytes += charge;
	b->packets++;
	return s;
}

enum cache_insert segq_insert(struct segq *q, struct cache_budget *b, uint32_t seq, uint32_t end,
			      const uint8_t *pkt, uint32_t len, struct seg **out)
{
	enum cache_insert r;
	struct seg_buf *buf;
	uint32_t pos;

	r = segq_place(q, b, seq, len, cache_charge(len), &pos, out);
	if (r != CACHE_INSERTED)
		return r;
	buf = seg_buf_new(b, pkt, len);
	if (!buf)
		return b->mem + b->pool.mem + cache_charge(len) > b->limit ? CACHE_FULL : CACHE_NOMEM;
	*out = segq_put(q, b, pos, seq, end, buf, len);
	seg_buf_put(b, buf);	/* the segment's reference is the one left */
	return CACHE_INSERTED;
}

enum cache_insert segq_insert_buf(struct segq *q, struct cache_budget *b, uint32_t seq, uint32_t end,
				  struct seg_buf *buf, uint32_t charge, struct seg **out)
{
	enum cache_insert r;
	uint32_t pos;

	r = segq_place(q, b, seq, charge, 0, &pos, out);
	if (r != CACHE_INSERTED)
		return r;
	*out = segq_put(q, b, pos, seq, end, buf, charge);
	return CACHE_INSERTED;
}

int segq_replace_buf(struct segq *q, struct cache_budget *b, struct seg *g, uint32_t end, struct seg_buf *buf,
		     uint32_t charge)
{
	if ((uint64_t)q->bytes - g->len + charge > b->flow_limit) {
		b->refused_flow_bytes++;
		return -1;
	}
	buf->refs++;
	seg_buf_put(b, g->buf);
	q->bytes = q->bytes - g->len + charge;
	b->bytes = b->bytes - g->len + charge;
	g->buf = buf;
	g->len = charge;
	g->end = end;
	return 0;
}

int segq_replace(struct segq *q, struct cache_budget *b, struct seg *g, uint32_t end, const uint8_t *pkt,
		 uint32_t len)
{
	struct seg_buf *buf;
	int r;

	if ((uint64_t)q->bytes - g->len + len > b->flow_limit) {
		b->refused_flow_bytes++;
		return -1;
	}
	buf = seg_buf_new(b, pkt, len);
	if (!buf)
		return -1;
	r = segq_replace_buf(q, b, g, end, buf, len);
	seg_buf_put(b, buf);
	return r;
}

void segq_remove(struct segq *q, struct cache_budget *b, uint32_t i)
{
	uint32_t j;

	seg_free(q, b, segq_at(q, i));
	for (j = i; j + 1 < q->count; j++)
		*segq_at(q, j) = *segq_at(q, j + 1);
	q->count--;
	segq_release(q, b);
}

uint32_t segq_ack(struct segq *q, struct cache_budget *b, uint32_t ack)
{
	uint32_t n = 0;
	struct seg *s;

	while (q->count) {
		s = segq_at(q, 0);
		if (seq_after(s->end, ack))
			break;
		seg_free(q, b, s);
		q->head = (q->head + 1) & (q->cap - 1);
		q->count--;
		n++;
	}
	segq_release(q, b);
	return n;
}

void segq_clear(struct segq *q, struct cache_budget *b)
{
	while (q->count) {
		seg_free(q, b, segq_at(q, 0));
		q->head = (q->head + 1) & (q->cap - 1);
		q->count--;
	}
	segq_release(q, b);
	memset(q, 0, sizeof(*q));
}
