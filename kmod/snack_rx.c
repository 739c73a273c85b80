// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_snack, receiver half: a LOCAL_OUT hook that gives every pure ACK of
 * a connection holding out-of-order data a SNACK option computed from the
 * socket's out-of-order queue itself (tp->out_of_order_queue), not
 * guessed from the SACK blocks TCP chose to send.
 *
 * Locking: the hook runs synchronously inside __tcp_transmit_skb() ->
 * ip_queue_xmit() -> ip_local_out(), and every caller of that path owns
 * the socket (lock_sock() in process context, bh_lock_sock() in the
 * receive path and in TCP's timers), so the rbtree and rcv_mss are stable
 * while we walk them.  That holds only for a hook that runs before any
 * queueing hook could defer the packet (kernel-notes §2: "hooks should
 * never assume socket lock is held" once NFQUEUE has had it), hence the
 * priority: before raw, defrag and conntrack.  We look only at packets
 * whose skb->sk is the full TCP socket that sends them.
 *
 * Only pure ACKs are touched: a data segment was sized for the options
 * TCP chose (tcp_current_mss()), and growing its header could push it
 * over the path MTU.
 */
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/tcp.h>
#include <net/inet_connection_sock.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "snack.h"
#include "snack_codec.h"

/* Before raw (-300), defrag (-400) and raw-before-defrag (-450). */
#define SNACK_RX_PRIORITY	(-500)

static unsigned int snack_rx_hook(void *priv, struct sk_buff *skb,
				  const struct nf_hook_state *state)
{
	struct snack_net *sn = snack_pernet(state->net);
	u8 buf[MAX_TCP_OPTION_SPACE], out[SNACK_OUT_BUF];
	struct sock *sk = skb->sk;
	struct snack_builder b;
	struct snack_picture pic;
	const struct tcp_sock *tp;
	const struct tcphdr *th;
	struct tcphdr _th;
	struct snack_seg seg;
	const struct sk_buff *ooo;
	unsigned int optlen, before, after;
	const u8 *opt;
	int len;

	if (!sk || sk != state->sk || !sk_fullsock(sk) ||
	    sk->sk_protocol != IPPROTO_TCP || sk->sk_type != SOCK_STREAM)
		return NF_ACCEPT;
	tp = tcp_sk(sk);
	if (RB_EMPTY_ROOT(&tp->out_of_order_queue))
		return NF_ACCEPT;	/* the common case: nothing missing */
	if (skb_is_gso(skb) || snack_seg_parse(skb, state->pf, &seg))
		return NF_ACCEPT;
	th = skb_header_pointer(skb, seg.thoff, sizeof(_th), &_th);
	if (!th || !th->ack || th->syn || th->fin || th->rst ||
	    seg.l4len != seg.doff)
		return NF_ACCEPT;
	snack_stat_inc(sn, SNACK_STAT_OOO_ACKS);

	/* The unit: TCP's own estimate of the peer's segment size. */
	snack_build_init(&b, ntohl(th->ack_seq),
			 inet_csk(sk)->icsk_ack.rcv_mss,
			 READ_ONCE(sn->cfg.max_vec));
	skb_rbtree_walk(ooo, &tp->out_of_order_queue) {
		if (snack_build_add(&b, TCP_SKB_CB(ooo)->seq,
				    TCP_SKB_CB(ooo)->end_seq))
			break;
	}
	if (snack_build_finish(&b, &pic)) {
		snack_stat_inc(sn, SNACK_STAT_EMPTY);
		return NF_ACCEPT;
	}
	pic.mode = READ_ONCE(sn->cfg.mode);

	optlen = seg.doff - sizeof(*th);
	opt = skb_header_pointer(skb, seg.thoff + sizeof(*th), optlen, buf);
	if (!opt) {
		snack_stat_inc(sn, SNACK_STAT_SKIPPED);
		return NF_ACCEPT;
	}
	len = snack_rx_rewrite(opt, optlen, &pic,
			       READ_ONCE(sn->cfg.sack_policy), out);
	if (len < 0) {
		snack_stat_inc(sn, len == SNACK_E_NOSPACE ?
			       SNACK_STAT_NO_SPACE : SNACK_STAT_SKIPPED);
		return NF_ACCEPT;
	}
	before = snack_sack_count(opt, optlen);
	after = snack_sack_count(out, len);
	if (snack_set_options(skb, state->pf, &seg, out, len, false)) {
		snack_stat_inc(sn, SNACK_STAT_RX_ERRORS);
		return NF_ACCEPT;
	}
	snack_stat_inc(sn, SNACK_STAT_WRITTEN);
	if (before > after)
		snack_stat_add(sn, SNACK_STAT_SACK_TRIMMED, before - after);
	return NF_ACCEPT;
}

static const struct nf_hook_ops snack_rx_ops[] = {
	{
		.hook		= snack_rx_hook,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_LOCAL_OUT,
		.priority	= SNACK_RX_PRIORITY,
	},
	{
		.hook		= snack_rx_hook,
		.pf		= NFPROTO_IPV6,
		.hooknum	= NF_INET_LOCAL_OUT,
		.priority	= SNACK_RX_PRIORITY,
	},
};

int snack_rx_register(struct net *net)
{
	return nf_register_net_hooks(net, snack_rx_ops, ARRAY_SIZE(snack_rx_ops));
}

void snack_rx_unregister(struct net *net)
{
	nf_unregister_net_hooks(net, snack_rx_ops, ARRAY_SIZE(snack_rx_ops));
}
