/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The wireless hops: what every flow to one wireless host shares.  The
 * hop's round trip without a queue is a property of the host (its link and
 * the radio's rate to it), not of a flow; a flow that starts while others
 * keep the radio's queue full never sees it itself and would take the
 * queue for the hop.  So each flow's minimum round trip is also folded into
 * its host's here, and the flow uses the lower of the two.
 *
 * Bounded by construction: HOP_SLOTS entries per flow table, two-way
 * set-associative by a seeded hash of the host's address, allocated once.
 * A host whose entry another host takes only loses the sharing (its flows
 * fall back to their own minimum); nothing else depends on an entry.
 */
#ifndef PEPD_HOP_H
#define PEPD_HOP_H
#include <stdint.h>

/* One step of the seeded hashes of the flow table and of this table. */
static inline uint64_t hash_mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

#define HOP_SLOTS 1024u	/* wireless hosts remembered per queue; an access point has far fewer */

struct hop {
	uint8_t family;		/* 0: a free slot */
	uint8_t addr[16];	/* the wireless host */
	uint64_t min_rtt_ns;	/* windowed minimum of the hop's round trip, over every flow to the host */
	uint64_t min_rtt_stamp;
};

struct hop_table {
	struct hop *slots;	/* HOP_SLOTS of them; NULL: no table, nothing shared */
	uint64_t seed;
};

int hop_table_init(struct hop_table *t, uint64_t seed);
void hop_table_free(struct hop_table *t);
/* The first of the two slots addr may take (even; the tests use it to make hosts collide). */
uint32_t hop_pair(const struct hop_table *t, uint8_t family, const uint8_t addr[16]);

/*
 * A round-trip sample r of the hop to the wireless host addr at now: the
 * hop's minimum is r if r is lower or the minimum is older than window_ns
 * (so a host that moved away is relearned).  Returns the hop's minimum
 * with r included, or 0 when t has no table.
 */
uint64_t hop_rtt_sample(struct hop_table *t, uint8_t family, const uint8_t addr[16], uint64_t r, uint64_t now,
			uint64_t window_ns);

#endif
