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
};

#define BUILD_ACK_MAX (40 + 20 + 12)

/* Write a pure ACK carrying ack into out (BUILD_ACK_MAX bytes); returns its length. */
uint32_t build_ack(const struct ack_template *t, uint32_t ack, uint8_t *out);

/*
 * Copy p into out (p->len bytes) with the SACK option overwritten by NOPs
 * and the TCP checksum recomputed; sequence numbers and lengths unchanged.
 */
void build_strip_sack(const struct pkt *p, uint8_t *out);

/*
 * Copy p into out with its SACK option cut to the single block given
 * (the rest of the option's bytes become NOPs); checksum recomputed.
 */
void build_one_sack(const struct pkt *p, const struct sack_block *block, uint8_t *out);

/*
 * Copy p into out applying the edits a filter asked for: SACK blanked
 * (hide) or cut to one block (one, non-NULL), window field replaced (when
 * window >= 0); the TCP checksum is recomputed.
 */
void build_edit_ack(const struct pkt *p, bool hide, const struct sack_block *one, int window, uint8_t *out);

typedef int (*build_emit_fn)(void *ctx, const uint8_t *pkt, uint32_t len);

/*
 * Emit p (a cached segment) as slices of at most max_payload bytes of
 * payload, each a complete packet with correct lengths, sequence numbers
 * and checksums; PSH and FIN only on the last slice.  With tsval non-NULL
 * and a timestamp option present, its TSval is replaced (a copy sent long
 * after the original must carry a current timestamp, or the receiver's
 * PAWS check discards it as an old duplicate).  buf (bufsz bytes) is
 * scratch space for one slice.  Returns the number of slices emitted, or
 * a negative value (the first error emit returned, or -1 if buf is small).
 */
int build_slices(const struct pkt *p, uint32_t max_payload, const uint32_t *tsval, uint8_t *buf, size_t bufsz,
		 build_emit_fn emit, void *ctx);

#endif
