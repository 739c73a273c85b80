/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * net.tcp_snack.*: every knob of tcp_snack, once (the form of the list:
 * airtcp_pernet.h).  Per network namespace; a write outside the range
 * fails with EINVAL and changes nothing.  The testbed (plugins/snack.py)
 * and Documentation/snack.rst are checked against this list through
 * kmod/knobs.json (make -C kmod knobs).  No include guard.
 */
AIRTCP_SWITCH(receiver, snack_rx_switch,
	      "1: write SNACK on outgoing pure ACKs "
	      "(registers the LOCAL_OUT hooks of this namespace)")
AIRTCP_SWITCH(sender, snack_tx_switch,
	      "1: act on incoming SNACK "
	      "(registers the LOCAL_IN hooks of this namespace)")
AIRTCP_KNOB(mode, proc_dointvec_minmax, SNACK_MODE_EXP, 0, 1, "exp|scps",
	    "0: kind 254 with ExID 0x534e; "
	    "1: SCPS-TP kind 21, short form (hole 1 only)")
AIRTCP_KNOB(sack_policy, proc_dointvec_minmax, SNACK_SACK_KEEP, 0, 2,
	    "keep|trim|replace",
	    "what gives way when the option space is short: "
	    "0 keep (SNACK only where it fits: a sender without the sender "
	    "half loses no SACK block), 1 trim, 2 replace")
AIRTCP_KNOB(max_vec, proc_dointvec_minmax, SNACK_MAX_VEC, 0, SNACK_MAX_VEC,
	    "bytes",
	    "bit-vector bytes at most (8 blocks a byte)")
