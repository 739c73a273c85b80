// SPDX-License-Identifier: GPL-2.0-only
/* The wireless hops' shared minimum: the windowed minimum, the key, two ways per pair, the bound. */
#include "tcase.h"

#define NS_PER_MS 1000000ULL
#define NS_PER_S 1000000000ULL
#define W (10 * NS_PER_S)	/* the window snoop uses */

static void host(uint8_t addr[16], uint32_t n)
{
	memset(addr, 0, 16);
	addr[0] = 10;
	addr[1] = (uint8_t)(n >> 16);
	addr[2] = (uint8_t)(n >> 8);
	addr[3] = (uint8_t)n;
}

/* One host, a table of samples: (time ms, rtt ms) -> the hop's minimum (ms). */
static void windowed_minimum(void)
{
	static const struct {
		const char *name;
		uint64_t t_ms, rtt_ms, expect_ms;
	} steps[] = {
		{ "the first sample", 0, 30, 30 },
		{ "a higher one keeps it", 100, 50, 30 },
		{ "a lower one takes it", 200, 5, 5 },
		{ "an equal one refreshes it", 9000, 5, 5 },
		{ "within the window of the refresh", 18999, 40, 5 },
		{ "older than the window: relearned", 19001, 40, 40 },
		{ "and lowered again", 19100, 20, 20 },
	};
	struct hop_table t;
	uint8_t a[16];
	size_t i;

	CHECK(hop_table_init(&t, 7) == 0, "init");
	host(a, 1);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		uint64_t got = hop_rtt_sample(&t, 4, a, steps[i].rtt_ms * NS_PER_MS,
					      NS_PER_S + steps[i].t_ms * NS_PER_MS, W);

		CHECK(got == steps[i].expect_ms * NS_PER_MS, "%s: %llu ns, expected %llu ms", steps[i].name,
		      (unsigned long long)got, (unsigned long long)steps[i].expect_ms);
	}
	hop_table_free(&t);
	CHECK(!t.slots && hop_rtt_sample(&t, 4, a, 1, 1, W) == 0, "no table: nothing shared");
}

static void keys(void)
{
	struct hop_table t;
	uint8_t a[16], b[16];

	CHECK(hop_table_init(&t, 7) == 0, "init");
	host(a, 1);
	host(b, 2);
	hop_rtt_sample(&t, 4, a, 5 * NS_PER_MS, NS_PER_S, W);
	CHECK(hop_rtt_sample(&t, 4, b, 30 * NS_PER_MS, NS_PER_S, W) == 30 * NS_PER_MS, "another host has its own");
	CHECK(hop_rtt_sample(&t, 6, a, 30 * NS_PER_MS, NS_PER_S, W) == 30 * NS_PER_MS,
	      "the same bytes as an IPv6 address are another host");
	CHECK(hop_rtt_sample(&t, 4, a, 30 * NS_PER_MS, NS_PER_S, W) == 5 * NS_PER_MS, "the first kept its own");
	hop_table_free(&t);
}

/* Three hosts whose pair is the same: two keep their entries, the third takes the one heard from longer ago. */
static void two_ways(void)
{
	uint8_t addr[3][16];
	struct hop_table t;
	uint32_t n, found = 0, pair;

	CHECK(hop_table_init(&t, 7) == 0, "init");
	host(addr[0], 0);
	pair = hop_pair(&t, 4, addr[0]);
	CHECK(pair % 2 == 0 && pair < HOP_SLOTS, "a pair starts at an even slot: %u", pair);
	for (n = 1; n < 1000000 && found < 2; n++) {
		host(addr[found + 1], n);
		if (hop_pair(&t, 4, addr[found + 1]) == pair)
			found++;
	}
	CHECK(found == 2, "three addresses sharing a pair found among a million");
	hop_rtt_sample(&t, 4, addr[0], 5 * NS_PER_MS, 1 * NS_PER_S, W);
	hop_rtt_sample(&t, 4, addr[1], 6 * NS_PER_MS, 2 * NS_PER_S, W);
	CHECK(hop_rtt_sample(&t, 4, addr[0], 50 * NS_PER_MS, 3 * NS_PER_S, W) == 5 * NS_PER_MS &&
	      hop_rtt_sample(&t, 4, addr[1], 50 * NS_PER_MS, 3 * NS_PER_S, W) == 6 * NS_PER_MS,
	      "two hosts of one pair both keep their minimum");
	/* addr[0]'s minimum dates from 1 s, addr[1]'s from 2 s: the third takes addr[0]'s way */
	CHECK(hop_rtt_sample(&t, 4, addr[2], 7 * NS_PER_MS, 4 * NS_PER_S, W) == 7 * NS_PER_MS, "the third");
	CHECK(hop_rtt_sample(&t, 4, addr[1], 50 * NS_PER_MS, 5 * NS_PER_S, W) == 6 * NS_PER_MS,
	      "the host heard from last keeps its entry");
	CHECK(hop_rtt_sample(&t, 4, addr[0], 50 * NS_PER_MS, 6 * NS_PER_S, W) == 50 * NS_PER_MS,
	      "the other starts again from its own sample");
	hop_table_free(&t);
}

/* A flood of hosts stays in the table's slots: no allocation after init. */
static void bounded(void)
{
	struct hop_table t;
	struct hop *slots;
	uint8_t a[16];
	uint32_t n, used = 0;

	CHECK(hop_table_init(&t, 7) == 0, "init");
	slots = t.slots;
	for (n = 0; n < 100000; n++) {
		host(a, n);
		hop_rtt_sample(&t, 4, a, (n % 50 + 1) * NS_PER_MS, NS_PER_S + n, W);
	}
	for (n = 0; n < HOP_SLOTS; n++)
		used += t.slots[n].family != 0;
	CHECK(t.slots == slots && used == HOP_SLOTS, "100 000 hosts fill the %u slots, no more: %u", HOP_SLOTS, used);
	hop_table_free(&t);
}

int main(void)
{
	windowed_minimum();
	keys();
	two_ways();
	bounded();
	return tc_report("test_hop");
}
