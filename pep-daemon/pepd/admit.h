/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What pepd decides about a packet before any filter sees it, as pure
 * functions (no I/O; tests/test_admit.c tables them): which way it goes
 * relative to the wireless interfaces, whether its checksums can be
 * trusted, and whether it may start a flow.
 */
#ifndef PEPD_ADMIT_H
#define PEPD_ADMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "filter.h"
#include "packet.h"

/* The wireless interfaces by ifindex, and the bridge each is a port of (0: none). */
struct pep_ifaces {
	uint32_t n;
	uint32_t port[PEP_MAX_IFACES];
	uint32_t bridge[PEP_MAX_IFACES];
};

/* The devices the kernel reported for a queued packet (0: none). */
struct pep_devs {
	uint32_t indev, outdev;		/* a bridged packet's bridge */
	uint32_t physindev, physoutdev;	/* a bridged packet's bridge ports */
};

enum admit_where {
	WHERE_TO_WIRELESS = DIR_TO_WIRELESS,
	WHERE_FROM_WIRELESS = DIR_FROM_WIRELESS,
	WHERE_FOREIGN,		/* neither: not through a wireless interface */
	WHERE_BETWEEN,		/* from one wireless interface to another: no fixed host, not pepd's */
};

/*
 * Towards a wireless interface: leaving on one (the bridge port for a
 * bridged packet).  From one: arriving on one, or, for a packet routed out
 * of a bridge whose port it arrived on (no port reported: the queue rule
 * that let it through selected it by the bridge's mark), on that bridge.
 */
enum admit_where admit_where(const struct pep_ifaces *w, const struct pep_devs *d);

enum admit_csum {
	CSUM_TRUSTED,		/* the kernel verified it: the field is a full, right checksum */
	CSUM_PARTIAL,		/* CHECKSUM_PARTIAL: the field holds the pseudo-header sum; the bytes are the kernel's */
	CSUM_VERIFIED,		/* pepd verified it: right */
	CSUM_BAD,		/* wrong (TCP, or the IPv4 header): never edited, cached or used; passed as it is */
	CSUM_UNVERIFIABLE,	/* only the headers were copied and nobody verified it: treated as CSUM_BAD */
};

/*
 * How far a parsed packet's checksums can be trusted, from NFQA_SKB_INFO
 * (not_ready: NFQA_SKB_CSUMNOTREADY, not_verified: _CSUM_NOTVERIFIED) and
 * the hook it was queued at.  The kernel's word that it verified a
 * checksum (neither flag) holds only at hooks up to FORWARD (0-2 in both
 * the inet and the bridge families); elsewhere, e.g. a bridge's output
 * hook, pepd verifies, which it cannot for a packet of which it has only
 * the headers (p->captured < p->len).  The IPv4 header is always checked:
 * a bridge does not.
 */
enum admit_csum admit_checksum(const struct pkt *p, bool not_ready, bool not_verified, uint8_t hook);

enum admit_flow {
	ADMIT_IGNORE,		/* starts nothing (a lone ACK, FIN or RST): passed as it is */
	ADMIT_SYN,		/* a SYN: a new flow, embryonic until its handshake is proven */
	ADMIT_MIDSTREAM,	/* data of a connection that started before pepd, adopted (adopt_midstream) */
	ADMIT_NOT_ADOPTED,	/* the same, not adopted: passed as it is and counted */
};

/* May a packet with no flow start one? */
enum admit_flow admit_flow(const struct pkt *p, enum pep_dir dir, bool adopt_midstream);

#endif
