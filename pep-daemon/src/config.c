// SPDX-License-Identifier: GPL-2.0-only
/* pepd's keys; the parser, flags, defaults and help are cfgparse.c's. */
#include <stddef.h>

#include "config.h"

static const char *const filter_names[] = { "passthrough", "snoop", "snoop+", "pc", NULL };
static const char *const rules_names[] = { "auto", "nft", "iptables-nft", "iptables-legacy", "none", NULL };
static const char *const forward_names[] = { "inject", "accept", NULL };

#define F(field) CFG_FIELD(struct pep_config, field)
#define MS 1000000ULL
#define S_ 1000000000ULL

static const struct cfg_key keys[] = {
	/* the daemon */
	{ "filter", CFG_ENUM, F(filter), 0, 0, filter_names, "snoop",
	  "what to run on the flows: passthrough, snoop, snoop+ or pc" },
	{ "wireless", CFG_IFACES, F(wireless), 0, PEP_MAX_IFACES, NULL, "",
	  "the wireless interface(s) of this base station (required); data leaving on them is the downlink" },
	{ "queue", CFG_UINT, F(queue), 0, 65535, NULL, "0", "NFQUEUE number" },
	{ "rules", CFG_ENUM, F(rules), 0, 0, rules_names, "auto",
	  "who installs the queue rules: auto (nft, then iptables-nft, then iptables-legacy), one of those, "
	  "or none (you did)" },
	{ "mark", CFG_UINT, F(mark), 1, 0xffffffffULL, NULL, "0x10000",
	  "fwmark bit(s) on pepd's own packets; the queue rules skip packets carrying them" },
	{ "queue_maxlen", CFG_UINT, F(queue_maxlen), 16, 1u << 20, NULL, "4096",
	  "kernel queue length in packets; beyond it packets pass without pepd (fail-open)" },
	{ "socket_buffer", CFG_SIZE, F(socket_buffer), 65536, 1ULL << 30, NULL, "8MiB",
	  "netlink receive buffer (SO_RCVBUFFORCE)" },
	{ "gso", CFG_BOOL, F(gso), 0, 0, NULL, "false",
	  "take GSO/GRO super-packets whole (NFQA_CFG_F_GSO) instead of having the kernel segment them; "
	  "local retransmissions are re-segmented to the MSS" },
	{ "fail_open", CFG_BOOL, F(fail_open), 0, 0, NULL, "true",
	  "accept packets the kernel cannot queue to pepd (NFQA_CFG_F_FAIL_OPEN) instead of dropping them" },
	{ "control_socket", CFG_STRING, F(control_socket), 0, 0, NULL, "",
	  "path of the stats socket (default /run/pepd/pepd-QUEUE.sock)" },
	{ "log_flows", CFG_BOOL, F(log_flows), 0, 0, NULL, "false", "log each flow's counters when it ends" },
	{ "trace_file", CFG_STRING, F(trace_file), 0, 0, NULL, "",
	  "debugging: write one line per packet, timer and send (verdict, actions) to this file" },
	/* the flow table */
	{ "max_flows", CFG_UINT, F(max_flows), 1, 1u << 22, NULL, "4096",
	  "flows tracked at once; further flows pass untracked (flows_untracked)" },
	{ "flow_cache_bytes", CFG_SIZE, F(flow_cache_bytes), 2048, 1ULL << 30, NULL, "256KiB",
	  "cache bound per flow; segments beyond it pass uncached (cache_full) and their losses are the "
	  "sender's. Size it to the egress queue plus the hop's bandwidth-delay product" },
	{ "total_cache_bytes", CFG_SIZE, F(total_cache_bytes), 4096, 1ULL << 40, NULL, "64MiB",
	  "cache bound over all flows" },
	{ "idle_timeout", CFG_DURATION, F(idle_timeout_ns), 1 * S_, 86400 * S_, NULL, "60s",
	  "a flow not seen for this long is forgotten" },
	{ "adopt_midstream", CFG_BOOL, F(adopt_midstream), 0, 0, NULL, "true",
	  "also act on connections that started before pepd (e.g. after a restart)" },
	/* snoop and snoop+ */
	{ "rtx_thresh", CFG_UINT, F(rtx_thresh), 1, 16, NULL, "2",
	  "duplicate ACKs (without SACK) or later transmissions SACKed (with SACK) before a cached segment is "
	  "retransmitted locally; 2 because Linux receivers send the odd duplicate ACK without an arrival; "
	  "raise it on a hop that reorders" },
	{ "max_local_rtx", CFG_UINT, F(max_local_rtx), 1, 32, NULL, "4",
	  "local retransmission rounds per segment before it is left to the sender" },
	{ "rto_initial", CFG_DURATION, F(rto_initial_ns), 1 * MS, 60 * S_, NULL, "200ms",
	  "local retransmission timeout before the first RTT sample" },
	{ "rto_min", CFG_DURATION, F(rto_min_ns), 1 * MS, 60 * S_, NULL, "20ms",
	  "lower bound of the local retransmission timeout" },
	{ "rto_max", CFG_DURATION, F(rto_max_ns), 1 * MS, 60 * S_, NULL, "1s",
	  "upper bound of the local retransmission timeout, backoff included" },
	{ "max_burst", CFG_UINT, F(max_burst), 1, 32, NULL, "8",
	  "segments retransmitted locally per event at most" },
	{ "use_sack", CFG_BOOL, F(use_sack), 0, 0, NULL, "true",
	  "read the receiver's SACK blocks to find every hole (when the connection negotiated SACK)" },
	{ "drop_dupacks", CFG_BOOL, F(drop_dupacks), 0, 0, NULL, "true",
	  "snoop: drop the dupacks (and hold the partial ACKs) of holes repaired here; false leaves the local "
	  "retransmissions but lets every ACK through, like a TCP-unaware link layer" },
	{ "hide_sack", CFG_BOOL, F(hide_sack), 0, 0, NULL, "true",
	  "blank the SACK option of forwarded ACKs while every hole is cached here" },
	{ "discount_copy_dupacks", CFG_BOOL, F(discount_copy_dupacks), 0, 0, NULL, "true",
	  "do not count the dupacks drawn by extra copies (off reproduces Snoop+'s false rounds for c >= 3)" },
	{ "ack_acked_rtx", CFG_BOOL, F(ack_acked_rtx), 0, 0, NULL, "true",
	  "drop sender retransmissions of acknowledged data and answer them with an ACK (Snoop)" },
	{ "window_clamp", CFG_BOOL, F(window_clamp), 0, 0, NULL, "true",
	  "snoop: cap the window the sender sees at the path's bandwidth-delay product (delivery rate of the "
	  "hop x round trip, plus half of aqm_target of queue), so hiding losses does not let it overrun this "
	  "box's queue" },
	{ "aqm_target", CFG_DURATION, F(aqm_target_ns), 0, 10 * S_, NULL, "40ms",
	  "snoop: queueing delay on the wireless hop above which the sender gets a congestion signal (one "
	  "dropped segment, left to it), since hiding losses also hides congestion; 0ms: off" },
	{ "aqm_interval", CFG_DURATION, F(aqm_interval_ns), 1 * MS, 10 * S_, NULL, "100ms",
	  "snoop: the delay must stay above aqm_target this long before a signal, and signals are at least "
	  "this far apart" },
	{ "forward", CFG_ENUM, F(forward), 0, 0, forward_names, "inject",
	  "snoop: how cached data leaves: inject (pepd sends it, so a full egress queue is seen and that "
	  "congestion loss left to the sender) or accept (the kernel forwards the original; drops at this "
	  "box's own queue are then repaired locally and hidden, Snoop's classic weakness)" },
	{ "rtx_priority", CFG_UINT, F(rtx_priority), 0, 0xffffffffULL, NULL, "0",
	  "SO_PRIORITY of local retransmissions and copies (new data and ACKs keep 0); with a priority-aware "
	  "egress they go ahead of the queue, e.g. 65552 for HTB class 1:10 (0: same queue as everything else)" },
	{ "copies", CFG_UINT_AUTO, F(copies), 0, 3, NULL, "2",
	  "snoop+: extra copies per local retransmission, 0..3, or auto (chosen from the measured loss)" },
	{ "adaptive_target", CFG_FRACTION, F(adaptive_target), 0, 0, NULL, "0.001",
	  "snoop+ auto: largest acceptable probability that every copy of a round is lost" },
	{ "adaptive_window", CFG_UINT, F(adaptive_window), 10, 100000, NULL, "200",
	  "snoop+ auto: samples the loss estimate averages over" },
	/* packet controller */
	{ "dupack_thresh", CFG_UINT, F(dupack_thresh), 3, 64, NULL, "6",
	  "pc: dupacks from the receiver before the sender may see its third (3 = transparent)" },
	{ "ack_every_rtx", CFG_UINT, F(ack_every_rtx), 1, 64, NULL, "2",
	  "pc: send the fixed host an ACK for every this many drops of the same acknowledged segment" },
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

int config_load_file(struct pep_config *cfg, const char *path, char *err, size_t errlen)
{
	return cfg_load_file(&pepd_schema, cfg, path, err, errlen);
}

void config_print_keys(FILE *out)
{
	cfg_print_keys(&pepd_schema, out);
}

void config_dump(const struct pep_config *cfg, FILE *out)
{
	cfg_dump(&pepd_schema, cfg, out);
}

bool config_is_key(const char *name)
{
	return cfg_is_key(&pepd_schema, name);
}

int config_check(const struct pep_config *cfg, char *err, size_t errlen)
{
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
	if (cfg->nwireless == 0) {
		cfg_err(err, errlen, "wireless = : missing: name the wireless interface(s), e.g. wireless = wlan0");
		return -1;
	}
	return 0;
}

const char *config_filter_name(enum pep_filter_kind kind)
{
	return (unsigned int)kind < 4 ? filter_names[kind] : "?";
}

const char *config_rules_name(enum pep_rules_backend backend)
{
	return (unsigned int)backend < 5 ? rules_names[backend] : "?";
}
