// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "seq.h"

#define SEGQ_MIN_CAP 16

static void seg_free(struct segq *q, struct cache_budget *b, struct seg *s)
{
	q->bytes -= s->len;
	b->bytes -= s->len;
	b->packets--;
	free(s->data);
	s->data = NULL;
}

static int segq_grow(struct segq *q)
{
	uint32_t ncap = q->cap ? q->cap * 2 : SEGQ_MIN_CAP, i;
	struct seg *ring;

	if (ncap < q->cap)
		return -1;
	ring = calloc(ncap, sizeof(*ring));
	if (!ring)
		return -1;
	for (i = 0; i < q->count; i++)
		ring[i] = *segq_at(q, i);
	free(q->ring);
	q->ring = ring;
	q->cap = ncap;
	q->head = 0;
	return 0;
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
	if ((uint64_t)q->bytes + len > b->flow_limit || b->bytes + len > b->limit)
		return CACHE_FULL;
	if (q->count == q->cap && segq_grow(q) < 0)
		return CACHE_NOMEM;
	copy = malloc(len);
	if (!copy)
		return CACHE_NOMEM;
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
	b->packets++;
	*out = s;
	return CACHE_INSERTED;
}

int segq_replace(struct segq *q, struct cache_budget *b, struct seg *g, uint32_t end, const uint8_t *pkt,
		 uint32_t len)
{
	uint8_t *copy;

	if ((uint64_t)q->bytes - g->len + len > b->flow_limit || b->bytes - g->len + len > b->limit)
		return -1;
	copy = malloc(len);
	if (!copy)
		return -1;
	memcpy(copy, pkt, len);
	q->bytes = q->bytes - g->len + len;
	b->bytes = b->bytes - g->len + len;
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
	return n;
}

void segq_clear(struct segq *q, struct cache_budget *b)
{
	while (q->count) {
		seg_free(q, b, segq_at(q, 0));
		q->head = (q->head + 1) & (q->cap - 1);
		q->count--;
	}
	free(q->ring);
	memset(q, 0, sizeof(*q));
}
