// SPDX-License-Identifier: GPL-2.0-only
/* The segment cache: order, lookup, acknowledgement, the bounds, the pool and shared copies. */
#include "tcase.h"

static void basics(void)
{
	struct cache_budget b = { .limit = 100000, .flow_limit = 5000 };
	struct segq q = { 0 };
	uint8_t pkt[1000] = { 0 };
	struct seg *g;
	uint32_t i;

	/* out of order inserts end up sorted; wrap-around sequence numbers included */
	static const uint32_t seqs[] = { 0xfffffc18u, 0xfffff830u, 1000, 0 };

	for (i = 0; i < 4; i++)
		CHECK(segq_insert(&q, &b, seqs[i], seqs[i] + 1000, pkt, 1000, &g) == CACHE_INSERTED, "insert %u", i);
	CHECK(q.count == 4 && q.bytes == 4000 && b.bytes == 4000 && b.packets == 4, "accounting");
	CHECK(segq_at(&q, 0)->seq == 0xfffff830u && segq_at(&q, 3)->seq == 1000, "sorted across the wrap");
	CHECK(segq_insert(&q, &b, 1000, 2000, pkt, 1000, &g) == CACHE_DUPLICATE && g == segq_at(&q, 3), "duplicate");
	CHECK(segq_insert(&q, &b, 2000, 3000, pkt, 1000, &g) == CACHE_INSERTED, "fifth fits (5000)");
	CHECK(segq_insert(&q, &b, 3000, 4000, pkt, 1000, &g) == CACHE_FULL && !g, "sixth is over the flow bound");
	CHECK(segq_find(&q, 1500) == 3 && segq_find(&q, 2500) == 4 && segq_find(&q, 0xfffffc18u + 10) == 1 && segq_find(&q, 3000) == -1,
	      "find");
	CHECK(segq_ack(&q, &b, 0xfffffc18u + 1000) == 2 && q.count == 3 && b.bytes == 3000, "ack across the wrap");
	CHECK(segq_ack(&q, &b, 500) == 0, "a partial ACK frees nothing");
	g = segq_at(&q, 1);
	CHECK(segq_replace(&q, &b, g, g->end, pkt, 600) == 0 && g->len == 600 && q.bytes == 2600 && b.bytes == 2600,
	      "a replacement is charged its own size");
	CHECK(segq_replace(&q, &b, g, g->end, pkt, 1000 + b.flow_limit) < 0 && g->len == 600, "... within the bound");
	segq_remove(&q, &b, 1);
	CHECK(q.count == 2 && q.bytes == 2000 && b.bytes == 2000 && segq_at(&q, 1)->seq == 2000, "remove");
	segq_clear(&q, &b);
	CHECK(b.bytes == 0 && b.packets == 0 && q.count == 0, "clear");
	cache_pool_drain(&b);
}

static void total_bound_and_growth(void)
{
	/* the total bound counts memory: two rings of 16 descriptors and three 1000-byte copies */
	struct cache_budget b = { .limit = 2 * cache_alloc_size(16 * sizeof(struct seg)) + 3 * cache_charge(1000),
				  .flow_limit = 1u << 30 };
	struct segq q1 = { 0 }, q2 = { 0 }, big = { 0 };
	uint8_t pkt[1000] = { 0 };
	struct seg *g;
	uint32_t i;

	CHECK(segq_insert(&q1, &b, 0, 1000, pkt, 1000, &g) == CACHE_INSERTED, "q1");
	CHECK(segq_insert(&q2, &b, 0, 1000, pkt, 1000, &g) == CACHE_INSERTED, "q2");
	CHECK(segq_insert(&q2, &b, 1000, 2000, pkt, 1000, &g) == CACHE_INSERTED, "q2 again");
	CHECK(segq_insert(&q1, &b, 1000, 2000, pkt, 1000, &g) == CACHE_FULL, "the total bound is shared");
	CHECK(b.refused_total == 1 && b.refused_flow_bytes == 0, "counted as the total's refusal");
	segq_clear(&q1, &b);
	segq_clear(&q2, &b);
	CHECK(b.mem == 0 && b.bytes == 0, "everything given back: %llu", (unsigned long long)b.mem);
	CHECK(b.pool.mem == 3 * cache_charge(1000) && b.pool.nfree[9 - 1] + b.pool.nfree[9] == 3,
	      "the three copies wait in the pool, charged: %llu", (unsigned long long)b.pool.mem);
	b.limit = 1u << 30;
	for (i = 0; i < 1000; i++)
		segq_insert(&big, &b, i * 10, i * 10 + 10, pkt, 10, &g);
	CHECK(big.count == 1000 && big.cap >= 1000, "grows past its first ring");
	for (i = 0; i < 1000; i++)
		if (segq_at(&big, i)->seq != i * 10)
			break;
	CHECK(i == 1000, "order kept while growing (%u)", i);
	segq_clear(&big, &b);
	cache_pool_drain(&b);
	CHECK(b.pool.mem == 0, "drained");
}

/*
 * A flood of tiny segments: each costs far more memory than its bytes, and
 * the flow's segment bound stops it before its byte bound would.
 */
static void tiny_segments(void)
{
	struct cache_budget b = { .limit = 1u << 20, .flow_limit = 256 * 1024, .seg_limit = 100 };
	struct segq q = { 0 };
	uint8_t pkt[41] = { 0 };	/* IPv4 + TCP + 1 byte */
	struct seg *g;
	uint32_t i, inserted = 0;

	for (i = 0; i < 1000; i++)
		inserted += segq_insert(&q, &b, i, i + 1, pkt, sizeof(pkt), &g) == CACHE_INSERTED;
	CHECK(inserted == 100 && q.count == 100, "the segment bound holds: %u cached", inserted);
	CHECK(b.refused_flow_segments == 900 && b.refused_flow_bytes == 0 && b.refused_total == 0,
	      "900 refusals, each counted by its reason: %llu", (unsigned long long)b.refused_flow_segments);
	CHECK(b.mem == 100 * cache_charge(41) + cache_alloc_size(128 * sizeof(struct seg)),
	      "memory charged as allocated, the ring included: %llu", (unsigned long long)b.mem);
	CHECK(b.bytes == 4100 && q.bytes == 4100, "packet bytes apart from memory");
	CHECK(segq_ack(&q, &b, 100) == 100 && q.cap == 0 && q.ring == NULL && b.mem == 0,
	      "an emptied queue gives its ring back");
	/* the total bound on memory, reached by overhead long before the bytes would reach it */
	b.limit = 64 * 1024;
	b.seg_limit = 0;
	for (i = 0, inserted = 0; i < 5000; i++)
		inserted += segq_insert(&q, &b, i, i + 1, pkt, sizeof(pkt), &g) == CACHE_INSERTED;
	CHECK(b.mem + b.pool.mem <= b.limit && b.refused_total > 0, "memory within the total bound: %llu <= %llu",
	      (unsigned long long)(b.mem + b.pool.mem), (unsigned long long)b.limit);
	CHECK(inserted < 64 * 1024 / 41 / 2, "tiny segments are charged their overhead: %u fit", inserted);
	segq_clear(&q, &b);
	CHECK(b.mem == 0 && b.packets == 0, "clear gives everything back");
	cache_pool_drain(&b);
}

/* A steady flow: after the first window, every copy comes from the pool; what stays unused goes back. */
static void pool_reuse_and_trim(void)
{
	struct cache_budget b = { .limit = 1u << 20, .flow_limit = 1u << 20 };
	struct segq q = { 0 };
	uint8_t pkt[1500] = { 0 };
	struct seg *g;
	uint32_t i, seq = 0;

	for (i = 0; i < 100; i++, seq += 1448)
		segq_insert(&q, &b, seq, seq + 1448, pkt, sizeof(pkt), &g);
	CHECK(b.pool.fresh == 100 && b.pool.reused == 0, "the first window is malloc'ed");
	for (i = 0; i < 1000; i++, seq += 1448) {
		segq_ack(&q, &b, seq - 100 * 1448 + 1448);	/* one out, one in: a window of 100 */
		segq_insert(&q, &b, seq, seq + 1448, pkt, sizeof(pkt), &g);
	}
	CHECK(b.pool.fresh == 100 && b.pool.reused == 1000, "then no malloc: %llu fresh, %llu reused",
	      (unsigned long long)b.pool.fresh, (unsigned long long)b.pool.reused);
	CHECK(b.mem + b.pool.mem == 100 * cache_charge(1500) + cache_alloc_size(128 * sizeof(struct seg)),
	      "memory is the window's, not more: %llu", (unsigned long long)(b.mem + b.pool.mem));
	segq_clear(&q, &b);
	cache_pool_trim(&b);
	CHECK(b.pool.mem == 100 * cache_charge(1500), "a trim keeps what the last period took (100)");
	cache_pool_trim(&b);
	CHECK(b.pool.mem == 0 && b.pool.nfree[9] == 0, "the next gives back what stayed unused");
	/* the free lists count against the total: a copy of another size makes room by freeing them */
	b.limit = 10 * cache_charge(1500) + cache_alloc_size(16 * sizeof(struct seg));
	for (i = 0; i < 10; i++)
		segq_insert(&q, &b, i * 1448, i * 1448 + 1448, pkt, sizeof(pkt), &g);
	segq_clear(&q, &b);
	CHECK(b.pool.mem == 10 * cache_charge(1500) && b.mem == 0, "ten in the pool, none in use");
	CHECK(segq_insert(&q, &b, 0, 100, pkt, 140, &g) == CACHE_INSERTED, "a small copy finds room");
	CHECK(b.mem + b.pool.mem <= b.limit && b.pool.nfree[9] < 10, "by freeing a big one: %llu <= %llu",
	      (unsigned long long)(b.mem + b.pool.mem), (unsigned long long)b.limit);
	segq_clear(&q, &b);
	cache_pool_drain(&b);
}

/*
 * A GSO super-packet cached as slices of one copy: each slice its own
 * segment (acknowledged and removed on its own), the copy freed with the
 * last of them, each charged to the flow as a packet of its own.
 */
static void shared_slices(void)
{
	struct cache_budget b = { .limit = 1u << 20, .flow_limit = 1u << 20 };
	struct segq q = { 0 };
	static uint8_t super[40 + 4 * 1000];
	struct seg_buf *buf;
	struct seg *g;
	uint32_t i;

	buf = seg_buf_new(&b, super, sizeof(super));
	CHECK(buf && buf->refs == 1 && b.mem == cache_charge(sizeof(super)), "one copy, charged once");
	for (i = 0; i < 4; i++)
		CHECK(segq_insert_buf(&q, &b, 1000 * i, 1000 * i + 1000, buf, 1040, &g) == CACHE_INSERTED && g->buf == buf,
		      "slice %u", i);
	seg_buf_put(&b, buf);
	CHECK(buf->refs == 4 && q.count == 4 && q.bytes == 4 * 1040, "four slices share it, each charged 1040 bytes");
	CHECK(segq_insert_buf(&q, &b, 2000, 3000, buf, 1040, &g) == CACHE_DUPLICATE && g == segq_at(&q, 2),
	      "a slice cached already is a duplicate");
	segq_remove(&q, &b, 2);
	CHECK(buf->refs == 3 && b.mem > 0, "a lost slice's repair acknowledged: the copy stays for the rest");
	CHECK(segq_ack(&q, &b, 2000) == 2 && buf->refs == 1, "two acknowledged");
	CHECK(b.pool.mem == 0, "the copy is still in use");
	CHECK(segq_ack(&q, &b, 4000) == 1 && q.count == 0 && b.mem == 0 && b.pool.mem == cache_charge(sizeof(super)),
	      "the last slice gives the copy back to the pool");
	cache_pool_drain(&b);
}

int main(void)
{
	basics();
	total_bound_and_growth();
	tiny_segments();
	pool_reuse_and_trim();
	shared_slices();
	return tc_report("test_cache");
}
