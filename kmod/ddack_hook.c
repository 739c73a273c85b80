// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_ddack: the LOCAL_OUT hook.  Parse first, into a plain struct with
 * every length checked; hand the segment to its flow (ddack_flow.c),
 * which returns the state machine's decision; carry out what concerns
 * the segment itself: stolen (held by the flow), sent, or sent with its
 * SACK option overwritten by NOPs.
 *
 * The hook sits last on LOCAL_OUT (priority INT_MAX) for IPv4 and IPv6,
 * so calling its continuation later (dst_output) skips no other hook, and
 * it is registered only in namespaces where net.tcp_ddack.enabled = 1:
 * elsewhere the module costs nothing at all.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "ddack.h"

/*
 * Find the SACK option and whether a block lies above the ACK (data past
 * a hole).  The packet is our own stack's, but the parser trusts no
 * length: an option list that lies ends the search.
 */
static void ddack_parse_options(const struct sk_buff *skb, struct ddack_pkt *pkt)
{
	unsigned int optlen = airtcp_seg_optlen(&pkt->seg), pos = 0, b;
	u8 buf[AIRTCP_OPT_SPACE];
	struct airtcp_opt o;
	const u8 *opt;

	if (!optlen)
		return;
	opt = airtcp_seg_options(skb, &pkt->seg, buf);
	if (!opt)
		return;
	while (airtcp_opt_next(opt, optlen, &pos, &o) > 0) {
		if (o.kind != AIRTCP_OPT_SACK)
			continue;
		pkt->in.has_sack = true;
		pkt->sack_off = o.off;
		pkt->sack_len = o.len;
		/* Blocks of 8 bytes: start, end. */
		for (b = o.off + 2; b + 8 <= o.off + o.len; b += 8)
			if (airtcp_after(airtcp_get32(opt + b), pkt->in.ack))
				pkt->in.sack_hole = true;
		return;
	}
}

/* 0 if @skb is a TCP segment we understand, its facts in @pkt. */
static int ddack_parse(const struct sk_buff *skb, u8 pf, struct ddack_pkt *pkt)
{
	const struct tcphdr *th = &pkt->seg.th;

	memset(pkt, 0, sizeof(*pkt));
	if (airtcp_seg_locate(skb, pf, &pkt->seg))
		return -EINVAL;
	if (pf == NFPROTO_IPV4) {
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr, &pkt->key.saddr);
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr, &pkt->key.daddr);
		pkt->key.family = AF_INET;
	} else {
		pkt->key.saddr = ipv6_hdr(skb)->saddr;
		pkt->key.daddr = ipv6_hdr(skb)->daddr;
		pkt->key.family = AF_INET6;
	}
	pkt->key.sport = th->source;
	pkt->key.dport = th->dest;
	pkt->in.ack = ntohl(th->ack_seq);
	pkt->in.win = ntohs(th->window);
	pkt->in.ends_flow = th->fin || th->rst;
	pkt->in.pure_ack = airtcp_seg_pure_ack(&pkt->seg);
	if (pkt->in.pure_ack)
		ddack_parse_options(skb, pkt);
	return 0;
}

static unsigned int ddack_hook(void *priv, struct sk_buff *skb,
			       const struct nf_hook_state *state)
{
	struct ddack_net *dn = ddack_pernet(state->net);
	struct ddack_decision decision;
	struct sock *sk = skb->sk;
	struct ddack_pkt pkt;

	/*
	 * Only segments of a full TCP socket of this host: not the per-CPU
	 * control socket (RST, TIME_WAIT ACKs: SOCK_RAW), not request
	 * sockets (SYN-ACKs), not forwarded traffic (no LOCAL_OUT).
	 */
	if (!sk || sk != state->sk || !sk_fullsock(sk) ||
	    sk->sk_protocol != IPPROTO_TCP || sk->sk_type != SOCK_STREAM)
		return NF_ACCEPT;
	if (ddack_parse(skb, state->pf, &pkt))
		return NF_ACCEPT;
	if (pkt.in.pure_ack)
		airtcp_stat_inc(&dn->pn, DDACK_STAT_ACKS);
	/*
	 * One word, read racily: usually under the socket's lock, but after
	 * a queue rule this hook runs from nf_reinject() without it
	 * (Documentation/kernel-notes.rst §8); nothing else of the socket is
	 * read but the SACK flag below, and the flow keeps skb->sk for
	 * identity only.
	 */
	pkt.in.rcv_rtt_us = READ_ONCE(tcp_sk(sk)->rcv_rtt_est.rtt_us) >> 3;
	/*
	 * Whether the handshake negotiated SACK: set before the first ACK
	 * of an established socket leaves, never changed after (a bitfield,
	 * so no READ_ONCE()).
	 */
	pkt.in.sack_ok = data_race(tcp_is_sack(tcp_sk(sk)));

	decision = ddack_flow_packet(dn, skb, state, &pkt);
	if (decision.verdict == DDACK_HOLD)
		return NF_STOLEN;	/* the flow has it now */
	if (decision.verdict == DDACK_DROP)
		return NF_DROP;		/* no route left to send it on */
	if (decision.strip &&
	    !airtcp_seg_nop_out(skb, &pkt.seg, pkt.sack_off, pkt.sack_len))
		airtcp_stat_inc(&dn->pn, DDACK_STAT_SACK_STRIPPED);
	return NF_ACCEPT;
}

static const struct nf_hook_ops ddack_ops[] = {
	{
		.hook		= ddack_hook,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_LOCAL_OUT,
		.priority	= NF_IP_PRI_LAST,
	},
	{
		.hook		= ddack_hook,
		.pf		= NFPROTO_IPV6,
		.hooknum	= NF_INET_LOCAL_OUT,
		.priority	= NF_IP6_PRI_LAST,
	},
};

/* net.tcp_ddack.enabled: the hooks while it is 1. */
const struct airtcp_switch ddack_switch = {
	.bit	= 0,
	.ops	= ddack_ops,
	.n_ops	= ARRAY_SIZE(ddack_ops),
	.drain	= ddack_flow_drain,
};
