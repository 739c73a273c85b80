/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Packets pepd writes itself, built as bytes in caller buffers (pure, no
 * I/O): ACKs on behalf of the wireless host, forwarded ACKs with their SACK
 * option blanked, and MSS-sized slices of a cached segment.
 */
#ifndef PEPD_BUILD_H
#define PEPD_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "packet.h"

struct ack_template {
	uint8_t family;		/* 4 or 6 */
	uint8_t src[16];	/* the wireless host */
	uint8_t dst[16];	/* the fixed host */
	uint16_t sport, dport;
	uint32_t seq;		/* the wireless host's next sequence number */
	uint16_t window;	/* its last advertised window, raw */
	bool has_ts;
	uint32_t tsval, tsecr;	/* echoed from its last segment: passes PAWS */
	/* a D-SACK block (RFC 2883) for [dsack_start, dsack_end) when they differ */
	uint32_t dsack_start, dsack_end;
};

#define BUILD_ACK_MAX (40 + 20 + 12 + 12)

/* Write a pure ACK carrying ack into out (BUILD_ACK_MAX bytes); returns its length. */
uint32_t build_ack(const struct ack_template *t, uint32_t ack, uint8_t *out);

/*
 * Edits of a packet pepd passes on (its verdict carries the new bytes).
 * The checksum is updated by the difference of the bytes changed (RFC
 * 1624), never recomputed: an ACK whose checksum is wrong would keep
 * its error (pepd passes those unchanged anyway; this holds even where it
 * could not check, e.g. with only the headers copied).
 *
 * build_edit_ack copies p into out applying what a filter asked for: the
 * SACK option blanked with NOPs (hide) or replaced by nblocks blocks (as
 * many as the option's length holds), the window field replaced (window >=
 * 0); sequence numbers and lengths unchanged.  build_strip_sack and
 * build_one_sack are two of its SACK edits.
 */
void build_edit_ack(const struct pkt *p, bool hide, const struct sack_block *blocks, int nblocks, int window,
		    uint8_t *out);
void build_strip_sack(const struct pkt *p, uint8_t *out);
void build_one_sack(const struct pkt *p, const struct sack_block *block, uint8_t *out);

/*
 * Slicing a cached segment larger than the receiver's MSS (a GSO
 * super-packet): never finer than Linux itself sends (tcp_min_snd_mss:
 * 48 bytes, the bound that closed CVE-2019-11479), never more than 128
 * slices per segment (a 64 KB segment at 512 bytes).  A segment that
 * would need more is not sent by pepd (its sender recovers it).
 */
#define BUILD_MIN_SLICE 48u
#define BUILD_MAX_SLICES 128u
#define BUILD_TOO_MANY_SLICES (-2)

/*
 * Payload bytes per slice: what the egress MTU leaves after the headers
 * (payload_off bytes), and no more than the receiver's MSS (0: unknown)
 * less the TCP options (RFC 6691), both floored at BUILD_MIN_SLICE.
 */
uint32_t build_slice_payload(uint32_t mtu, uint32_t payload_off, uint16_t mss, uint32_t tcp_opts);

typedef int (*build_emit_fn)(void *ctx, const uint8_t *pkt, uint32_t len);

/*
 * Emit p (a cached segment, its checksum verified) as slices of at most
 * max_payload bytes of payload, each a complete packet with correct
 * lengths, sequence numbers and checksums; PSH and FIN only on the last
 * slice.  A segment that fits is sent as it is (one slice, its checksum
 * updated incrementally for a new TSval).  With tsval non-NULL and a
 * timestamp option present, its TSval is replaced (a copy sent long after
 * the original must carry a current timestamp, or the receiver's PAWS
 * check discards it as an old duplicate).  buf (bufsz bytes) is scratch
 * space for one slice.  Returns the number of slices emitted, or a
 * negative value: the first error emit returned, BUILD_TOO_MANY_SLICES
 * (nothing emitted), or -1 if buf is small.
 */
int build_slices(const struct pkt *p, uint32_t max_payload, const uint32_t *tsval, uint8_t *buf, size_t bufsz,
		 build_emit_fn emit, void *ctx);

/*
 * The same for payload bytes [from, to) of p only (a slice of a cached GSO
 * super-packet, 0 <= from < to <= p->payload_len): every slice built from
 * the bytes, its checksum computed; PSH and FIN only if it ends the packet.
 * The whole payload is build_slices.
 */
int build_slices_range(const struct pkt *p, uint32_t from, uint32_t to, uint32_t max_payload, const uint32_t *tsval,
		       uint8_t *buf, size_t bufsz, build_emit_fn emit, void *ctx);

#endif
