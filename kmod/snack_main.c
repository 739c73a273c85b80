// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcp_snack: Selective Negative ACKnowledgements on real Linux TCP.
 *
 * Cheng & Lin, "Performance of TCP over 802.11 wireless networks with a
 * SNACK-based error recovery", §IV: the receiver tells the sender every
 * hole of its window at once (hole 1 plus a bit-vector of further missing
 * MSS-sized blocks), so several losses per window are repaired without a
 * timeout.  Here the receiver writes the option from its socket's real
 * out-of-order queue (snack_rx.c) and the sender, an unmodified Linux TCP,
 * acts on it through its own SACK scoreboard (snack_tx.c).  Wire format
 * and option-space rules: snack_codec.h; documentation:
 * Documentation/snack.rst.
 *
 * This file: module and namespace life cycle, net.tcp_snack.* and
 * /proc/net/stat/tcp_snack.  Both halves are off in every namespace until
 * net.tcp_snack.receiver or net.tcp_snack.sender is set there.
 */
#include <linux/module.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/tcp.h>

#include "airtcp_pernet.h"
#include "snack.h"
#include "snack_codec.h"

unsigned int snack_net_id __read_mostly;

static const struct snack_cfg snack_defaults = {
	.receiver	= 0,
	.sender		= 0,
	.mode		= SNACK_MODE_EXP,
	.sack_policy	= SNACK_SACK_TRIM,
	.max_vec	= SNACK_MAX_VEC,
};

/* --------------------------------------------------- segment surgery */

/* 0 if @skb is a TCP segment whose header lies within it. */
int snack_seg_parse(const struct sk_buff *skb, u8 pf, struct snack_seg *seg)
{
	unsigned int nhoff = skb_network_offset(skb);
	struct tcphdr _th;
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

		/* TCP right after the fixed header, as Linux sends it. */
		if (ip6h->nexthdr != IPPROTO_TCP)
			return -EINVAL;
		seg->thoff = nhoff + sizeof(*ip6h);
		seg->l4len = ntohs(ip6h->payload_len);
	}
	th = skb_header_pointer(skb, seg->thoff, sizeof(_th), &_th);
	if (!th)
		return -EINVAL;
	seg->doff = th->doff * 4;
	if (seg->doff < sizeof(*th) || seg->doff > seg->l4len ||
	    seg->thoff + seg->l4len != skb->len)
		return -EINVAL;
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
int snack_set_options(struct sk_buff *skb, u8 pf, const struct snack_seg *seg,
		      const u8 *opt, unsigned int optlen, bool incoming)
{
	int delta = (int)(sizeof(struct tcphdr) + optlen) - (int)seg->doff;
	unsigned int tcplen = seg->l4len + delta;
	struct tcphdr *th;

	if (seg->l4len != seg->doff || optlen > MAX_TCP_OPTION_SPACE ||
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

/* ------------------------------------------------------------- sysctls */

static int snack_zero;
static int snack_one = 1;
static int snack_two = 2;
static int snack_max_vec = SNACK_MAX_VEC;

#define SNACK_CFG(field) AIRTCP_CFG_OFFSET(struct snack_cfg, field)

static struct snack_net *snack_from_table(const struct ctl_table *table,
					  size_t offset)
{
	return (struct snack_net *)((char *)table->data - offset -
				    offsetof(struct snack_net, cfg));
}

/* receiver, sender: register or unregister that half's hooks. */
static int snack_sysctl_half(struct ctl_table *table, int write,
			     void *buffer, size_t *lenp, loff_t *ppos)
{
	bool rx = !strcmp(table->procname, "receiver");
	struct snack_net *sn = snack_from_table(table, rx ?
			offsetof(struct snack_cfg, receiver) :
			offsetof(struct snack_cfg, sender));
	struct ctl_table tmp = *table;
	bool *on = rx ? &sn->rx_hooks : &sn->tx_hooks;
	int val, ret;

	if (!write)
		return proc_dointvec_minmax(table, write, buffer, lenp, ppos);

	mutex_lock(&sn->mutex);
	val = *(int *)table->data;
	tmp.data = &val;
	ret = proc_dointvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (ret || !val == !*on)
		goto out;
	if (val) {
		if (sn->exiting)
			ret = -ENODEV;
		else
			ret = rx ? snack_rx_register(sn->net) :
				   snack_tx_register(sn->net);
		if (ret)
			goto out;
		*on = true;
	} else {
		if (rx)
			snack_rx_unregister(sn->net);
		else
			snack_tx_unregister(sn->net);
		*on = false;
	}
out:
	if (!ret)
		WRITE_ONCE(*(int *)table->data, val);
	mutex_unlock(&sn->mutex);
	return ret;
}

#define SNACK_KNOB(name, handler, lo, hi) {				\
	.procname	= #name,					\
	.data		= SNACK_CFG(name),				\
	.maxlen		= sizeof(int),					\
	.mode		= 0644,						\
	.proc_handler	= handler,					\
	.extra1		= lo,						\
	.extra2		= hi,						\
}

static const struct ctl_table snack_sysctl_template[] = {
	SNACK_KNOB(receiver, snack_sysctl_half, &snack_zero, &snack_one),
	SNACK_KNOB(sender, snack_sysctl_half, &snack_zero, &snack_one),
	SNACK_KNOB(mode, proc_dointvec_minmax, &snack_zero, &snack_one),
	SNACK_KNOB(sack_policy, proc_dointvec_minmax, &snack_zero, &snack_two),
	SNACK_KNOB(max_vec, proc_dointvec_minmax, &snack_zero, &snack_max_vec),
	{ }
};

/* ---------------------------------------------- /proc/net/stat/tcp_snack */

static const char *const snack_stat_names[SNACK_STAT_MAX] = {
	[SNACK_STAT_OOO_ACKS]		= "ooo_acks",
	[SNACK_STAT_WRITTEN]		= "written",
	[SNACK_STAT_SACK_TRIMMED]	= "sack_trimmed",
	[SNACK_STAT_NO_SPACE]		= "no_space",
	[SNACK_STAT_SKIPPED]		= "skipped",
	[SNACK_STAT_EMPTY]		= "empty",
	[SNACK_STAT_RX_ERRORS]		= "rx_errors",
	[SNACK_STAT_SEEN]		= "seen",
	[SNACK_STAT_ACTED]		= "acted",
	[SNACK_STAT_SACK_ADDED]		= "sack_added",
	[SNACK_STAT_MALFORMED]		= "malformed",
	[SNACK_STAT_SCPS_IGNORED]	= "scps_ignored",
	[SNACK_STAT_NO_SOCKET]		= "no_socket",
	[SNACK_STAT_NO_SACK]		= "no_sack",
	[SNACK_STAT_OUT_OF_WINDOW]	= "out_of_window",
	[SNACK_STAT_NOT_PURE]		= "not_pure",
	[SNACK_STAT_BAD_CSUM]		= "bad_csum",
	[SNACK_STAT_TX_ERRORS]		= "tx_errors",
};

static u64 __percpu *snack_counters(const struct net *net)
{
	return (u64 __percpu *)snack_pernet(net)->stats;
}

static const struct airtcp_stat_desc snack_stat_desc = {
	.names		= snack_stat_names,
	.n		= SNACK_STAT_MAX,
	.counters	= snack_counters,
};

/* ------------------------------------------------------- per namespace */

static int __net_init snack_net_init(struct net *net)
{
	struct snack_net *sn = snack_pernet(net);
	int ret = -ENOMEM;

	sn->net = net;
	sn->cfg = snack_defaults;
	mutex_init(&sn->mutex);
	atomic_set(&sn->rotation, 0);
	sn->stats = alloc_percpu(struct snack_stats);
	if (!sn->stats)
		return -ENOMEM;
	sn->sysctl = airtcp_sysctl_register(net, "net/tcp_snack",
					    snack_sysctl_template,
					    ARRAY_SIZE(snack_sysctl_template) - 1,
					    &sn->cfg);
	if (!sn->sysctl)
		goto err_sysctl;
	ret = airtcp_stat_create(net, "tcp_snack", &snack_stat_desc);
	if (ret)
		goto err_proc;
	return 0;

err_proc:
	airtcp_sysctl_unregister(sn->sysctl);
err_sysctl:
	free_percpu(sn->stats);
	return ret;
}

/* Hooks first, for every namespace of a batch; they hold no state. */
static void __net_exit snack_net_pre_exit(struct net *net)
{
	struct snack_net *sn = snack_pernet(net);

	mutex_lock(&sn->mutex);
	sn->exiting = true;
	if (sn->rx_hooks)
		snack_rx_unregister(net);
	if (sn->tx_hooks)
		snack_tx_unregister(net);
	sn->rx_hooks = false;
	sn->tx_hooks = false;
	mutex_unlock(&sn->mutex);
}

static void __net_exit snack_net_exit(struct net *net)
{
	struct snack_net *sn = snack_pernet(net);

	airtcp_stat_remove(net, "tcp_snack");
	airtcp_sysctl_unregister(sn->sysctl);
	free_percpu(sn->stats);
}

static struct pernet_operations snack_net_ops = {
	.init		= snack_net_init,
	.pre_exit	= snack_net_pre_exit,
	.exit		= snack_net_exit,
	.id		= &snack_net_id,
	.size		= sizeof(struct snack_net),
};

static int __init snack_init(void)
{
	int ret = register_pernet_subsys(&snack_net_ops);

	if (ret)
		return ret;
	pr_info("loaded; off in every namespace until net.tcp_snack.receiver or .sender=1\n");
	return 0;
}

static void __exit snack_exit(void)
{
	/* pre_exit unregisters the hooks (a grace period), exit frees. */
	unregister_pernet_subsys(&snack_net_ops);
}

module_init(snack_init);
module_exit(snack_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("airtcp developers");
MODULE_DESCRIPTION("SNACK options from the out-of-order queue, acted on by a Linux sender, per network namespace");
MODULE_VERSION(DDACK_VERSION);
