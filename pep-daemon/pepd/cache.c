// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "seq.h"

#define SEGQ_MIN_CAP 16

static uint64_t ring_mem(uint32_t cap)
{
	return cap ? cache_alloc_size((uint64_t)cap * sizeof(struct seg)) : 0;
}

static void seg_free(struct segq *q, struct cache_budget *b, struct seg *s)
{
	q->bytes -= s->len;
	b->bytes -= s->len;
	b->mem -= cache_alloc_size(s->len);
	b->packets--;
	free(s->data);
	s->data = NULL;
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
	if (b->mem - ring_mem(q->cap) + ring_mem(ncap) + need > b->limit) {
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

enum cache_insert segq_insert(struct segq *q, struct cache_budget *b, uint32_t seq, uint32_t end,
			      const uint8_t *pkt, uint32_t len, struct seg **out)
{
	uint32_t pos, i;
	struct seg *s;
	uint8_t *copy;

	*out = NULL;
	/* position: after every segment that starts before seq */
	pos = q->count;
	while (pos > 0 && seq_after(segq_at(q, pos - 1)->seq, seq))
		pos--;
	if (pos > 0 && segq_at(q, pos - 1)->seq == seq) {
		*out = segq_at(q, pos - 1);
		return CACHE_DUPLICATE;
	}
	if (b->seg_limit && q->count >= b->seg_limit) {
		b->refused_flow_segments++;
		return CACHE_FULL;
	}
	if ((uint64_t)q->bytes + len > b->flow_limit) {
		b->refused_flow_bytes++;
		return CACHE_FULL;
	}
	if (q->count == q->cap) {
		enum cache_insert r = segq_grow(q, b, cache_alloc_size(len));

		if (r != CACHE_INSERTED)
			return r;
	}
	if (b->mem + cache_alloc_size(len) > b->limit) {
		b->refused_total++;
		return CACHE_FULL;
	}
	copy = malloc(len);
	if (!copy) {
		b->refused_nomem++;
		return CACHE_NOMEM;
	}
	memcpy(copy, pkt, len);
	for (i = q->count; i > pos; i--)
		*segq_at(q, i) = *segq_at(q, i - 1);
	q->count++;
	s = segq_at(q, pos);
	memset(s, 0, sizeof(*s));
	s->seq = seq;
	s->end = end;
	s->len = len;
	s->data = copy;
	q->bytes += len;
	b->bytes += len;
	b->mem += cache_alloc_size(len);
	b->packets++;
	*out = s;
	return CACHE_INSERTED;
}

int segq_replace(struct segq *q, struct cache_budget *b, struct seg *g, uint32_t end, const uint8_t *pkt,
		 uint32_t len)
{
	uint8_t *copy;

	if ((uint64_t)q->bytes - g->len + len > b->flow_limit) {
		b->refused_flow_bytes++;
		return -1;
	}
	if (b->mem - cache_alloc_size(g->len) + cache_alloc_size(len) > b->limit) {
		b->refused_total++;
		return -1;
	}
	copy = malloc(len);
	if (!copy) {
		b->refused_nomem++;
		return -1;
	}
	memcpy(copy, pkt, len);
	q->bytes = q->bytes - g->len + len;
	b->bytes = b->bytes - g->len + len;
	b->mem = b->mem - cache_alloc_size(g->len) + cache_alloc_size(len);
	free(g->data);
	g->data = copy;
	g->len = len;
	g->end = end;
	return 0;
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
