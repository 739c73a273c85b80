/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The running daemon: its queues (each an NFQUEUE socket, a flow table,
 * an injector and an event loop, run by a thread of its own), the queue
 * rules and the control socket.
 */
#ifndef PEPD_DAEMON_H
#define PEPD_DAEMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "admit.h"
#include "config.h"
#include "ctl.h"
#include "evloop.h"
#include "filter.h"
#include "flow.h"
#include "egress_io.h"
#include "inject.h"
#include "json.h"
#include "nfq.h"
#include "stats.h"

/*
 * A queue's counters, as its thread hands them to the control thread (a
 * copy taken between two packets); several queues' add up.
 */
struct pepd_queue_counters {
	struct pep_stats stats;
	uint64_t foreign_packets;
	uint64_t flows_active;
	uint64_t cached_packets, cached_bytes;
	uint64_t id_gaps, netlink_errors;
	uint64_t egress_rises, egress_errors, egress_skipped;
	uint64_t verdict_sends, verdict_messages;
	/* what the bounds refused (pepd_report_refusals) */
	uint64_t flows_embryonic;
	uint64_t cache_refused_flow_bytes, cache_refused_flow_segments;
	uint64_t cache_refused_total, cache_refused_nomem, cache_memory_now;
	uint64_t cache_pool_bytes, cache_copies_fresh, cache_copies_reused;
};

/*
 * Everything one NFQUEUE needs, apart from the daemon's shared parts
 * (the configuration and the filter, both read-only): its netlink socket,
 * its flows and their cache, its counters, its sockets for pepd's own
 * packets, its event loop.  One thread runs it and alone touches it: the
 * kernel's queue hash sends both directions of a flow to the same queue
 * (Documentation/pepd.rst, "Several queues"), so a flow lives in one
 * queue's table and no lock is needed.
 */
struct pepd_queue {
	const struct pep_config *cfg;
	const struct pep_filter_ops *ops;
	uint32_t index;		/* 0 .. queues - 1; its NFQUEUE is cfg->queue + index */
	struct evloop loop;	/* queue 0's also takes the signals, in the main thread */
	int stop_fd;		/* an eventfd: the main thread asks the others to stop */
	pthread_t thread;
	bool thread_running;
	bool caches_data;	/* the filter copies data into the cache (snoop, snoop+) */
	bool wireless_verdict_held;	/* a packet towards the wireless host let through, its verdict not yet sent */
	uint32_t bypass_mark;	/* the connection mark pepd's rules skip (0: they queue every flow) */
	struct nfqueue nfq;
	struct flow_table ft;
	struct pep_stats stats;
	struct injector inj;
	struct egress_watch egress;	/* egress_drops: the wireless qdiscs' drops (nl NULL: off) */
	struct pep_ifaces ifs;	/* the wireless interfaces and their bridges */
	uint64_t ifindex_checked_ns;
	uint64_t pool_trimmed_ns;	/* when the cache's free lists were last trimmed */
	uint64_t foreign_packets;	/* queued but not through a wireless interface */
	FILE *trace;
	uint64_t trace_start_ns;
	/*
	 * pepd stats: the control thread asks, this queue's thread copies its
	 * counters and (at most the request's number of) flows between two
	 * packets, and the control thread renders the copies.
	 */
	struct ctl_snapshot snap;
	struct pepd_queue_counters snap_counters;
	struct flow *snap_flows;	/* malloc'd by this thread, freed by the control thread */
	uint32_t snap_nflows;
	uint8_t scratch[65536 + 64];	/* an edited packet, for its verdict */
	uint8_t norm[65536 + 64];	/* a packet given its full checksum (it came CHECKSUM_PARTIAL) */
};

struct pepd {
	struct pep_config cfg;
	const struct pep_filter_ops *ops;
	enum pep_rules_backend rules_used;
	bool rules_installed;
	struct ctl_server ctl;
	uint64_t started_ns;
	/* the rules' own packet count, read by the control thread at most every RULE_COUNT_MAX_AGE_NS */
	bool have_rule_count;
	uint64_t rule_packets, rule_count_ns;
	uint32_t nqueues;
	struct pepd_queue *queues;	/* nqueues of them, calloc'd */
};

/* Set up everything (queue, rules, sockets); on error one line in err. */
int pepd_start(struct pepd *d, const struct pep_config *cfg, char *err, size_t errlen);

/* Run until SIGTERM/SIGINT (queue 0 in this thread, the others in theirs); returns 0 on a clean stop. */
int pepd_run(struct pepd *d);

/* Undo pepd_start in reverse order (rules first, so traffic never waits on a dead queue). */
void pepd_stop(struct pepd *d);

/*
 * One queued packet through the queue's filter, its verdict queued on
 * q->nfq (nfqueue_packet_fn; the daemon's per-packet entry, which
 * fuzz/fuzz_nfq.c drives with the netlink socket stubbed).
 */
void pepd_handle_packet(void *queue, const struct nfqueue_packet *pkt);

/* pepd stats, from the control thread (ctl_report_fn): the queues' snapshots, settings, rule counts. */
void pepd_report(void *daemon, struct json_out *j, const struct ctl_call *call);

/* A queue's part of pepd stats, in its own thread (ctl_snapshot_serve): a copy of its counters and flows. */
void pepd_queue_snapshot(void *queue, struct ctl_snapshot *s);

/*
 * The most memory a pepd with cfg may take (its resident size): the
 * program, each queue's buffers, the flow tables at max_flows, the caches
 * at total_cache_bytes.
 */
uint64_t pepd_memory_bound(const struct pep_config *cfg);

/* Each queue's share of max_flows and total_cache_bytes (rounded up, down: the total holds). */
uint32_t pepd_queue_max_flows(const struct pep_config *cfg);
uint64_t pepd_queue_cache_bytes(const struct pep_config *cfg);

/* The bytes of each packet copied from the kernel: all, or only headers where the filter needs no data. */
uint32_t pepd_copy_range(const struct pep_config *cfg);

/* The queue's refusals, and why (PEP_QUEUE_COUNTERS, the cache's bounds), into the totals of `pepd stats`. */
void pepd_report_refusals(const struct pepd_queue_counters *c, const struct pep_config *cfg, struct json_out *j);

/* The default control socket path for cfg. */
void pepd_ctl_path(const struct pep_config *cfg, char *path, size_t len);

uint64_t pepd_now_ns(void);

#endif
