// SPDX-License-Identifier: GPL-2.0-only
/*
 * The TCP segment in an skb (airtcp_tcp.h).  Compiled into each module
 * that uses it through <module>_shared.c.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter.h>
#include <net/checksum.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/tcp.h>

#include "airtcp_tcp.h"

/*
 * 0 if @skb (at a netfilter hook of family @pf, skb->data at the network
 * header) is one whole TCP segment: IPv4 unfragmented, or IPv6 with TCP
 * right after the fixed header as Linux sends it; a TCP header of at
 * least 20 bytes within the segment; IP's length equal to the skb's
 * (true of every locally built segment at LOCAL_OUT and, after
 * ip_rcv()'s trim, of every received one at LOCAL_IN).  Nothing else
 * is touched by the rewrites below.
 */
int airtcp_seg_locate(const struct sk_buff *skb, u8 pf, struct airtcp_seg *seg)
{
	unsigned int nhoff = skb_network_offset(skb);
	const struct tcphdr *th;

	if (pf == NFPROTO_IPV4) {
		const struct iphdr *iph = ip_hdr(skb);

		if (iph->protocol != IPPROTO_TCP || ip_is_fragment(iph) ||
		    ntohs(iph->tot_len) < iph->ihl * 4)
			return -EINVAL;
		seg->thoff = nhoff + iph->ihl * 4;
		seg->l4len = ntohs(iph->tot_len) - iph->ihl * 4;
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		if (ip6h->nexthdr != IPPROTO_TCP)
			return -EINVAL;
		seg->thoff = nhoff + sizeof(*ip6h);
		seg->l4len = ntohs(ip6h->payload_len);
	}
	th = skb_header_pointer(skb, seg->thoff, sizeof(seg->th), &seg->th);
	if (!th)
		return -EINVAL;
	if (th != &seg->th)
		seg->th = *th;
	seg->doff = seg->th.doff * 4;
	if (seg->doff < sizeof(seg->th) || seg->doff > seg->l4len ||
	    seg->thoff + seg->l4len != skb->len)
		return -EINVAL;
	return 0;
}

/*
 * The options of a located segment (airtcp_seg_optlen() bytes), in the
 * skb or copied to @buf (AIRTCP_OPT_SPACE bytes); NULL if unreadable.
 */
const u8 *airtcp_seg_options(const struct sk_buff *skb,
			     const struct airtcp_seg *seg, u8 *buf)
{
	return skb_header_pointer(skb, seg->thoff + sizeof(seg->th),
				  airtcp_seg_optlen(seg), buf);
}

/*
 * Overwrite @len option bytes at @off (from the first option byte) with
 * NOPs: same length, so no sequence, length or MSS consequences.  Locally
 * generated segments are CHECKSUM_PARTIAL (only the pseudo-header is
 * summed yet): nothing to fix then; otherwise the checksum is updated by
 * the difference.
 */
int airtcp_seg_nop_out(struct sk_buff *skb, const struct airtcp_seg *seg,
		       unsigned int off, unsigned int len)
{
	unsigned int optlen = airtcp_seg_optlen(seg);
	__wsum before, after;
	struct tcphdr *th;
	u8 *opt;

	if (off + len > optlen)
		return -EINVAL;
	if (skb_ensure_writable(skb, seg->thoff + seg->doff))
		return -ENOMEM;
	th = (struct tcphdr *)(skb->data + seg->thoff);
	opt = (u8 *)(th + 1);
	before = csum_partial(opt, optlen, 0);
	memset(opt + off, AIRTCP_OPT_NOP, len);
	after = csum_partial(opt, optlen, 0);
	/* Not the pseudo-header: a PARTIAL checksum does not change. */
	if (skb->ip_summed != CHECKSUM_PARTIAL)
		csum_replace_by_diff(&th->check, csum_sub(after, before));
	return 0;
}

/*
 * Replace the options of a segment without payload by @opt (@optlen, a
 * multiple of 4, <= 40): grow or shrink the header, fix the IP length and
 * the TCP checksum.  !@incoming: a locally generated ACK on LOCAL_OUT, whose
 * CHECKSUM_PARTIAL sum only needs the new pseudo-header length; else a
 * received ACK on LOCAL_IN, whose checksum the caller has verified: it is
 * computed in full and marked verified.  The skb keeps its truesize
 * (pskb_expand_head leaves it alone while skb->sk is set).
 */
int airtcp_seg_set_options(struct sk_buff *skb, u8 pf,
			   const struct airtcp_seg *seg, const u8 *opt,
			   unsigned int optlen, bool incoming)
{
	int delta = (int)(sizeof(struct tcphdr) + optlen) - (int)seg->doff;
	unsigned int tcplen = seg->l4len + delta;
	struct tcphdr *th;

	if (seg->l4len != seg->doff || optlen > AIRTCP_OPT_SPACE ||
	    optlen % 4)
		return -EINVAL;
	if (skb_ensure_writable(skb, skb->len))
		return -ENOMEM;
	if (delta > 0 && skb_tailroom(skb) < delta &&
	    pskb_expand_head(skb, 0, delta - skb_tailroom(skb), GFP_ATOMIC))
		return -ENOMEM;
	if (delta > 0)
		skb_put(skb, delta);
	else if (delta < 0)
		__skb_trim(skb, skb->len + delta);

	th = (struct tcphdr *)(skb->data + seg->thoff);
	memcpy(th + 1, opt, optlen);
	th->doff = (sizeof(*th) + optlen) / 4;

	if (pf == NFPROTO_IPV4) {
		struct iphdr *iph = ip_hdr(skb);

		iph->tot_len = htons(skb->len - skb_network_offset(skb));
		ip_send_check(iph);
		if (incoming || skb->ip_summed != CHECKSUM_PARTIAL) {
			th->check = 0;
			th->check = tcp_v4_check(tcplen, iph->saddr, iph->daddr,
						 csum_partial(th, tcplen, 0));
		} else {
			th->check = ~tcp_v4_check(tcplen, iph->saddr,
						  iph->daddr, 0);
		}
	} else {
		struct ipv6hdr *ip6h = ipv6_hdr(skb);

		ip6h->payload_len = htons(tcplen);
		if (incoming || skb->ip_summed != CHECKSUM_PARTIAL) {
			th->check = 0;
			th->check = tcp_v6_check(tcplen, &ip6h->saddr,
						 &ip6h->daddr,
						 csum_partial(th, tcplen, 0));
		} else {
			th->check = ~tcp_v6_check(tcplen, &ip6h->saddr,
						  &ip6h->daddr, 0);
		}
	}
	if (incoming)
		skb->ip_summed = CHECKSUM_UNNECESSARY;
	return 0;
}
