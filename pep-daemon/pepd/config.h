/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pepd's configuration: one table of keys (config.c) given to the shared
 * engine (cfgparse.h), which drives the file parser, the command-line
 * flags, the defaults and the help text.
 */
#ifndef PEPD_CONFIG_H
#define PEPD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfgparse.h"

#define PEP_MAX_IFACES CFG_MAX_IFACES
#define PEP_IFNAMSIZ CFG_IFNAMSIZ
#define PEP_PATH_MAX CFG_PATH_MAX
#define PEP_ERR_MAX CFG_ERR_MAX

enum pep_filter_kind {
	FILTER_PASSTHROUGH,
	FILTER_SNOOP,
	FILTER_SNOOPPLUS,
	FILTER_PC,
};

enum pep_rules_backend {
	RULES_AUTO,
	RULES_NFT,
	RULES_IPTABLES_NFT,
	RULES_IPTABLES_LEGACY,
	RULES_NONE,
};

enum pep_forward {
	FORWARD_INJECT,
	FORWARD_ACCEPT,
	FORWARD_AUTO,		/* inject what fits the MTU, accept GSO super-packets */
};

/* pc: what becomes of a flow whose handshake negotiated SACK (sack_flows). */
enum pep_sack_flows {
	SACK_FLOWS_ASIDE,	/* passed untouched: a SACK sender counts no dupacks */
	SACK_FLOWS_ACT,		/* filtered like any other (the paper) */
};

/* snoop: which flows' dupacks of holes repaired here stay from the sender (drop_dupacks). */
enum pep_drop_dupacks {
	DROP_DUPACKS_FALSE,	/* none: every ACK reaches the sender */
	DROP_DUPACKS_TRUE,	/* every flow's (the paper) */
	DROP_DUPACKS_AUTO,	/* flows without SACK only */
};

#define COPIES_AUTO CFG_AUTO

struct pep_config {
	/* the daemon */
	enum pep_filter_kind filter;
	char wireless[PEP_MAX_IFACES][PEP_IFNAMSIZ];
	uint32_t nwireless;
	uint32_t queue;
	int queues;		/* NFQUEUEs (one thread each) from queue on, or CFG_AUTO: the online CPUs */
	uint32_t verdict_batch;
	uint64_t busy_poll_ns;
	bool headers_only;
	enum pep_rules_backend rules;
	uint32_t mark;
	uint32_t bypass_mark;
	uint32_t queue_maxlen;
	uint64_t socket_buffer;
	bool gso;
	bool fail_open;
	char control_socket[PEP_PATH_MAX];
	bool log_flows;
	char trace_file[PEP_PATH_MAX];

	/* the flow table */
	uint32_t max_flows;
	uint64_t flow_cache_bytes;
	uint64_t total_cache_bytes;
	uint32_t flow_cache_segments;
	uint64_t idle_timeout_ns;
	bool adopt_midstream;

	/* snoop and snoop+ */
	uint32_t rtx_thresh;
	uint32_t reorder_window_percent;
	uint32_t max_local_rtx;
	uint64_t rto_initial_ns;
	uint64_t rto_min_ns;
	uint64_t rto_max_ns;
	uint32_t max_burst;
	bool use_sack;
	bool hide_sack;
	enum pep_drop_dupacks drop_dupacks;
	bool discount_copy_dupacks;
	bool ack_acked_rtx;
	bool dsack_dropped_rtx;
	bool window_clamp;
	bool repair_window_updates;
	uint32_t window_clamp_percent;
	uint64_t window_clamp_min_queue_ns;
	uint32_t window_clamp_min_segments;
	uint64_t aqm_target_ns;
	uint64_t aqm_interval_ns;
	bool share_hop_rtt;
	bool egress_drops;
	enum pep_forward forward;
	uint32_t rtx_priority;
	int copies;		/* extra copies per local retransmission, or COPIES_AUTO */
	bool copies_sack;
	double adaptive_target;
	uint32_t adaptive_window;

	/* packet controller */
	uint32_t dupack_thresh;
	uint32_t ack_every_rtx;
	enum pep_sack_flows sack_flows;
	uint32_t aside_losses;
};

extern const struct cfg_schema pepd_schema;

/* Fill every key with its default. */
void config_defaults(struct pep_config *cfg);

/*
 * Set key (dashes or underscores) to value; where names the source
 * ("pepd.conf:12", "--rto-min").  On error returns -1 with one line in err.
 */
int config_set(struct pep_config *cfg, const char *key, const char *value, const char *where, char *err,
	       size_t errlen);

/* Parse config text held in memory (key = value lines, # comments): the fuzzer's entry. */
int config_load_text(struct pep_config *cfg, const char *text, size_t len, const char *name, char *err,
		     size_t errlen);

/* After everything is set: required keys, cross-key checks (e.g. rto_min <= rto_max). */
int config_check(const struct pep_config *cfg, char *err, size_t errlen);

/* Print the effective configuration as key = value lines. */
void config_dump(const struct pep_config *cfg, FILE *out);

/* The most queues pepd runs (threads, and NFQUEUEs from queue on). */
#define PEP_MAX_QUEUES 64

/* How many queues cfg asks for: queues, or with auto the online CPUs (at most PEP_MAX_QUEUES). */
uint32_t config_queue_count(const struct pep_config *cfg);

const char *config_filter_name(enum pep_filter_kind kind);
const char *config_rules_name(enum pep_rules_backend backend);

#endif
