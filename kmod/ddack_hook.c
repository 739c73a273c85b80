// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_ddack: the LOCAL_OUT hook.  Parse first, into a plain struct with
 * every length checked; then hand the segment to the flow state machine.
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
#include <linux/tcp.h>
#include <asm/unaligned.h>
#include <net/checksum.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "ddack.h"

#define DDACK_MAX_OPTLEN	(MAX_TCP_OPTION_SPACE)

/*
 * Find the SACK option.  The packet is our own stack's, but the parser
 * trusts no length: an option running past the header ends the search.
 */
static void ddack_parse_options(const struct sk_buff *skb, struct ddack_pkt *pkt)
{
	u8 buf[DDACK_MAX_OPTLEN];
	unsigned int optlen = pkt->doff - sizeof(struct tcphdr);
	unsigned int i = 0;
	const u8 *opt;

	if (!optlen)
		return;
	opt = skb_header_pointer(skb, pkt->thoff + sizeof(struct tcphdr),
				 optlen, buf);
	if (!opt)
		return;
	while (i < optlen) {
		u8 kind = opt[i], len;

		if (kind == TCPOPT_EOL)
			return;
		if (kind == TCPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= optlen)
			return;		/* a kind without its length byte */
		len = opt[i + 1];
		if (len < 2 || i + len > optlen)
			return;		/* length lies about the option */
		if (kind == TCPOPT_SACK) {
			unsigned int b;

			pkt->has_sack = true;
			pkt->sack_off = i;
			pkt->sack_len = len;
			/* Blocks of 8 bytes: start, end.  Any start above
			 * the cumulative ACK means data past a hole.
			 */
			for (b = i + 2; b + 8 <= i + len; b += 8)
				if (after(get_unaligned_be32(opt + b), pkt->ack))
					pkt->sack_hole = true;
			return;
		}
		i += len;
	}
}

/* 0 if @skb is a TCP segment we understand, its facts in @pkt. */
static int ddack_parse(const struct sk_buff *skb, u8 pf, struct ddack_pkt *pkt)
{
	unsigned int nhoff = skb_network_offset(skb), l4len;
	struct tcphdr _th;
	const struct tcphdr *th;

	memset(pkt, 0, sizeof(*pkt));
	if (pf == NFPROTO_IPV4) {
		const struct iphdr *iph = ip_hdr(skb);

		if (iph->protocol != IPPROTO_TCP || ip_is_fragment(iph))
			return -EINVAL;
		if (ntohs(iph->tot_len) < iph->ihl * 4)
			return -EINVAL;
		l4len = ntohs(iph->tot_len) - iph->ihl * 4;
		pkt->thoff = nhoff + iph->ihl * 4;
		ipv6_addr_set_v4mapped(iph->saddr, &pkt->key.saddr);
		ipv6_addr_set_v4mapped(iph->daddr, &pkt->key.daddr);
		pkt->key.family = AF_INET;
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		/* Local TCP sends no extension headers; leave any alone. */
		if (ip6h->nexthdr != IPPROTO_TCP)
			return -EINVAL;
		l4len = ntohs(ip6h->payload_len);
		pkt->thoff = nhoff + sizeof(*ip6h);
		pkt->key.saddr = ip6h->saddr;
		pkt->key.daddr = ip6h->daddr;
		pkt->key.family = AF_INET6;
	}
	th = skb_header_pointer(skb, pkt->thoff, sizeof(_th), &_th);
	if (!th)
		return -EINVAL;
	pkt->doff = th->doff * 4;
	/* A header shorter than 20 bytes or longer than the segment. */
	if (pkt->doff < sizeof(*th) || pkt->doff > l4len ||
	    pkt->thoff + l4len > skb->len)
		return -EINVAL;
	pkt->key.sport = th->source;
	pkt->key.dport = th->dest;
	pkt->ack = ntohl(th->ack_seq);
	pkt->win = ntohs(th->window);
	pkt->ends_flow = th->fin || th->rst;
	pkt->pure_ack = th->ack && !th->syn && !th->fin && !th->rst &&
			l4len == pkt->doff;
	if (pkt->pure_ack)
		ddack_parse_options(skb, pkt);
	return 0;
}

/*
 * Overwrite the SACK option with NOPs: same length, so no sequence, length
 * or MSS consequences.  Locally generated segments are CHECKSUM_PARTIAL
 * (only the pseudo-header is summed yet): nothing to fix then; otherwise
 * the checksum is updated by the difference.
 */
int ddack_strip_sack(struct sk_buff *skb, const struct ddack_pkt *pkt)
{
	unsigned int optlen = pkt->doff - sizeof(struct tcphdr);
	__wsum before, after;
	struct tcphdr *th;
	u8 *opt;

	if (skb_ensure_writable(skb, pkt->thoff + pkt->doff))
		return -ENOMEM;
	th = (struct tcphdr *)(skb->data + pkt->thoff);
	opt = (u8 *)(th + 1);
	before = csum_partial(opt, optlen, 0);
	memset(opt + pkt->sack_off, TCPOPT_NOP, pkt->sack_len);
	after = csum_partial(opt, optlen, 0);
	/* Not the pseudo-header: a PARTIAL checksum does not change. */
	if (skb->ip_summed != CHECKSUM_PARTIAL)
		csum_replace_by_diff(&th->check, csum_sub(after, before));
	return 0;
}

static unsigned int ddack_hook(void *priv, struct sk_buff *skb,
			       const struct nf_hook_state *state)
{
	struct ddack_net *dn = ddack_pernet(state->net);
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
	if (pkt.pure_ack)
		ddack_stat_inc(dn, DDACK_STAT_ACKS);
	/* We run in the socket's transmit path, under its lock. */
	pkt.rcv_rtt_us = READ_ONCE(tcp_sk(sk)->rcv_rtt_est.rtt_us) >> 3;
	return ddack_flow_packet(dn, skb, state, &pkt);
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

int ddack_hooks_register(struct net *net)
{
	return nf_register_net_hooks(net, ddack_ops, ARRAY_SIZE(ddack_ops));
}

/* Returns after an RCU grace period: no hook runs any more. */
void ddack_hooks_unregister(struct net *net)
{
	nf_unregister_net_hooks(net, ddack_ops, ARRAY_SIZE(ddack_ops));
}
