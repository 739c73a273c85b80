// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the packet parser, and what takes its output: the
 * checksum judgement, the builders (SACK stripping, edits that must keep a
 * checksum exactly as right or wrong as it was, slicing).  Any input must be classified without
 * a crash or a sanitizer report, and a packet that parses must keep the
 * parser's promises (offsets inside the packet, lengths adding up).  The
 * same bytes are also parsed as a copy of only the first bytes of a
 * longer packet (headers_only): no byte past the copy is read (ASan sees
 * the copy as a buffer of its own), and a copy that holds the whole packet
 * parses exactly as the packet does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "admit.h"
#include "build.h"
#include "csum.h"
#include "packet.h"

#include "promise.h"

static int count_slice(void *ctx, const uint8_t *pkt, uint32_t len)
{
	struct pkt q;

	/* every slice we build must itself parse */
	PROMISE(pkt_parse(pkt, len, &q) == PKT_OK);
	(*(int *)ctx)++;
	return 0;
}

/* The first `captured` bytes alone, as the kernel copies them with a copy range, of a packet `full` long. */
static void headers_only(const uint8_t *data, size_t size, size_t captured, size_t full)
{
	uint8_t *copy = malloc(captured ? captured : 1);
	struct pkt h, whole;
	enum pkt_result r, rw;
	bool short_copy;

	PROMISE(copy);
	memcpy(copy, data, captured);
	r = pkt_parse_headers(copy, captured, full, &h, &short_copy);
	PROMISE((unsigned int)r < PKT__RESULT_COUNT);
	if (r == PKT_OK) {
		PROMISE(h.captured <= captured && h.captured <= h.len && h.len <= full);
		PROMISE(h.payload_off <= h.captured && h.payload_off + h.payload_len == h.len);
		if (h.captured < h.len) {
			enum admit_csum c = admit_checksum(&h, false, true, 2);

			/* nothing it cannot see is called right (a bad IPv4 header is there to see) */
			PROMISE(c == CSUM_UNVERIFIABLE || c == CSUM_BAD);
		}
	}
	if (captured == size && full == size) {
		rw = pkt_parse(data, size, &whole);
		PROMISE(rw == r && !short_copy);
		PROMISE(r != PKT_OK || (whole.len == h.len && whole.seq == h.seq && whole.payload_len == h.payload_len));
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[65536 + 64], scratch[4096];
	struct pkt p;
	enum pkt_result r;
	int n = 0;

	if (size) {
		/* the copy: a share of the input named by its last byte; the packet: the input's length, or more */
		headers_only(data, size, size * data[size - 1] / 255, size + (data[0] & 1 ? 1000 : 0));
		headers_only(data, size, size, size);
	}
	r = pkt_parse(data, size, &p);
	PROMISE((unsigned int)r < PKT__RESULT_COUNT);
	if (r != PKT_OK)
		return 0;
	PROMISE(p.len <= size);
	PROMISE(p.tcp_off + p.tcp_hlen == p.payload_off);
	PROMISE(p.payload_off + p.payload_len == p.len);
	PROMISE(p.nsack <= PKT_MAX_SACK);
	PROMISE(!p.sack_opt_off || (p.sack_opt_off >= p.tcp_off + 20 && p.sack_opt_off + p.sack_opt_len <= p.payload_off));
	PROMISE((unsigned int)admit_checksum(&p, data[0] & 1, data[0] & 2, data[0] >> 6) <= CSUM_BAD);
	if (p.len <= sizeof(out)) {
		bool ok = csum_tcp_ok(p.data + p.tcp_off, p.len - p.tcp_off, p.family, p.src, p.dst);
		struct pkt q;

		build_strip_sack(&p, out);
		PROMISE(pkt_parse(out, p.len, &q) == PKT_OK && q.nsack == 0 && q.seq == p.seq);
		/* an edit never makes a wrong checksum right, nor a right one wrong (RFC 1624) */
		build_edit_ack(&p, false, p.sack, p.nsack > 2 ? 2 : p.nsack, data[size - 1], out);
		PROMISE(pkt_parse(out, p.len, &q) == PKT_OK);
		PROMISE(csum_tcp_ok(q.data + q.tcp_off, q.len - q.tcp_off, q.family, q.src, q.dst) == ok);
	}
	if (p.payload_len && p.payload_off + 536 <= sizeof(scratch))
		PROMISE(build_slices(&p, 536, NULL, scratch, sizeof(scratch), count_slice, &n) >= 1);
	return 0;
}
