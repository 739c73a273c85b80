/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The TCP segment in an skb, for the airtcp modules' netfilter hooks:
 * where its header is (IPv4 or IPv6, every length checked), its options,
 * and the two rewrites the modules make (overwrite an option with NOPs;
 * replace the options of a segment without payload).  The options
 * themselves are read by the pure walker of airtcp_wire.h.
 */
#ifndef _AIRTCP_TCP_H
#define _AIRTCP_TCP_H

#include <linux/skbuff.h>
#include <linux/tcp.h>

#include "airtcp_wire.h"

struct airtcp_seg {
	unsigned int thoff;	/* TCP header, from skb->data */
	unsigned int doff;	/* TCP header length, bytes */
	unsigned int l4len;	/* TCP header + payload */
	struct tcphdr th;	/* a copy of the fixed header */
};

int airtcp_seg_locate(const struct sk_buff *skb, u8 pf, struct airtcp_seg *seg);
const u8 *airtcp_seg_options(const struct sk_buff *skb,
			     const struct airtcp_seg *seg, u8 *buf);
int airtcp_seg_nop_out(struct sk_buff *skb, const struct airtcp_seg *seg,
		       unsigned int off, unsigned int len);
int airtcp_seg_set_options(struct sk_buff *skb, u8 pf,
			   const struct airtcp_seg *seg, const u8 *opt,
			   unsigned int optlen, bool incoming);

static inline unsigned int airtcp_seg_optlen(const struct airtcp_seg *seg)
{
	return seg->doff - sizeof(struct tcphdr);
}

/* An ACK with no SYN, FIN or RST and no payload. */
static inline bool airtcp_seg_pure_ack(const struct airtcp_seg *seg)
{
	return seg->th.ack && !seg->th.syn && !seg->th.fin && !seg->th.rst &&
	       seg->l4len == seg->doff;
}

#endif /* _AIRTCP_TCP_H */
