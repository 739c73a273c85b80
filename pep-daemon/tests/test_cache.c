// SPDX-License-Identifier: GPL-2.0-only
/* The segment cache: order, lookup, acknowledgement and the two bounds. */
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
}

static void total_bound_and_growth(void)
{
	struct cache_budget b = { .limit = 3000, .flow_limit = 1u << 30 };
	struct segq q1 = { 0 }, q2 = { 0 }, big = { 0 };
	uint8_t pkt[1000] = { 0 };
	struct seg *g;
	uint32_t i;

	CHECK(segq_insert(&q1, &b, 0, 1000, pkt, 1000, &g) == CACHE_INSERTED, "q1");
	CHECK(segq_insert(&q2, &b, 0, 1000, pkt, 1000, &g) == CACHE_INSERTED, "q2");
	CHECK(segq_insert(&q2, &b, 1000, 2000, pkt, 1000, &g) == CACHE_INSERTED, "q2 again");
	CHECK(segq_insert(&q1, &b, 1000, 2000, pkt, 1000, &g) == CACHE_FULL, "the total bound is shared");
	segq_clear(&q1, &b);
	segq_clear(&q2, &b);
	b.limit = 1u << 30;
	for (i = 0; i < 1000; i++)
		segq_insert(&big, &b, i * 10, i * 10 + 10, pkt, 10, &g);
	CHECK(big.count == 1000 && big.cap >= 1000, "grows past its first ring");
	for (i = 0; i < 1000; i++)
		if (segq_at(&big, i)->seq != i * 10)
			break;
	CHECK(i == 1000, "order kept while growing (%u)", i);
	segq_clear(&big, &b);
}

int main(void)
{
	basics();
	total_bound_and_growth();
	return tc_report("test_cache");
}
