/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pepd's own packets leave through raw IP sockets (IP_HDRINCL, and
 * IPPROTO_RAW for IPv6) carrying SO_MARK: they traverse OUTPUT and
 * POSTROUTING, never FORWARD, and the queue rules skip the mark anyway, so
 * nothing pepd sends is queued to it again (Documentation/kernel-notes.rst §7).
 */
#ifndef PEPD_INJECT_H
#define PEPD_INJECT_H

#include <stdbool.h>
#include <stdint.h>

#include "build.h"
#include "flow.h"

struct injector {
	int fd4, fd6;		/* new data and ACKs */
	int rtx4, rtx6;		/* local retransmissions: the same sockets unless they have a priority */
	uint32_t mtu;		/* smallest MTU of the wireless interfaces */
	uint8_t buf[65536 + 64];
};

/*
 * Open the sockets, all with the mark; with a priority, local
 * retransmissions get sockets of their own that carry it (SO_PRIORITY is
 * per socket: kernels before 6.7 take no per-packet priority).
 */
int inject_open(struct injector *inj, uint32_t mark, uint32_t priority, char *err, size_t errlen);
void inject_close(struct injector *inj);

/* Send one complete IP packet as is (checksums must be right); 0 or -errno. */
int inject_packet(struct injector *inj, const uint8_t *pkt, uint32_t len);

/*
 * Send the cached segment g of flow f, `copies` times, cut into slices
 * that fit the wireless host's MSS and the egress MTU, on the local
 * retransmission sockets if `repair`; returns the number of packets sent,
 * or -errno of the first failure (-E2BIG, nothing sent: it would
 * take more than BUILD_MAX_SLICES slices).
 */
int inject_segment(struct injector *inj, const struct flow *f, const struct seg *g, unsigned int copies,
		   bool repair);

/* Send the fixed host an ACK for ack in the wireless host's name, with a D-SACK block unless dsack is NULL. */
int inject_ack(struct injector *inj, const struct flow *f, uint32_t ack, const struct sack_block *dsack, int32_t window);

#endif
