// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_snack, receiver half: a LOCAL_OUT hook that gives every pure ACK of
 * a connection holding out-of-order data a SNACK option computed from the
 * socket's out-of-order queue itself (tp->out_of_order_queue), not
 * guessed from the SACK blocks TCP chose to send.
 *
 * Locking (Documentation/kernel-notes.rst §2 and §8): the queue may be
 * read only by whoever owns the socket.  Called synchronously from TCP's
 * transmit path (__tcp_transmit_skb() -> ip_queue_xmit() ->
 * ip_local_out() -> nf_hook()), the hook runs in a context that owns it:
 * lock_sock() in process context, bh_lock_sock() in the receive path,
 * TCP's timers and tasklet, the spinlock in release_sock()'s callback.
 * But a queueing hook before ours (an nft "queue" rule in OUTPUT at a
 * priority below -500, an NFQUEUE target) hands the ACK to userspace,
 * and the rest of the hooks, this one among them, then run from
 * nf_reinject() in the verdict's sendmsg(), holding only RCU: TCP may be
 * changing the tree on another CPU meanwhile.  snack_rx_read() tells the
 * two apart by where the hook's state lives: nf_hook() keeps it on the
 * stack of the caller, nf_queue keeps a copy in its heap entry.  A
 * reinjected ACK gets the lock the way TCP's receive path takes it, or,
 * when that cannot be had without waiting, goes as it is (counted busy).
 *
 * Only pure ACKs are touched: a data segment was sized for the options
 * TCP chose (tcp_current_mss()), and growing its header could push it
 * over the path MTU.  snack_codec.c decides the new option list; this
 * hook writes it.
 */
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/sched/task_stack.h>
#include <net/inet_connection_sock.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "snack.h"

/*
 * Before raw (-300), defrag (-400) and raw-before-defrag (-450): early,
 * though what is sound no longer depends on it (snack_rx_read()).
 */
#define SNACK_RX_PRIORITY	(-500)

/*
 * The picture of @sk's out-of-order queue for an ACK of @ack; 0, or
 * SNACK_E_EMPTY if no whole block is held.  Caller may read the queue.
 */
static int snack_rx_picture(const struct sock *sk, u32 ack,
			    unsigned int max_vec, struct snack_picture *pic)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct sk_buff *ooo;
	struct snack_builder b;

	/* The unit: TCP's own estimate of the peer's segment size. */
	snack_build_init(&b, ack, inet_csk(sk)->icsk_ack.rcv_mss, max_vec);
	skb_rbtree_walk(ooo, &tp->out_of_order_queue) {
		if (snack_build_add(&b, TCP_SKB_CB(ooo)->seq,
				    TCP_SKB_CB(ooo)->end_seq))
			break;
	}
	return snack_build_finish(&b, pic);
}

/* snack_rx_read(): the socket is not ours to read now. */
#define SNACK_RX_BUSY	1

/*
 * snack_rx_picture() if this call of the hook may read @sk's queue, under
 * the socket's spinlock if it has to take it (*@deferred), else
 * SNACK_RX_BUSY.
 *
 *  - In softirq context the only callers are TCP's receive path, timers
 *    and tasklet, and nf_queue's fail-open reinjection from within one of
 *    them: all hold bh_lock_sock() (nf_reinject() after a verdict runs in
 *    the process that sent the verdict, never here).
 *  - In process context, a hook state on this task's stack is nf_hook()'s
 *    own (include/linux/netfilter.h: "struct nf_hook_state state;"), so
 *    the call is synchronous from TCP, which owns the socket: lock_sock(),
 *    lock_sock_fast(), or release_sock()'s callback under the spinlock.
 *  - Otherwise the state is an nf_queue_entry's (kmalloc'ed): a
 *    reinjected ACK, after the queue's verdict, with no lock held by
 *    anyone for us.  Take the socket's spinlock as tcp_v4_rcv() does and
 *    read only if no process owns the socket; never wait for it: a
 *    reinjection may also come synchronously (fail-open, bypass) from a
 *    caller that holds that very spinlock already.
 *
 * On a kernel with lockdep, sock_owned_by_me() checks the first two
 * claims on every call and warns if one is wrong.
 */
static int snack_rx_read(struct sock *sk, const struct nf_hook_state *state,
			 u32 ack, unsigned int max_vec,
			 struct snack_picture *pic, bool *deferred)
{
	int ret;

	*deferred = !in_serving_softirq() && !object_is_on_stack(state);
	if (!*deferred) {
		sock_owned_by_me(sk);
		return snack_rx_picture(sk, ack, max_vec, pic);
	}
	if (!spin_trylock_bh(&sk->sk_lock.slock))
		return SNACK_RX_BUSY;
	if (sock_owned_by_user(sk))
		ret = SNACK_RX_BUSY;
	else
		ret = snack_rx_picture(sk, ack, max_vec, pic);
	spin_unlock_bh(&sk->sk_lock.slock);
	return ret;
}

static unsigned int snack_rx_hook(void *priv, struct sk_buff *skb,
				  const struct nf_hook_state *state)
{
	struct snack_net *sn = snack_pernet(state->net);
	u8 buf[AIRTCP_OPT_SPACE], out[SNACK_OUT_BUF];
	struct sock *sk = skb->sk;
	struct snack_picture pic;
	struct airtcp_seg seg;
	unsigned int optlen, before, after;
	const u8 *opt;
	bool deferred;
	int len, ret;

	if (!sk || sk != state->sk || !sk_fullsock(sk) ||
	    sk->sk_protocol != IPPROTO_TCP || sk->sk_type != SOCK_STREAM)
		return NF_ACCEPT;
	if (skb_is_gso(skb) || airtcp_seg_locate(skb, state->pf, &seg) ||
	    !airtcp_seg_pure_ack(&seg))
		return NF_ACCEPT;
	/* A racy look first: the common case, nothing missing, costs no lock. */
	if (RB_EMPTY_ROOT(&tcp_sk(sk)->out_of_order_queue))
		return NF_ACCEPT;
	airtcp_stat_inc(&sn->pn, SNACK_STAT_OOO_ACKS);
	/*
	 * Step aside for a connection that did not negotiate SACK: its
	 * sender acts on SNACK only as SACK blocks, which it would ignore
	 * (the sender half counts no_sack and does nothing), so the option
	 * would only lengthen every ACK.  Fixed at the handshake; a bitfield.
	 */
	if (!data_race(tcp_is_sack(tcp_sk(sk)))) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_RX_NO_SACK);
		return NF_ACCEPT;
	}

	ret = snack_rx_read(sk, state, ntohl(seg.th.ack_seq),
			    READ_ONCE(sn->cfg.max_vec), &pic, &deferred);
	if (deferred)
		airtcp_stat_inc(&sn->pn, SNACK_STAT_DEFERRED);
	if (ret == SNACK_RX_BUSY) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_BUSY);
		return NF_ACCEPT;
	}
	if (ret) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_EMPTY);
		return NF_ACCEPT;
	}
	pic.mode = READ_ONCE(sn->cfg.mode);

	optlen = airtcp_seg_optlen(&seg);
	opt = airtcp_seg_options(skb, &seg, buf);
	if (!opt) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_SKIPPED);
		return NF_ACCEPT;
	}
	len = snack_rx_rewrite(opt, optlen, &pic,
			       READ_ONCE(sn->cfg.sack_policy), out);
	if (len < 0) {
		airtcp_stat_inc(&sn->pn, len == SNACK_E_NOSPACE ?
			       SNACK_STAT_NO_SPACE :
			       len == SNACK_E_UNKNOWN ?
			       SNACK_STAT_UNKNOWN_OPT : SNACK_STAT_SKIPPED);
		return NF_ACCEPT;
	}
	before = snack_sack_count(opt, optlen);
	after = snack_sack_count(out, len);
	if (airtcp_seg_set_options(skb, state->pf, &seg, out, len, false)) {
		airtcp_stat_inc(&sn->pn, SNACK_STAT_RX_ERRORS);
		return NF_ACCEPT;
	}
	airtcp_stat_inc(&sn->pn, SNACK_STAT_WRITTEN);
	if (before > after)
		airtcp_stat_add(&sn->pn, SNACK_STAT_SACK_TRIMMED, before - after);
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

const struct airtcp_switch snack_rx_switch = {
	.bit	= 0,
	.ops	= snack_rx_ops,
	.n_ops	= ARRAY_SIZE(snack_rx_ops),
};
