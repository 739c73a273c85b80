// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: arbitrary packet sequences through every filter.
 *
 * The input is a filter choice (from the registry) and a few knobs, then 8-byte records, each
 * one a data segment, an ACK (with up to two SACK blocks) or a clock step,
 * all near one connection's sequence space so that the interesting paths
 * (holes, dupacks, copies, timers) are reached.  After every step the
 * cache must be consistent: sorted, its bytes charged to the budget, and
 * every SEND_SEGMENT action naming a cached segment.  Some data segments
 * are GSO super-packets (up to 16 000 bytes), cached as slices.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/tcase.h"
#include "seq.h"

#include "promise.h"

static void check(struct harness *h, const struct pep_out *out)
{
	struct flow *f = h->flow;
	uint32_t i, bytes = 0;

	for (i = 0; i < f->cache.count; i++) {
		const struct seg *g = segq_at(&f->cache, i);

		bytes += g->len;
		PROMISE(g->buf && g->buf->len && g->len && g->buf->refs);
		if (i)
			PROMISE(seq_before(segq_at(&f->cache, i - 1)->seq, g->seq));
	}
	PROMISE(bytes == f->cache.bytes && h->ft.budget.bytes == bytes);
	PROMISE(f->cache.bytes <= h->cfg.flow_cache_bytes);
	if (out->verdict == VERDICT_INJECT)
		PROMISE(segq_find(&f->cache, out->inject_seq) >= 0 && seq_after(out->inject_end, out->inject_seq));
	for (i = 0; i < out->nact; i++) {
		if (out->act[i].type == ACTION_SEND_SEGMENT) {
			PROMISE(segq_find(&f->cache, out->act[i].seq) >= 0);
			PROMISE(out->act[i].copies >= 1 && out->act[i].copies <= 4);
		}
		/* a D-SACK block reports acknowledged data: below the ACK it comes with */
		if (out->act[i].type == ACTION_SEND_DSACK)
			PROMISE(seq_before(out->act[i].dsack.start, out->act[i].dsack.end) &&
				seq_leq(out->act[i].dsack.end, out->act[i].seq));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct harness h;
	struct pep_out out;
	size_t pos = 4, nfilters = 0;

	if (size < 4)
		return 0;
	while (pep_filters[nfilters])
		nfilters++;
	/* every filter of the registry (the low two bits choose among the first four, as the seeds assume) */
	h_init(&h, pep_filters[(data[0] & 3) % nfilters], (data[0] & 4) ? 6 : 4, data[0] & 8,
	       0xffff0000u + data[1] * 256u);
	h.cfg.copies = (data[2] & 3);
	if (data[2] & 4)
		h.cfg.copies = COPIES_AUTO;
	h.cfg.rtx_thresh = 1 + (data[2] >> 4 & 3);
	h.cfg.discount_copy_dupacks = data[2] & 8;
	h.cfg.dsack_dropped_rtx = data[2] & 0x40;
	h.cfg.reorder_window_percent = data[0] & 0x10 ? 25 : 0;
	if (data[2] & 0x80) {
		/* every ACK shown to the sender: its retransmissions race the local ones */
		h.cfg.drop_dupacks = data[0] & 0x20 ? DROP_DUPACKS_AUTO : DROP_DUPACKS_FALSE;
		h.cfg.hide_sack = false;
	}
	h.cfg.dupack_thresh = 3 + (data[3] & 7);
	h.cfg.flow_cache_bytes = 2048 + (data[3] >> 3) * 1024u;
	flow_table_free(&h.ft);
	flow_table_init(&h.ft, 4, 1, 1u << 20, (uint32_t)h.cfg.flow_cache_bytes);
	h_handshake(&h);
	for (; pos + 8 <= size; pos += 8) {
		const uint8_t *r = data + pos;
		uint32_t off = (uint32_t)(r[1] << 8 | r[2]) * 8;	/* relative sequence, 8-byte grain */
		/* up to 1400, or a GSO super-packet of up to 16 000 bytes */
		uint32_t len = r[3] & 0x8 ? (uint32_t)((r[3] >> 4) + 1) * 1000 : (uint32_t)(r[3] & 0x7) * 200;
		struct tpkt t = { .family = h.family, .ts = true, .tsval = (uint32_t)pos, .win = 1000 };

		h.now += (uint64_t)r[4] * 1000000ULL;	/* up to 255 ms per record */
		switch (r[0] & 3) {
		case 0:	/* data */
			t.from_fh = true;
			t.seq = h.isn_fh + 1 + off;
			t.ack = h.isn_wh + 1;
			t.flags = TCPF_ACK | ((r[0] & 4) ? TCPF_FIN : 0) | ((r[0] & 8) ? TCPF_RST : 0);
			t.len = len ? len : 1000;
			break;
		case 1:	/* ACK */
		case 2:
			t.from_fh = false;
			t.seq = h.isn_wh + 1;
			t.ack = h.isn_fh + 1 + off;
			t.flags = TCPF_ACK | ((r[0] & 8) ? TCPF_RST : 0);
			t.win = (r[0] & 4) ? 1000 + r[5] : 1000;
			t.nsack = (uint8_t)((r[0] >> 4) & 3) % 3;
			if (t.nsack >= 1) {
				t.sack[0].start = t.ack + (uint32_t)r[5] * 100 - 2000;
				t.sack[0].end = t.sack[0].start + (uint32_t)(r[6] + 1) * 100;
			}
			if (t.nsack >= 2) {
				t.sack[1].start = t.ack + (uint32_t)r[7] * 100;
				t.sack[1].end = t.sack[1].start + 1000;
			}
			break;
		default:	/* the clock: fire due timers */
			h_tick(&h, &out);
			check(&h, &out);
			h_sent(&h, &out, r[0] & 0x40);
			continue;
		}
		{
			/* like the daemon: timers due before this packet fire first */
			struct pep_out due;

			h_tick(&h, &due);
			check(&h, &due);
			h_sent(&h, &due, false);
		}
		h_packet(&h, &t, &out);
		check(&h, &out);
		h_sent(&h, &out, r[0] & 0x40);	/* sometimes the egress queue refuses */
	}
	h_free(&h);
	return 0;
}
