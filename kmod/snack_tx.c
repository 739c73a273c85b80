// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_snack, sender half: a LOCAL_IN hook that turns an incoming SNACK
 * option into SACK blocks, so that an unmodified Linux sender repairs
 * every reported hole through its own machinery (the functions that mark
 * segments lost or retransmit them - tcp_mark_skb_lost(),
 * tcp_retransmit_skb() - are not exported, and writing tcp_sock from
 * here, without the socket lock, would be unsound; see
 * Documentation/kernel-notes.rst §4).  What Linux then does with the
 * blocks - RACK marks the holes lost, PRR paces the repairs, a lost
 * retransmission is caught by RACK again - is described in
 * Documentation/snack.rst.
 *
 * Trust: the option is read by snack_codec.c, which rejects anything
 * malformed; only runs the picture reports as held become SACK blocks,
 * and each is clipped to the connection's send window [snd_una, snd_nxt]
 * read from the socket (a racy read, but of values that only grow, and
 * Linux checks every block again in tcp_is_sackblock_valid()).  The
 * connection must have SACK negotiated, or TCP would ignore the blocks.
 */
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/tcp.h>
#include <net/inet6_hashtables.h>
#include <net/inet_hashtables.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "snack.h"

/* Last before TCP: after every filter and queue has had its say. */
#define SNACK_TX_PRIORITY	(INT_MAX - 1)

/* The established socket this segment is for, with a reference, or NULL. */
static struct sock *snack_tx_lookup(struct net *net, struct sk_buff *skb,
				    u8 pf, const struct tcphdr *th)
{
	struct sock *sk;

	if (pf == NFPROTO_IPV4) {
		const struct iphdr *iph = ip_hdr(skb);

		sk = __inet_lookup_established(net,
					       net->ipv4.tcp_death_row.hashinfo,
					       iph->saddr, th->source,
					       iph->daddr, ntohs(th->dest),
					       inet_iif(skb), inet_sdif(skb));
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		sk = __inet6_lookup_established(net,
						net->ipv4.tcp_death_row.hashinfo,
						&ip6h->saddr, th->source,
						&ip6h->daddr, ntohs(th->dest),
						inet6_iif(skb), inet6_sdif(skb));
	}
	if (sk && !sk_fullsock(sk)) {
		sock_gen_put(sk);	/* TIME_WAIT or a request */
		sk = NULL;
	}
	return sk;
}

static unsigned int snack_tx_hook(void *priv, struct sk_buff *skb,
				  const struct nf_hook_state *state)
{
	struct snack_net *sn = snack_pernet(state->net);
	u8 buf[AIRTCP_OPT_SPACE], out[SNACK_OUT_BUF];
	struct snack_optinfo info;
	struct snack_picture pic;
	const struct tcp_sock *tp;
	const struct tcphdr *th;
	struct airtcp_seg seg;
	unsigned int optlen, before, after;
	u32 una, nxt;
	bool sack_ok;
	struct sock *sk;
	const u8 *opt;
	int len, clipped;

	if (airtcp_seg_locate(skb, state->pf, &seg))
		return NF_ACCEPT;
	optlen = airtcp_seg_optlen(&seg);
	if (!optlen)
		return NF_ACCEPT;
	th = &seg.th;
	if (!th->ack || th->syn || th->rst)
		return NF_ACCEPT;
	opt = airtcp_seg_options(skb, &seg, buf);
	if (!opt || snack_scan(opt, optlen, &info) || !info.snack_len)
		return NF_ACCEPT;	/* TCP judges odd option lists itself */

	airtcp_stat_inc(&sn->pn, SNACK_STAT_SEEN);
	if (info.unknown) {
		/* It may sign the header: a rewrite would have TCP drop it. */
		airtcp_stat_inc(&sn->pn, SNACK_STAT_TX_UNKNOWN_OPT);
		return NF_ACCEPT;
	}
	if (snack_decode(opt + info.snack_off, info.snack_len, &pic)) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_MALFORMED);
		return NF_ACCEPT;	/* TCP skips unknown options */
	}
	if (pic.mode == SNACK_MODE_SCPS) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_SCPS_IGNORED);
		return NF_ACCEPT;
	}
	if (seg.l4len != seg.doff) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_NOT_PURE);
		return NF_ACCEPT;
	}

	sk = snack_tx_lookup(state->net, skb, state->pf, th);
	if (!sk) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_NO_SOCKET);
		return NF_ACCEPT;
	}
	tp = tcp_sk(sk);
	una = READ_ONCE(tp->snd_una);
	nxt = READ_ONCE(tp->snd_nxt);
	sack_ok = tcp_is_sack(tp);
	sock_gen_put(sk);
	if (!sack_ok) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_NO_SACK);
		return NF_ACCEPT;
	}
	/* An ACK for data never sent is not ours to interpret. */
	if (airtcp_before(nxt, ntohl(th->ack_seq))) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_OUT_OF_WINDOW);
		return NF_ACCEPT;
	}
	len = snack_tx_rewrite(opt, optlen, &pic, ntohl(th->ack_seq), una, nxt,
			       atomic_inc_return(&sn->rotation), out, &clipped);
	if (clipped)
		airtcp_stat_inc(&sn->pn, SNACK_STAT_OUT_OF_WINDOW);
	if (len < 0)
		return NF_ACCEPT;	/* nothing believable to add */

	/* Verify before we rewrite: never launder a corrupted segment. */
	if (nf_checksum(skb, state->hook, seg.thoff, IPPROTO_TCP,
			state->pf == NFPROTO_IPV4 ? AF_INET : AF_INET6)) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_BAD_CSUM);
		return NF_ACCEPT;
	}
	before = info.sack_len ? (info.sack_len - 2) / 8 : 0;
	if (airtcp_seg_set_options(skb, state->pf, &seg, out, len, true)) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_TX_ERRORS);
		return NF_ACCEPT;
	}
	after = snack_sack_count(out, len);
	airtcp_stat_inc(&sn->pn, SNACK_STAT_ACTED);
	if (after > before)
		airtcp_stat_add(&sn->pn, SNACK_STAT_SACK_ADDED, after - before);
	return NF_ACCEPT;
}

static const struct nf_hook_ops snack_tx_ops[] = {
	{
		.hook		= snack_tx_hook,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_LOCAL_IN,
		.priority	= SNACK_TX_PRIORITY,
	},
	{
		.hook		= snack_tx_hook,
		.pf		= NFPROTO_IPV6,
		.hooknum	= NF_INET_LOCAL_IN,
		.priority	= SNACK_TX_PRIORITY,
	},
};

const struct airtcp_switch snack_tx_switch = {
	.bit	= 1,
	.ops	= snack_tx_ops,
	.n_ops	= ARRAY_SIZE(snack_tx_ops),
};
