// SPDX-License-Identifier: GPL-2.0-only
/* pepd's keys; the parser, flags, defaults and help are cfgparse.c's. */
#include <stddef.h>
#include <unistd.h>

#include "config.h"

static const char *const filter_names[] = { "passthrough", "snoop", "snoop+", "pc", NULL };
static const char *const rules_names[] = { "auto", "nft", "iptables-nft", "iptables-legacy", "none", NULL };
static const char *const forward_names[] = { "inject", "accept", "auto", NULL };
static const char *const sack_flows_names[] = { "aside", "act", NULL };
static const char *const drop_dupacks_names[] = { "false", "true", "auto", NULL };

#define F(field) CFG_FIELD(struct pep_config, field)
#define MS 1000000ULL
#define S_ 1000000000ULL

static const struct cfg_key keys[] = {
	{ .name = "filter", .type = CFG_ENUM, F(filter), .names = filter_names, .def = "snoop",
	  .section = "the daemon",
	  .help = "what runs on every TCP flow through the wireless interface(s): passthrough (track and count "
		  "only), snoop (local retransmission from a cache, dupacks kept from senders without SACK), snoop+ "
		  "(snoop sending 1 + copies copies per local retransmission) or pc (the Packet Controller: dupack "
		  "threshold raised, acknowledged retransmissions dropped)" },
	{ .name = "wireless", .type = CFG_IFACES, F(wireless), .min = 0, .max = PEP_MAX_IFACES, .def = "",
	  .required = true, .example = "wlan0",
	  .help = "the wireless interface(s) of this base station, comma-separated: data leaving on them is the "
		  "downlink pepd caches, packets arriving on them the receivers' ACKs" },
	{ .name = "queue", .type = CFG_UINT, F(queue), .min = 0, .max = 65535, .def = "0",
	  .help = "the first NFQUEUE number: pepd uses queue .. queue + queues - 1 and names its rules by queue; "
		  "one pepd per queue" },
	{ .name = "queues", .type = CFG_UINT_AUTO, F(queues), .min = 1, .max = PEP_MAX_QUEUES, .def = "auto",
	  .help = "NFQUEUEs, each served by a thread of its own with its own flows: the kernel spreads connections "
		  "over them by a hash of their two addresses, the same both ways (several clients spread, one "
		  "client's connections share a queue); auto: one per online CPU.  max_flows and total_cache_bytes "
		  "are divided among them" },
	{ .name = "verdict_batch", .type = CFG_UINT, F(verdict_batch), .min = 1, .max = 1024, .def = "64",
	  .unit = "packets",
	  .help = "verdicts held before they go back to the kernel in one message (a run of plain accepts as one "
		  "batch verdict); a round of packets ends with them sent anyway, so this bounds the wait only "
		  "under load: 1 answers each packet at once" },
	{ .name = "busy_poll", .type = CFG_DURATION, F(busy_poll_ns), .min = 0, .max = 1 * MS, .def = "0us",
	  .help = "after a round of packets, keep reading the queue this long before sleeping: a packet that "
		  "follows closely (a request's answer) then finds the thread awake instead of waking it, tens "
		  "of microseconds on an idle CPU, at the price of up to this much CPU after every round; 0us: off" },
	{ .name = "headers_only", .type = CFG_BOOL, F(headers_only), .def = "false",
	  .help = "when the filter needs no packet data (passthrough), have the kernel copy only the first 256 "
		  "bytes (the headers) of each packet to pepd; a longer packet is then judged by its headers alone "
		  "and passed unchanged, and one whose checksum nobody verified is counted headers_unverifiable, "
		  "not checked (measured: no faster on a server core)" },
	{ .name = "rules", .type = CFG_ENUM, F(rules), .names = rules_names, .def = "auto",
	  .help = "who installs the queue rules: auto (nft, then iptables-nft, then iptables-legacy: the first the "
		  "kernel accepts), one of those, or none (you did: both directions of the wireless interfaces, "
		  "one queue, bypass, skipping mark); pepd removes what it installed when it stops, and after a "
		  "kill -9 the next start (or pepd cleanup) removes the leftovers" },
	{ .name = "mark", .type = CFG_UINT, F(mark), .min = 1, .max = 0xffffffffULL, .def = "0x10000",
	  .help = "fwmark bit(s) pepd sets on its own packets (SO_MARK); the queue rules skip packets carrying them" },
	{ .name = "bypass_mark", .type = CFG_UINT, F(bypass_mark), .min = 0, .max = 0xffffffffULL, .def = "0x20000",
	  .help = "connection-mark bit(s) for flows the filter steps aside for for good (pc: flows_stepped_aside): "
		  "pepd hands such a flow's packet back through its chain with this mark (NF_REPEAT), its rules save "
		  "it to the connection's conntrack mark and queue nothing of that connection any more "
		  "(flows_bypassed), so a flow pepd would only pass untouched costs it nothing; with pepd's own "
		  "rules on routed interfaces only (not rules = none, not a bridge port), and only for pc (the "
		  "other filters never step aside, and their rules need no conntrack); 0: queue every packet" },
	{ .name = "queue_maxlen", .type = CFG_UINT, F(queue_maxlen), .min = 16, .max = 1u << 20, .def = "4096",
	  .unit = "packets",
	  .help = "kernel queue length; when it is full, or the netlink socket is, packets pass without pepd "
		  "(fail_open)" },
	{ .name = "socket_buffer", .type = CFG_SIZE, F(socket_buffer), .min = 65536, .max = 1ULL << 30,
	  .def = "8MiB", .help = "netlink receive buffer (SO_RCVBUFFORCE)" },
	{ .name = "gso", .type = CFG_BOOL, F(gso), .def = "true",
	  .help = "take GSO/GRO super-packets whole (NFQA_CFG_F_GSO) instead of having the kernel segment them "
		  "first: far faster with offloads on; one cached super-packet is one entry of MSS-sized slices, "
		  "and a local retransmission re-sends only the slices the receiver has not acknowledged" },
	{ .name = "fail_open", .type = CFG_BOOL, F(fail_open), .def = "true",
	  .help = "accept packets the kernel cannot queue to pepd (NFQA_CFG_F_FAIL_OPEN) instead of dropping them" },
	{ .name = "control_socket", .type = CFG_STRING, F(control_socket), .def = "",
	  .help = "where pepd stats finds the daemon; empty: /run/pepd/pepd-QUEUE.sock" },
	{ .name = "log_flows", .type = CFG_BOOL, F(log_flows), .def = "false",
	  .help = "log each flow's counters to stderr (the journal) when it ends" },
	{ .name = "trace_file", .type = CFG_STRING, F(trace_file), .def = "",
	  .help = "debugging: write one line per packet, timer and send (verdict, actions) to this file; empty: off" },

	{ .name = "max_flows", .type = CFG_UINT, F(max_flows), .min = 1, .max = 1u << 22, .def = "4096",
	  .unit = "flows", .section = "the flow table",
	  .help = "flows tracked at once; further flows pass untracked (flows_untracked)" },
	{ .name = "flow_cache_bytes", .type = CFG_SIZE, F(flow_cache_bytes), .min = 2048, .max = 1ULL << 30,
	  .def = "256KiB",
	  .help = "cache bound per flow: segments beyond it pass uncached (cache_full) and their losses are the "
		  "sender's; size it to the egress queue plus the wireless hop's bandwidth-delay product" },
	{ .name = "total_cache_bytes", .type = CFG_SIZE, F(total_cache_bytes), .min = 4096, .max = 1ULL << 40,
	  .def = "64MiB",
	  .help = "memory the caches of all flows may hold together, counted as the allocator spends it (each copy "
		  "with its allocation overhead, each flow's descriptors)" },
	{ .name = "flow_cache_segments", .type = CFG_UINT, F(flow_cache_segments), .min = 16, .max = 65536,
	  .def = "1024", .unit = "segments",
	  .help = "segments cached per flow at most: tiny segments cost memory and work per ACK far beyond their "
		  "bytes; further ones pass uncached (cache_full)" },
	{ .name = "idle_timeout", .type = CFG_DURATION, F(idle_timeout_ns), .min = 1 * S_, .max = 86400 * S_,
	  .def = "60s", .help = "a flow not seen for this long is forgotten" },
	{ .name = "adopt_midstream", .type = CFG_BOOL, F(adopt_midstream), .def = "false",
	  .help = "also act on connections whose start pepd did not see (e.g. after a restart), from their next "
		  "data segment; off, such connections pass untouched (not_adopted) and only flows whose "
		  "handshake pepd saw are acted on" },

	{ .name = "rtx_thresh", .type = CFG_UINT, F(rtx_thresh), .min = 1, .max = 16, .def = "2",
	  .section = "snoop and snoop+",
	  .help = "duplicate ACKs (without SACK) or later transmissions SACKed (with SACK) before a cached segment "
		  "is retransmitted locally; 1 is ns-2's setting, 2 because Linux receivers send the odd "
		  "duplicate ACK without an arrival; raise it on a hop that reorders" },
	{ .name = "reorder_window", .type = CFG_UINT, F(reorder_window_percent), .min = 0, .max = 100, .def = "0",
	  .unit = "percent of the hop's minimum RTT",
	  .help = "with SACK: a segment that a later transmission's arrival shows missing is repaired only once "
		  "it is this much later than that transmission's round trip allows, so that a hop that "
		  "reorders draws no needless repairs (RACK's reordering window; Linux uses 25); 0: at once" },
	{ .name = "max_local_rtx", .type = CFG_UINT, F(max_local_rtx), .min = 1, .max = 32, .def = "4",
	  .unit = "rounds", .help = "local retransmission rounds per segment before it is left to the sender" },
	{ .name = "rto_initial", .type = CFG_DURATION, F(rto_initial_ns), .min = 1 * MS, .max = 60 * S_,
	  .def = "200ms", .help = "local retransmission timeout before the first RTT sample" },
	{ .name = "rto_min", .type = CFG_DURATION, F(rto_min_ns), .min = 1 * MS, .max = 60 * S_, .def = "20ms",
	  .help = "lower bound of the local retransmission timeout" },
	{ .name = "rto_max", .type = CFG_DURATION, F(rto_max_ns), .min = 1 * MS, .max = 60 * S_, .def = "1s",
	  .help = "upper bound of the local retransmission timeout, backoff included" },
	{ .name = "max_burst", .type = CFG_UINT, F(max_burst), .min = 1, .max = 32, .def = "8",
	  .unit = "segments", .help = "segments retransmitted locally per event at most" },
	{ .name = "use_sack", .type = CFG_BOOL, F(use_sack), .def = "true",
	  .help = "read the receiver's SACK blocks to find every hole (when the connection negotiated SACK)" },
	{ .name = "drop_dupacks", .type = CFG_ENUM, F(drop_dupacks), .names = drop_dupacks_names, .def = "auto",
	  .help = "snoop: drop the dupacks (and hold a classic sender's partial ACKs) of holes repaired here: auto "
		  "for flows that did not negotiate SACK, true for every flow (the paper), false for none, like a "
		  "TCP-unaware link layer (the stand-in local recovery of the scheme snoop-rtx).  A SACK sender "
		  "shown its dupacks keeps sending during a repair, and Linux undoes the recovery they start once "
		  "the repair's ACK echoes the original's timestamp; hidden, it waits on its window" },
	{ .name = "hide_sack", .type = CFG_BOOL, F(hide_sack), .def = "false",
	  .help = "blank the SACK option of ACKs passed to the sender while every hole is cached here (a SACK "
		  "sender would otherwise retransmit them itself), and cut it to one block above a hole that is "
		  "the sender's; with drop_dupacks = true, the paper's Snoop for a SACK sender" },
	{ .name = "discount_copy_dupacks", .type = CFG_BOOL, F(discount_copy_dupacks), .def = "true",
	  .help = "do not count the dupacks drawn by Snoop+'s extra copies; false reproduces the paper's false "
		  "local rounds for copies >= 3" },
	{ .name = "ack_acked_rtx", .type = CFG_BOOL, F(ack_acked_rtx), .def = "true",
	  .help = "drop sender retransmissions of data the receiver has acknowledged and answer them with an ACK "
		  "in its name (Snoop)" },
	{ .name = "dsack_dropped_rtx", .type = CFG_BOOL, F(dsack_dropped_rtx), .def = "true",
	  .help = "snoop, with SACK shown to the sender (hide_sack off): when a sender retransmission of a segment "
		  "repaired here is dropped, tell the sender with a D-SACK block (RFC 2883), as the receiver would "
		  "have: Linux then undoes the window reduction and widens RACK's reordering window, so later "
		  "repairs no longer start its recovery; the receiver's D-SACKs for duplicates of pepd's own "
		  "repairs are kept from the sender" },
	{ .name = "window_clamp", .type = CFG_BOOL, F(window_clamp), .def = "true",
	  .help = "snoop: cap the window the sender sees at window_clamp_percent of the path's bandwidth-delay "
		  "product (the hop's delivery rate x the path's minimum round trip), lower while the egress "
		  "queue refuses segments, so that hiding losses does not let the sender overrun this box's "
		  "queue" },
	{ .name = "window_clamp_percent", .type = CFG_UINT, F(window_clamp_percent), .min = 100, .max = 400,
	  .def = "150", .unit = "percent of the path's BDP",
	  .help = "snoop: the window clamp, in percent of the path's bandwidth-delay product: what the path may "
		  "hold beyond what the wireless host has received; the excess over 100 % is the queue this box "
		  "allows on purpose (and not counted as congestion by aqm_target); 200 kept the sender going "
		  "through repairs before repair_window_updates, which makes a smaller one enough; 120 with a "
		  "10 ms window_clamp_min_queue kept a BBR sender's round trip within 10 % of stock's on a fading "
		  "8 Mbit/s hop, where 150 adds 15-20 %, but cost 3-5 % of the goodput on a 2 Mbit/s hop and "
		  "a short 802.11b path; below about 130 a BBR sender stays in its 1.25 probing phase (Snoop "
		  "hides the losses that would end it), so its queue is the whole excess "
		  "(Documentation/eval/pepd.rst)" },
	{ .name = "window_clamp_min_queue", .type = CFG_DURATION, F(window_clamp_min_queue_ns), .min = 0,
	  .max = 1 * S_, .def = "25ms",
	  .help = "snoop: the least queue the window clamp allows beyond one BDP, as time at the hop's delivery "
		  "rate: on a short path window_clamp_percent's share of the BDP is a few milliseconds, less than "
		  "the jitter of the hop's deliveries and of the ACKs, and the link idles (an 802.11b hop behind a "
		  "1 ms wired side: 150 % was four segments and cost 17 % of the goodput; "
		  "Documentation/eval/pepd.rst); where that share is longer it stands; 0ms: "
		  "window_clamp_percent alone" },
	{ .name = "window_clamp_min_segments", .type = CFG_UINT, F(window_clamp_min_segments), .min = 0,
	  .max = 64, .def = "0", .unit = "segments",
	  .help = "snoop: the least queue the window clamp allows beyond one BDP, in the flow's segments: on a "
		  "slow hop a share of the round trip is only a few segments, and a delayed ACK, a repair in the "
		  "queue or a MAC's retry chain then leaves the link idle (120 % with a 10 ms floor was 3 "
		  "segments on a 2 Mbit/s hop and cost 4-5 %; Documentation/eval/pepd.rst); the larger of this, "
		  "window_clamp_min_queue and window_clamp_percent's share stands; 0: off" },
	{ .name = "repair_window_updates", .type = CFG_BOOL, F(repair_window_updates), .def = "true",
	  .help = "snoop: while this box repairs a hole, pass the wireless host's duplicate ACKs on to the "
		  "sender as window updates (SACK blanked) that open the clamped window by what arrived above "
		  "the hole, so that the sender goes on sending at the rate the wireless host receives; false "
		  "drops them (the papers' Snoop: the sender stalls once its window is used up); needs "
		  "window_clamp" },
	{ .name = "aqm_target", .type = CFG_DURATION, F(aqm_target_ns), .min = 0, .max = 10 * S_, .def = "40ms",
	  .help = "snoop: queueing delay on the wireless hop, beyond what window_clamp allows, above which the "
		  "sender gets a congestion signal (one dropped segment, left to it), since hiding losses also "
		  "hides congestion; 0ms: off" },
	{ .name = "aqm_interval", .type = CFG_DURATION, F(aqm_interval_ns), .min = 1 * MS, .max = 10 * S_,
	  .def = "100ms",
	  .help = "snoop: the delay must stay above aqm_target this long before a signal, and signals are at "
		  "least this far apart" },
	{ .name = "share_hop_rtt", .type = CFG_BOOL, F(share_hop_rtt), .def = "true",
	  .help = "snoop: take the lowest round trip of the wireless hop seen by any flow to the same wireless "
		  "host as each flow's minimum (its own, if lower): a flow that starts while others keep the "
		  "radio's queue full never sees the hop without a queue itself, and its window clamp and "
		  "aqm_target would take that queue for the hop; false: each flow learns its own" },
	{ .name = "egress_drops", .type = CFG_BOOL, F(egress_drops), .def = "false",
	  .help = "snoop: read the drop counters of the wireless interfaces' queueing disciplines (every 10 ms "
		  "while packets pass) and leave the first loss found after they rose to the sender instead of "
		  "repairing it, once per sender reaction: what an AQM in front of the radio (fq_codel's CoDel) "
		  "or a full queue dropped is a congestion signal, not a wireless loss; a root netem is taken "
		  "for the channel and the queue below it is read; drops inside mac80211's own queues are not "
		  "seen" },
	{ .name = "forward", .type = CFG_ENUM, F(forward), .names = forward_names, .def = "auto",
	  .help = "snoop: how cached data leaves: inject (pepd sends it, so a full egress queue is seen and that "
		  "congestion loss left to the sender), accept (the kernel forwards the original; drops at "
		  "this box's own queue are then repaired locally and hidden, Snoop's classic weakness) or auto "
		  "(inject what fits the wireless MTU, accept GSO super-packets, which pepd could only send as "
		  "MTU packets one by one, the kernel's GSO far cheaper)" },
	{ .name = "rtx_priority", .type = CFG_UINT, F(rtx_priority), .min = 0, .max = 0xffffffffULL, .def = "0",
	  .help = "SO_PRIORITY of local retransmissions and Snoop+ copies (new data and generated ACKs keep 0): "
		  "with a priority-aware egress they go ahead of the queue, e.g. 65552 (0x10010) for HTB class "
		  "1:10, or 256 + the 802.1d priority for a Wi-Fi driver's access categories (262: voice); 0: "
		  "the same queue as everything else" },
	{ .name = "copies", .type = CFG_UINT_AUTO, F(copies), .min = 0, .max = 3, .def = "2",
	  .help = "snoop+: extra copies per local retransmission, 0..3, or auto (chosen per flow from the "
		  "measured loss rate and burstiness of the hop)" },
	{ .name = "copies_sack", .type = CFG_BOOL, F(copies_sack), .def = "false",
	  .help = "snoop+: send the copies for flows that negotiated SACK too (the paper's behaviour); false: "
		  "only for flows without SACK, whose window stalls at a hole until its repair arrives.  A SACK "
		  "sender goes on through a lost repair, which the local timer sends again, while every copy "
		  "takes the airtime of new data on a busy hop: copies for SACK flows cost a BBR sender 5-7 % "
		  "of its goodput at 3 % loss" },
	{ .name = "adaptive_target", .type = CFG_FRACTION, F(adaptive_target), .def = "0.001",
	  .help = "snoop+ auto: the largest acceptable probability that every copy of a round is lost" },
	{ .name = "adaptive_window", .type = CFG_UINT, F(adaptive_window), .min = 10, .max = 100000, .def = "200",
	  .unit = "samples", .help = "snoop+ auto: first transmissions the loss estimate averages over" },

	{ .name = "dupack_thresh", .type = CFG_UINT, F(dupack_thresh), .min = 3, .max = 64, .def = "6",
	  .unit = "dupacks", .section = "packet controller",
	  .help = "pc: duplicate ACKs from the receiver before the sender may see its third; 3 makes the ACK "
		  "filter transparent" },
	{ .name = "ack_every_rtx", .type = CFG_UINT, F(ack_every_rtx), .min = 1, .max = 64, .def = "2",
	  .unit = "drops",
	  .help = "pc: send the fixed host an ACK for lastAckSent for every this many drops of the same "
		  "acknowledged segment" },
	{ .name = "sack_flows", .type = CFG_ENUM, F(sack_flows), .names = sack_flows_names, .def = "aside",
	  .help = "pc: a flow whose handshake negotiated SACK (or, adopted mid-stream, that shows SACK blocks): "
		  "aside (passed untouched and counted in flows_stepped_aside: a SACK sender with RACK marks a "
		  "hole lost by time from the first SACK block, so a raised dupack threshold only delays its "
		  "recovery) or act (filtered like any other flow, the paper)" },
	{ .name = "aside_losses", .type = CFG_UINT, F(aside_losses), .min = 0, .max = 64, .def = "2",
	  .unit = "runs",
	  .help = "pc: step aside for a flow (flows_stepped_aside) once its dupack runs that were losses (reached "
		  "dupack_thresh, or ended by the sender's retransmission) outnumber those that were reordering "
		  "(3 to dupack_thresh - 1 dupacks ended by a new ACK, nothing resent) by this many; 0: never" },
};

const struct cfg_schema pepd_schema = {
	.prog = "pepd",
	.keys = keys,
	.nkeys = sizeof(keys) / sizeof(keys[0]),
	.size = sizeof(struct pep_config),
	.ifaces_count_offset = offsetof(struct pep_config, nwireless),
};

void config_defaults(struct pep_config *cfg)
{
	cfg_defaults(&pepd_schema, cfg);
}

int config_set(struct pep_config *cfg, const char *key, const char *value, const char *where, char *err,
	       size_t errlen)
{
	return cfg_set(&pepd_schema, cfg, key, value, where, err, errlen);
}

int config_load_text(struct pep_config *cfg, const char *text, size_t len, const char *name, char *err,
		     size_t errlen)
{
	return cfg_load_text(&pepd_schema, cfg, text, len, name, err, errlen);
}

void config_dump(const struct pep_config *cfg, FILE *out)
{
	cfg_dump(&pepd_schema, cfg, out);
}

uint32_t config_queue_count(const struct pep_config *cfg)
{
	long cpus;

	if (cfg->queues != CFG_AUTO)
		return (uint32_t)cfg->queues;
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 1)
		return 1;
	return cpus > PEP_MAX_QUEUES ? PEP_MAX_QUEUES : (uint32_t)cpus;
}

int config_check(const struct pep_config *cfg, char *err, size_t errlen)
{
	uint32_t nq = config_queue_count(cfg);

	if (cfg_check_required(&pepd_schema, cfg, err, errlen) < 0)
		return -1;
	if (cfg->queue + nq - 1 > 65535) {
		cfg_err(err, errlen, "queue = %u with queues = %u: the last queue would be %u, past 65535", cfg->queue, nq,
			cfg->queue + nq - 1);
		return -1;
	}
	if (cfg->bypass_mark & cfg->mark) {
		cfg_err(err, errlen, "bypass_mark = %#x shares bits with mark = %#x", cfg->bypass_mark, cfg->mark);
		return -1;
	}
	if (cfg->rto_min_ns > cfg->rto_max_ns) {
		cfg_err(err, errlen, "rto_min = %gms is larger than rto_max = %gms", (double)cfg->rto_min_ns / 1e6,
			(double)cfg->rto_max_ns / 1e6);
		return -1;
	}
	if (cfg->flow_cache_bytes > cfg->total_cache_bytes) {
		cfg_err(err, errlen, "flow_cache_bytes = %llu is larger than total_cache_bytes = %llu",
			(unsigned long long)cfg->flow_cache_bytes, (unsigned long long)cfg->total_cache_bytes);
		return -1;
	}
	/* each queue's flows share its part of the caches: one flow must fit in it */
	if (cfg->flow_cache_bytes > cfg->total_cache_bytes / nq) {
		cfg_err(err, errlen, "flow_cache_bytes = %llu is larger than total_cache_bytes = %llu divided among queues = %u",
			(unsigned long long)cfg->flow_cache_bytes, (unsigned long long)cfg->total_cache_bytes, nq);
		return -1;
	}
	return 0;
}

const char *config_filter_name(enum pep_filter_kind kind)
{
	return cfg_enum_name(&pepd_schema, "filter", (int)kind);
}

const char *config_rules_name(enum pep_rules_backend backend)
{
	return cfg_enum_name(&pepd_schema, "rules", (int)backend);
}
