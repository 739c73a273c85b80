// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "seq.h"

/* ---------------------------------------------------------------- keys */

void flow_key_of(const struct pkt *p, enum pep_dir dir, struct flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = p->family;
	if (dir == DIR_TO_WIRELESS) {
		memcpy(k->fh, p->src, p->addr_len);
		memcpy(k->wh, p->dst, p->addr_len);
		k->fh_port = p->sport;
		k->wh_port = p->dport;
	} else {
		memcpy(k->fh, p->dst, p->addr_len);
		memcpy(k->wh, p->src, p->addr_len);
		k->fh_port = p->dport;
		k->wh_port = p->sport;
	}
}

static uint32_t flow_hash(const struct flow_table *t, const struct flow_key *k)
{
	uint64_t h = t->seed, w;
	const uint8_t *b = (const uint8_t *)k;
	size_t i;

	/* the key is padded and zeroed: hash it as whole 8-byte words */
	for (i = 0; i + 8 <= sizeof(*k); i += 8) {
		memcpy(&w, b + i, 8);
		h = hash_mix(h, w);
	}
	for (; i < sizeof(*k); i++)
		h = hash_mix(h, b[i]);
	return (uint32_t)(h ^ (h >> 32)) & (t->nbuckets - 1);
}

/* ---------------------------------------------------------------- table */

int flow_table_init(struct flow_table *t, uint32_t max_flows, uint64_t seed, uint64_t total_cache,
		    uint32_t flow_cache)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	if (max_flows == 0)
		return -1;
	t->nbuckets = 1;
	while (t->nbuckets < max_flows && t->nbuckets < (1u << 30))
		t->nbuckets <<= 1;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	t->pool = calloc(max_flows, sizeof(*t->pool));
	t->heap = calloc(max_flows, sizeof(*t->heap));
	if (!t->buckets || !t->pool || !t->heap || hop_table_init(&t->hops, hash_mix(seed, 1)) < 0) {
		flow_table_free(t);
		return -1;
	}
	for (i = 0; i < max_flows; i++) {
		t->pool[i].hnext = t->free_list;
		t->free_list = &t->pool[i];
	}
	t->max_flows = max_flows;
	t->lru.lru_next = t->lru.lru_prev = &t->lru;
	t->young.lru_next = t->young.lru_prev = &t->young;
	t->seed = seed;
	t->budget.limit = total_cache;
	t->budget.flow_limit = flow_cache;
	return 0;
}

void flow_table_free(struct flow_table *t)
{
	struct flow *f, *next;

	if (t->lru.lru_next) {
		for (f = flow_iter_next(t, &t->lru); f; f = next) {
			next = flow_iter_next(t, f);
			segq_clear(&f->cache, &t->budget);
		}
	}
	cache_pool_drain(&t->budget);
	free(t->buckets);
	free(t->pool);
	free(t->heap);
	hop_table_free(&t->hops);
	memset(t, 0, sizeof(*t));
}

struct flow *flow_lookup(struct flow_table *t, const struct flow_key *k)
{
	struct flow *f;

	for (f = t->buckets[flow_hash(t, k)]; f; f = f->hnext)
		if (memcmp(&f->key, k, sizeof(*k)) == 0)
			return f;
	return NULL;
}

static void lru_unlink(struct flow *f)
{
	f->lru_prev->lru_next = f->lru_next;
	f->lru_next->lru_prev = f->lru_prev;
}

static void lru_push_head(struct flow_table *t, struct flow *f)
{
	struct flow *list = f->young ? &t->young : &t->lru;

	f->lru_next = list->lru_next;
	f->lru_prev = list;
	list->lru_next->lru_prev = f;
	list->lru_next = f;
}

struct flow *flow_create(struct flow_table *t, const struct flow_key *k, uint64_t now)
{
	struct flow *f = t->free_list;
	uint32_t b;

	if (!f)
		return NULL;
	t->free_list = f->hnext;
	memset(f, 0, sizeof(*f));
	f->key = *k;
	f->heap_idx = FLOW_NO_HEAP;
	f->created_ns = now;
	f->last_ns = now;
	f->id = ++t->next_id;
	f->young = true;
	b = flow_hash(t, k);
	f->hnext = t->buckets[b];
	t->buckets[b] = f;
	lru_push_head(t, f);
	t->nflows++;
	t->nyoung++;
	return f;
}

struct flow *flow_oldest_embryonic(struct flow_table *t)
{
	return t->young.lru_prev == &t->young ? NULL : t->young.lru_prev;
}

void flow_restart(struct flow_table *t, struct flow *f)
{
	if (f->young)
		return;
	lru_unlink(f);
	f->young = true;
	t->nyoung++;
	lru_push_head(t, f);
}

void flow_establish(struct flow_table *t, struct flow *f)
{
	if (!f->young)
		return;
	lru_unlink(f);
	f->young = false;
	t->nyoung--;
	lru_push_head(t, f);
}

void flow_destroy(struct flow_table *t, struct flow *f)
{
	struct flow **pp = &t->buckets[flow_hash(t, &f->key)];

	while (*pp && *pp != f)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = f->hnext;
	flow_timer_cancel(t, f);
	lru_unlink(f);
	segq_clear(&f->cache, &t->budget);
	if (f->young)
		t->nyoung--;
	memset(f, 0, sizeof(*f));
	f->hnext = t->free_list;
	t->free_list = f;
	t->nflows--;
}

void flow_touch(struct flow_table *t, struct flow *f, uint64_t now)
{
	f->last_ns = now;
	if (f->lru_prev != (f->young ? &t->young : &t->lru)) {
		lru_unlink(f);
		lru_push_head(t, f);
	}
}

struct flow *flow_oldest_idle(struct flow_table *t, uint64_t now, uint64_t idle_ns)
{
	struct flow *a = t->lru.lru_prev == &t->lru ? NULL : t->lru.lru_prev;
	struct flow *b = t->young.lru_prev == &t->young ? NULL : t->young.lru_prev;
	struct flow *f = !a ? b : !b ? a : a->last_ns <= b->last_ns ? a : b;

	if (!f || now - f->last_ns < idle_ns)
		return NULL;
	return f;
}

/* ---------------------------------------------------------------- timer heap */

static void heap_swap(struct flow_table *t, uint32_t a, uint32_t b)
{
	struct flow *fa = t->heap[a], *fb = t->heap[b];

	t->heap[a] = fb;
	t->heap[b] = fa;
	fa->heap_idx = b;
	fb->heap_idx = a;
}

static void heap_up(struct flow_table *t, uint32_t i)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (t->heap[parent]->deadline <= t->heap[i]->deadline)
			break;
		heap_swap(t, i, parent);
		i = parent;
	}
}

static void heap_down(struct flow_table *t, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < t->heap_len && t->heap[l]->deadline < t->heap[m]->deadline)
			m = l;
		if (r < t->heap_len && t->heap[r]->deadline < t->heap[m]->deadline)
			m = r;
		if (m == i)
			return;
		heap_swap(t, i, m);
		i = m;
	}
}

void flow_timer_cancel(struct flow_table *t, struct flow *f)
{
	uint32_t i = f->heap_idx;

	if (i == FLOW_NO_HEAP)
		return;
	t->heap_len--;
	if (i != t->heap_len) {
		heap_swap(t, i, t->heap_len);
		heap_up(t, i);
		heap_down(t, i);
	}
	f->heap_idx = FLOW_NO_HEAP;
	f->deadline = 0;
}

void flow_timer_set(struct flow_table *t, struct flow *f, uint64_t deadline)
{
	if (deadline == 0)
		deadline = 1;	/* 0 means "no timer" */
	if (f->heap_idx == FLOW_NO_HEAP) {
		f->deadline = deadline;
		f->heap_idx = t->heap_len;
		t->heap[t->heap_len++] = f;
		heap_up(t, f->heap_idx);
		return;
	}
	f->deadline = deadline;
	heap_up(t, f->heap_idx);
	heap_down(t, f->heap_idx);
}

uint64_t flow_timer_next(const struct flow_table *t)
{
	return t->heap_len ? t->heap[0]->deadline : 0;
}

struct flow *flow_timer_expired(struct flow_table *t, uint64_t now)
{
	struct flow *f;

	if (!t->heap_len || t->heap[0]->deadline > now)
		return NULL;
	f = t->heap[0];
	flow_timer_cancel(t, f);
	return f;
}

/* ---------------------------------------------------------------- connection facts */

/* Does ack acknowledge, for the first time, something in (isn, nxt]: bytes the other side really sent? */
static bool acks_sent(const struct pkt *p, uint32_t isn, uint32_t nxt)
{
	return (p->flags & (TCPF_ACK | TCPF_SYN | TCPF_RST)) == TCPF_ACK && seq_after(p->ack, isn) &&
	       seq_leq(p->ack, nxt);
}

void conn_observe(struct conn *c, const struct pkt *p, enum pep_dir dir)
{
	if (p->flags & TCPF_RST)
		c->closed = true;
	if (dir == DIR_TO_WIRELESS) {
		if (p->flags & TCPF_SYN) {
			c->fh_syn = true;
			c->fh_sack_perm = p->sack_permitted;
			c->fh_ts = p->has_ts;
			c->fh_wscale = p->has_wscale;
			c->fh_isn = p->seq;
			c->fh_nxt = pkt_end(p);
			c->fh_started = true;
		} else if (!c->fh_started && c->midstream && p->payload_len) {
			/* adopted mid-stream: what the wireless host acknowledges must be beyond this */
			c->fh_isn = p->seq - 1;
			c->fh_nxt = pkt_end(p);
			c->fh_started = true;
		}
		if (c->fh_started && seq_after(pkt_end(p), c->fh_nxt))
			c->fh_nxt = pkt_end(p);
		/* the fixed host acknowledges the wireless host's SYN (a connection it opened) */
		if (!c->established && c->wh_syn && acks_sent(p, c->wh_isn, c->wh_nxt))
			c->established = true;
		if (p->payload_len > c->max_payload)
			c->max_payload = p->payload_len;
		if (p->has_ts && (!c->fh_has_ts || seq_after(p->tsval, c->fh_tsval))) {
			c->fh_tsval = p->tsval;
			c->fh_has_ts = true;
		}
		return;
	}
	if (p->flags & TCPF_SYN) {
		c->wh_syn = true;
		c->wh_isn = p->seq;
		c->wh_sack_perm = p->sack_permitted;
		c->wh_ts = p->has_ts;
		c->wh_wscale_seen = p->has_wscale;
		c->wh_wscale = p->wscale;
		if (p->has_mss)
			c->wh_mss = p->mss;
	}
	/* the wireless host acknowledges the fixed host's SYN, or data of a flow adopted mid-stream */
	if (!c->established && c->fh_started && acks_sent(p, c->fh_isn, c->fh_nxt))
		c->established = true;
	if (p->nsack)
		c->sack_seen = true;
	if (!c->wh_seen || seq_after(pkt_end(p), c->wh_nxt))
		c->wh_nxt = pkt_end(p);
	c->wh_seen = true;
	c->wh_window = p->window;
	/* the newest timestamp only: an older TSval could fail the sender's PAWS check */
	if (p->has_ts && (!c->wh_has_ts || seq_geq(p->tsval, c->wh_tsval))) {
		c->wh_tsval = p->tsval;
		c->wh_tsecr = p->tsecr;
		c->wh_has_ts = true;
	}
}
