// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the packet parser, and the builders that take its
 * output (SACK stripping, slicing).  Any input must be classified without
 * a crash or a sanitizer report, and a packet that parses must keep the
 * parser's promises (offsets inside the packet, lengths adding up).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "packet.h"

#define PROMISE(x)                      \
	do {                            \
		if (!(x))               \
			__builtin_trap(); \
	} while (0)

static int count_slice(void *ctx, const uint8_t *pkt, uint32_t len)
{
	struct pkt q;

	/* every slice we build must itself parse */
	PROMISE(pkt_parse(pkt, len, &q) == PKT_OK);
	(*(int *)ctx)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[65536 + 64], scratch[4096];
	struct pkt p;
	enum pkt_result r;
	int n = 0;

	r = pkt_parse(data, size, &p);
	PROMISE((unsigned int)r < PKT__RESULT_COUNT);
	if (r != PKT_OK)
		return 0;
	PROMISE(p.len <= size);
	PROMISE(p.tcp_off + p.tcp_hlen == p.payload_off);
	PROMISE(p.payload_off + p.payload_len == p.len);
	PROMISE(p.nsack <= PKT_MAX_SACK);
	PROMISE(!p.sack_opt_off || (p.sack_opt_off >= p.tcp_off + 20 && p.sack_opt_off + p.sack_opt_len <= p.payload_off));
	if (p.len <= sizeof(out)) {
		struct pkt q;

		build_strip_sack(&p, out);
		PROMISE(pkt_parse(out, p.len, &q) == PKT_OK && q.nsack == 0 && q.seq == p.seq);
	}
	if (p.payload_len && p.payload_off + 536 <= sizeof(scratch))
		PROMISE(build_slices(&p, 536, NULL, scratch, sizeof(scratch), count_slice, &n) >= 1);
	return 0;
}
