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
 * This file: module and namespace life cycle, the knobs under
 * net.tcp_snack.* (snack_knobs.h) and /proc/net/stat/tcp_snack.  Both
 * halves are off in every namespace until net.tcp_snack.receiver or
 * net.tcp_snack.sender is set there.
 */
#include <linux/module.h>

#include "snack.h"

unsigned int snack_net_id __read_mostly;

/* ------------------------------------------------------------- knobs */

#define AIRTCP_KNOB_OWNER struct snack_net
#define AIRTCP_KNOB_LIST "snack_knobs.h"
static const struct airtcp_knob snack_knobs[] = {
#include "airtcp_knobs.h"
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
	[SNACK_STAT_UNKNOWN_OPT]	= "unknown_opt",
	[SNACK_STAT_DEFERRED]		= "deferred",
	[SNACK_STAT_BUSY]		= "busy",
	[SNACK_STAT_RX_NO_SACK]		= "rx_no_sack",
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
	[SNACK_STAT_TX_UNKNOWN_OPT]	= "tx_unknown_opt",
};

static const struct airtcp_pernet_desc snack_desc = {
	.name		= "tcp_snack",
	.sysctl_path	= "net/tcp_snack",
	.net_id		= &snack_net_id,
	.knobs		= snack_knobs,
	.n_knobs	= ARRAY_SIZE(snack_knobs),
	.stat_names	= snack_stat_names,
	.n_stats	= SNACK_STAT_MAX,
};

/* ------------------------------------------------------- per namespace */

static int __net_init snack_net_init(struct net *net)
{
	struct snack_net *sn = snack_pernet(net);

	atomic_set(&sn->rotation, 0);
	return airtcp_pernet_init(&sn->pn, net, &snack_desc);
}

/* Hooks first, for every namespace of a batch; they hold no state. */
static void __net_exit snack_net_pre_exit(struct net *net)
{
	airtcp_pernet_pre_exit(&snack_pernet(net)->pn);
}

static void __net_exit snack_net_exit(struct net *net)
{
	airtcp_pernet_exit(&snack_pernet(net)->pn);
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
	int ret;

	BUILD_BUG_ON(offsetof(struct snack_net, pn));
	ret = register_pernet_subsys(&snack_net_ops);
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
MODULE_VERSION(AIRTCP_VERSION);
