/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * net.tcp_ddack.*: every knob of tcp_ddack, once (the form of the list:
 * airtcp_pernet.h).  Per network namespace; a write outside the range
 * fails with EINVAL and changes nothing; a limit above its user-namespace
 * ceiling needs CAP_NET_ADMIN in the initial user namespace (EPERM).
 * The testbed (plugins/ddack.py) and Documentation/tcp_ddack.rst are
 * checked against this list through kmod/knobs.json (make -C kmod
 * knobs).  No include guard.
 */
AIRTCP_SWITCH(enabled, ddack_switch,
	      "1 registers the hooks in this namespace; "
	      "0 unregisters them and sends what is held")
AIRTCP_KNOB(delay_us, proc_dointvec_minmax, 80000, 0, DDACK_HOLD_MAX_US, "us",
	    "d; 0 holds nothing (base TCP); "
	    "the initial d when adaptive = 1; "
	    "no ACK is held longer than the largest d, whatever pace_us says")
AIRTCP_KNOB(threshold, proc_dointvec_minmax, 2, 0, 1000, "dupacks",
	    "dupacks of an episode sent at once; "
	    "the (threshold+1)-th and later are held")
AIRTCP_KNOB(pace_us, proc_dointvec_minmax, 0, 0, 1000000, "us",
	    "0: held dupacks leave as one burst after d (the paper); "
	    "> 0: one every pace_us, what is left at once "
	    "when the largest d has passed since the first")
AIRTCP_LIMIT(max_held, 64, 1, 4096, 64, "ACKs",
	     "held dupacks per flow; beyond, the oldest is freed (evicted)")
AIRTCP_LIMIT(max_held_total, 4096, 1, 1048576, 4096, "ACKs",
	     "held dupacks of all flows of the namespace; "
	     "beyond, dupacks are sent at once (limited)")
AIRTCP_LIMIT(max_flows, 4096, 1, 1048576, 4096, "flows",
	     "flows tracked per namespace")
AIRTCP_KNOB(flow_timeout_s, proc_dointvec_minmax, 30, 1, 3600, "s",
	    "an idle flow's state is dropped after this")
AIRTCP_KNOB(sack_mode, proc_dointvec_minmax, DDACK_SACK_ASIDE, 0, 3,
	    "keep|strip|hold|aside",
	    "what is done to flows that negotiated SACK, decided when a flow "
	    "is first seen: 0 keep: held like any other, SACK blocks untouched "
	    "(the paper); "
	    "1 strip: until release, ACKs sent at once leave without the SACK "
	    "blocks that announce the hole; "
	    "2 hold: as 1, and SACK-bearing dupacks are held from the first "
	    "(threshold 0); "
	    "3 aside: not delayed at all, counted in aside_sack (a RACK sender "
	    "starts recovery from the first SACK-bearing dupack)")
AIRTCP_KNOB(aside_unfilled, proc_dointvec_minmax, 2, 0, 1000, "episodes",
	    "a flow steps aside (aside_unfilled) once its held episodes "
	    "released after d outnumber those filled within d by this many: "
	    "nothing repairs most of its losses locally; 0: never")
AIRTCP_KNOB(adaptive, ddack_sysctl_adaptive, 0, 0, 1, "bool",
	    "1: d follows the hole-fill times; "
	    "writing it restarts the estimate")
AIRTCP_KNOB(adaptive_pct, proc_dointvec_minmax, 90, 50, 99, "%",
	    "the percentile of fill times tracked")
AIRTCP_KNOB(adaptive_margin_pct, proc_dointvec_minmax, 125, 100, 1000, "%",
	    "adaptive d = estimate x margin / 100, "
	    "clamped to [delay_min_us, delay_max_us]")
AIRTCP_KNOB(delay_min_us, ddack_sysctl_bound, 5000, 0, DDACK_HOLD_MAX_US, "us",
	    "the smallest adaptive d; "
	    "delay_min_us <= delay_max_us is enforced on every write")
AIRTCP_KNOB(delay_max_us, ddack_sysctl_bound, 200000, 0, DDACK_HOLD_MAX_US,
	    "us",
	    "the largest adaptive d (200 ms: the paper's largest d); "
	    "delay_min_us <= delay_max_us is enforced on every write")
AIRTCP_STATUS(delay_current_us, ddack_sysctl_current, "us",
	      "the d in force now, fixed or adaptive")
