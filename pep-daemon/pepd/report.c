// SPDX-License-Identifier: GPL-2.0-only
/*
 * `pepd stats`: settings, totals, then one entry per flow, most recently
 * active first.
 *
 * Two threads make it.  A queue's thread, asked between two packets,
 * copies its counters and its flows (pepd_queue_snapshot: at most the
 * request's number of them, CTL_MAX_LIST at most; a flow is a few hundred
 * bytes, so 4096 cost about a millisecond); the control thread
 * (pepd_report) renders everything from the copies, with the settings
 * (fixed at start) and the rules' own packet count (a process run by the
 * control thread, at most every RULE_COUNT_MAX_AGE_NS, never one per
 * request).  Neither reads what the other writes.  A filter's report()
 * therefore runs on a copy of the flow: it reads the flow's own fields and
 * never follows a pointer out of it (filter.h).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "rules.h"
#include "version.h"

/* the rules' counters come from running nft or iptables-save: rarely */
#define RULE_COUNT_MAX_AGE_NS (5 * 1000000000ULL)

static void counters(struct json_out *j, const struct pep_counters *c)
{
#define PEP_COUNTER_OUT(name, desc) jo_u64(j, #name, c->name);
	PEP_FLOW_COUNTERS(PEP_COUNTER_OUT)
#undef PEP_COUNTER_OUT
}

static void endpoint(struct json_out *j, const char *key, int family, const uint8_t *addr, uint16_t port)
{
	char a[INET6_ADDRSTRLEN], s[INET6_ADDRSTRLEN + 10];

	inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, a, sizeof(a));
	snprintf(s, sizeof(s), family == 4 ? "%s:%u" : "[%s]:%u", a, port);
	jo_str(j, key, s);
}

/* One flow, from its copy (the control thread): the context has no budget or totals to follow. */
static void flow_entry(const struct pepd_queue *q, struct json_out *j, const struct flow *f, uint64_t now)
{
	struct pep_ctx ctx = { .cfg = q->cfg, .now = now };

	jo_obj_begin(j, NULL);
	jo_u64(j, "id", f->id);
	jo_u64(j, "queue", q->cfg->queue + q->index);
	endpoint(j, "fixed_host", f->key.family, f->key.fh, f->key.fh_port);
	endpoint(j, "wireless_host", f->key.family, f->key.wh, f->key.wh_port);
	jo_dbl(j, "age_s", (double)(now - f->created_ns) / 1e9);
	jo_dbl(j, "idle_s", (double)(now - f->last_ns) / 1e9);
	jo_bool(j, "midstream", f->conn.midstream);
	jo_bool(j, "sack_permitted", conn_sack_ok(&f->conn));
	jo_bool(j, "timestamps", f->conn.fh_ts && f->conn.wh_ts);
	jo_u64(j, "wh_mss", f->conn.wh_mss);
	jo_u64(j, "cached_packets_now", f->cache.count);
	jo_u64(j, "cached_bytes_now", f->cache.bytes);
	counters(j, &f->cnt);
	if (q->ops->report)
		q->ops->report(f, &ctx, j);
	jo_obj_end(j);
}

/* ---------------------------------------------------------------- in the queue's thread */

void pepd_queue_snapshot(void *queue, struct ctl_snapshot *s)
{
	struct pepd_queue *q = queue;
	struct pepd_queue_counters *c = &q->snap_counters;
	uint32_t n = q->ft.nflows < s->list_limit ? q->ft.nflows : s->list_limit;
	const struct flow *f;

	c->stats = q->stats;
	c->foreign_packets = q->foreign_packets;
	c->flows_active = q->ft.nflows;
	c->cached_packets = q->ft.budget.packets;
	c->cached_bytes = q->ft.budget.bytes;
	c->id_gaps = q->nfq.id_gaps;
	c->netlink_errors = q->nfq.netlink_errors;
	c->egress_rises = q->egress.drops.rises;
	c->egress_errors = q->egress.errors;
	c->egress_skipped = q->egress.skipped;
	c->verdict_sends = q->nfq.verdict_sends;
	c->verdict_messages = q->nfq.verdict_messages;
	c->flows_embryonic = q->ft.nyoung;
	c->cache_refused_flow_bytes = q->ft.budget.refused_flow_bytes;
	c->cache_refused_flow_segments = q->ft.budget.refused_flow_segments;
	c->cache_refused_total = q->ft.budget.refused_total;
	c->cache_refused_nomem = q->ft.budget.refused_nomem;
	c->cache_memory_now = q->ft.budget.mem;
	c->cache_pool_bytes = q->ft.budget.pool.mem;
	c->cache_copies_fresh = q->ft.budget.pool.fresh;
	c->cache_copies_reused = q->ft.budget.pool.reused;
	if (n > CTL_MAX_LIST)
		n = CTL_MAX_LIST;
	q->snap_nflows = 0;
	q->snap_flows = n ? malloc((size_t)n * sizeof(*q->snap_flows)) : NULL;
	if (!q->snap_flows)
		return;
	/* most recently active first; the copies' pointers are never followed */
	flow_for_each(&q->ft, f) {
		if (q->snap_nflows == n)
			break;
		memcpy(&q->snap_flows[q->snap_nflows++], f, sizeof(*f));
	}
}

/* ---------------------------------------------------------------- in the control thread */

static void add_counters(struct pepd_queue_counters *sum, const struct pepd_queue_counters *c)
{
	const uint64_t *from = (const uint64_t *)c;
	uint64_t *to = (uint64_t *)sum;
	size_t i;

	/* every field is a uint64_t counter (pep_stats too): they add up */
	_Static_assert(sizeof(*c) % sizeof(uint64_t) == 0, "counters only");
	for (i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		to[i] += from[i];
}

/* The rules' packet count, from a cache the control thread alone keeps. */
static bool rule_count(struct pepd *d, uint64_t now, uint64_t *packets)
{
	if (!d->rules_installed)
		return false;
	if (!d->rule_count_ns || now - d->rule_count_ns > RULE_COUNT_MAX_AGE_NS) {
		d->have_rule_count = rules_queued_packets(&d->cfg, d->rules_used, &d->rule_packets) == 0;
		d->rule_count_ns = now;
	}
	*packets = d->rule_packets;
	return d->have_rule_count;
}

/* A flow copy and the queue it came from, for the list: most recently active first, over every queue. */
struct listed_flow {
	const struct pepd_queue *q;
	const struct flow *f;
};

static int more_recent(const void *a, const void *b)
{
	const struct listed_flow *x = a, *y = b;

	return x->f->last_ns > y->f->last_ns ? -1 : x->f->last_ns < y->f->last_ns;
}

/* Each queue's counters, so that an operator sees how the hash spread the load. */
static void queue_entries(struct pepd *d, struct json_out *j)
{
	uint32_t i;

	jo_arr_begin(j, "queues");
	for (i = 0; i < d->nqueues; i++) {
		const struct pepd_queue_counters *c = &d->queues[i].snap_counters;

		jo_obj_begin(j, NULL);
		jo_u64(j, "queue", d->cfg.queue + i);
		jo_u64(j, "packets", c->stats.packets);
		jo_u64(j, "flows_active", c->flows_active);
		jo_u64(j, "cached_bytes_now", c->cached_bytes);
		jo_u64(j, "cache_memory_now", c->cache_memory_now);
		jo_u64(j, "verdict_sends", c->verdict_sends);
		jo_u64(j, "verdict_messages", c->verdict_messages);
		jo_obj_end(j);
	}
	jo_arr_end(j);
}

void pepd_report(void *daemon, struct json_out *j, const struct ctl_call *call)
{
	struct pepd *d = daemon;
	struct pepd_queue_counters sum;
	const struct pep_stats *s = &sum.stats;
	uint64_t now = pepd_now_ns(), queued = 0;
	struct listed_flow *list = NULL;
	uint32_t i, k, nlisted = 0, total = 0;
	bool have_rule_count;
	int r;

	/* every queue's copy, each taken by its own thread between two of its packets */
	for (i = 0; i < d->nqueues; i++) {
		if (ctl_snapshot_take(&d->queues[i].snap, j, call->req->list_limit, call->stop_fd) < 0) {
			for (k = 0; k < i; k++) {
				free(d->queues[k].snap_flows);
				d->queues[k].snap_flows = NULL;
				d->queues[k].snap_nflows = 0;
			}
			jo_obj_begin(j, NULL);
			jo_str(j, "error", "a packet thread did not answer (stopping, or stuck)");
			jo_obj_end(j);
			return;
		}
		jo_free(&d->queues[i].snap.out);	/* pepd's queue threads render nothing: they copy */
	}
	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < d->nqueues; i++) {
		add_counters(&sum, &d->queues[i].snap_counters);
		total += d->queues[i].snap_nflows;
	}
	list = total ? malloc((size_t)total * sizeof(*list)) : NULL;
	for (i = 0; list && i < d->nqueues; i++)
		for (k = 0; k < d->queues[i].snap_nflows; k++)
			list[nlisted++] = (struct listed_flow){ &d->queues[i], &d->queues[i].snap_flows[k] };
	if (nlisted > 1)
		qsort(list, nlisted, sizeof(*list), more_recent);
	if (nlisted > call->req->list_limit)
		nlisted = call->req->list_limit;
	have_rule_count = rule_count(d, now, &queued);

	jo_obj_begin(j, NULL);
	jo_obj_begin(j, "pepd");
	jo_str(j, "version", airtcp_version());
	jo_str(j, "filter", config_filter_name(d->cfg.filter));
	jo_u64(j, "queue", d->cfg.queue);
	jo_u64(j, "queues", d->nqueues);
	jo_str(j, "rules", config_rules_name(d->rules_used));
	jo_bool(j, "fail_open", d->cfg.fail_open);
	jo_bool(j, "gso", d->cfg.gso);
	jo_u64(j, "verdict_batch", d->cfg.verdict_batch);
	jo_dbl(j, "busy_poll_us", (double)d->cfg.busy_poll_ns / 1e3);
	jo_u64(j, "copy_range", pepd_copy_range(&d->cfg));
	if (d->ops->report_settings)
		d->ops->report_settings(&d->cfg, j);
	jo_dbl(j, "uptime_s", (double)(now - d->started_ns) / 1e9);
	jo_obj_end(j);

	jo_obj_begin(j, "totals");
	jo_u64(j, "packets", s->packets);
	jo_u64(j, "ipv6_packets", s->ipv6_packets);
	jo_u64(j, "gso_packets", s->gso_packets);
	jo_u64(j, "malformed", stats_malformed(s));
	jo_u64(j, "unhandled", stats_unhandled(s));
	jo_u64(j, "foreign", sum.foreign_packets);
	jo_u64(j, "flows_active", sum.flows_active);
	jo_u64(j, "flows_created", s->flows_created);
	jo_u64(j, "flows_expired", s->flows_expired);
	jo_u64(j, "flows_untracked", s->flows_untracked);
	jo_u64(j, "cached_packets_now", sum.cached_packets);
	jo_u64(j, "cached_bytes_now", sum.cached_bytes);
	/*
	 * Fail-open: packets the kernel accepted without pepd.  Socket overflow
	 * leaves a gap in the packet ids; a full queue or no reader (bypass)
	 * shows only in the rules' counters: queued by the rules minus seen.
	 * The rules' count may be up to RULE_COUNT_MAX_AGE_NS old (its age is
	 * given): a difference read while it is old says less.
	 */
	jo_u64(j, "fail_open_id_gaps", sum.id_gaps);
	if (have_rule_count) {
		jo_u64(j, "rule_packets", queued);
		jo_dbl(j, "rule_packets_age_s", (double)(now - d->rule_count_ns) / 1e9);
		jo_u64(j, "fail_open_packets", queued > s->packets ? queued - s->packets : 0);
	}
	jo_u64(j, "verdicts_mangled", s->verdicts_mangled);
	jo_u64(j, "verdict_sends", sum.verdict_sends);
	jo_u64(j, "verdict_messages", sum.verdict_messages);
	pepd_report_refusals(&sum, &d->cfg, j);	/* checksums, adoption, bounds: what pepd refused to act on */
	jo_u64(j, "netlink_errors", sum.netlink_errors);
	/* egress_drops: readings that found the qdiscs' drops risen, failed dumps, qdiscs past the bound */
	jo_u64(j, "egress_drop_rises", sum.egress_rises);
	jo_u64(j, "egress_poll_errors", sum.egress_errors);
	jo_u64(j, "egress_qdiscs_skipped", sum.egress_skipped);
	counters(j, &s->total);
	jo_obj_begin(j, "malformed_by_reason");
	for (r = PKT_FIRST_ERROR; r < PKT__RESULT_COUNT; r++)
		jo_u64(j, pkt_result_name((enum pkt_result)r), s->parse[r]);
	jo_obj_end(j);
	jo_obj_begin(j, "unhandled_by_reason");
	for (r = PKT_OK + 1; r < PKT_FIRST_ERROR; r++)
		jo_u64(j, pkt_result_name((enum pkt_result)r), s->parse[r]);
	jo_u64(j, "truncated", s->truncated);
	jo_obj_end(j);
	jo_obj_end(j);
	ctl_report_counters(j, call->counters);
	queue_entries(d, j);

	jo_arr_begin(j, "flows");
	for (i = 0; i < nlisted; i++)
		flow_entry(list[i].q, j, list[i].f, now);
	jo_arr_end(j);
	jo_obj_end(j);
	free(list);
	for (i = 0; i < d->nqueues; i++) {
		free(d->queues[i].snap_flows);
		d->queues[i].snap_flows = NULL;
		d->queues[i].snap_nflows = 0;
	}
}
