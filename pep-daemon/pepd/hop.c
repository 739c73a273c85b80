// SPDX-License-Identifier: GPL-2.0-only
/* The wireless hops' shared minimum round trip (hop.h). */
#include <stdlib.h>
#include <string.h>

#include "hop.h"

int hop_table_init(struct hop_table *t, uint64_t seed)
{
	t->seed = seed;
	t->slots = calloc(HOP_SLOTS, sizeof(*t->slots));
	return t->slots ? 0 : -1;
}

void hop_table_free(struct hop_table *t)
{
	free(t->slots);
	t->slots = NULL;
}

uint32_t hop_pair(const struct hop_table *t, uint8_t family, const uint8_t addr[16])
{
	uint64_t h = t->seed ^ family, w;
	int i;

	for (i = 0; i < 16; i += 8) {
		memcpy(&w, addr + i, 8);
		h = hash_mix(h, w);
	}
	return (uint32_t)(h ^ (h >> 32)) & (HOP_SLOTS - 2);
}

uint64_t hop_rtt_sample(struct hop_table *t, uint8_t family, const uint8_t addr[16], uint64_t r, uint64_t now,
			uint64_t window_ns)
{
	struct hop *pair, *h;

	if (!t->slots)
		return 0;
	/* two ways: two hosts of one access point that hash alike both keep their entry */
	pair = &t->slots[hop_pair(t, family, addr)];
	if (pair[0].family == family && !memcmp(pair[0].addr, addr, 16))
		h = &pair[0];
	else if (pair[1].family == family && !memcmp(pair[1].addr, addr, 16))
		h = &pair[1];
	else {
		/* a new host takes the way heard from longer ago */
		h = pair[0].min_rtt_stamp <= pair[1].min_rtt_stamp ? &pair[0] : &pair[1];
		h->family = family;
		memcpy(h->addr, addr, 16);
		h->min_rtt_ns = 0;
	}
	if (!h->min_rtt_ns || r <= h->min_rtt_ns || now - h->min_rtt_stamp > window_ns) {
		h->min_rtt_ns = r;
		h->min_rtt_stamp = now;
	}
	return h->min_rtt_ns;
}
