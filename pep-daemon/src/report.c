// SPDX-License-Identifier: GPL-2.0-only
/* `pepd stats`: totals, then one entry per flow, most recently active first. */
#include <arpa/inet.h>
#include <stdio.h>

#include "daemon.h"
#include "rules.h"

#define PEPD_VERSION "0.1.0"

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

static void flow_entry(struct pepd *d, struct json_out *j, const struct flow *f, uint64_t now)
{
	struct pep_ctx ctx = { .cfg = &d->cfg, .budget = &d->ft.budget, .total = &d->stats.total, .now = now };

	jo_obj_begin(j, NULL);
	jo_u64(j, "id", f->id);
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
	if (d->ops->report)
		d->ops->report(f, &ctx, j);
	jo_obj_end(j);
}

void pepd_report(struct pepd *d, struct json_out *j, uint32_t max_flows)
{
	uint64_t now = pepd_now_ns(), queued = 0;
	const struct pep_stats *s = &d->stats;
	const struct flow *f;
	bool have_rule_count;
	uint32_t listed = 0;
	int r;

	have_rule_count = d->rules_installed && rules_queued_packets(&d->cfg, d->rules_used, &queued) == 0;
	jo_obj_begin(j, NULL);
	jo_obj_begin(j, "pepd");
	jo_str(j, "version", PEPD_VERSION);
	jo_str(j, "filter", config_filter_name(d->cfg.filter));
	jo_u64(j, "queue", d->cfg.queue);
	jo_str(j, "rules", config_rules_name(d->rules_used));
	jo_bool(j, "fail_open", d->cfg.fail_open);
	jo_bool(j, "gso", d->cfg.gso);
	if (d->cfg.filter == FILTER_SNOOPPLUS) {
		if (d->cfg.copies == COPIES_AUTO)
			jo_str(j, "copies", "auto");
		else
			jo_u64(j, "copies", (uint64_t)d->cfg.copies);
	}
	if (d->cfg.filter == FILTER_PC)
		jo_u64(j, "dupack_thresh", d->cfg.dupack_thresh);
	jo_dbl(j, "uptime_s", (double)(now - d->started_ns) / 1e9);
	jo_obj_end(j);

	jo_obj_begin(j, "totals");
	jo_u64(j, "packets", s->packets);
	jo_u64(j, "ipv6_packets", s->ipv6_packets);
	jo_u64(j, "gso_packets", s->gso_packets);
	jo_u64(j, "malformed", stats_malformed(s));
	jo_u64(j, "unhandled", stats_unhandled(s));
	jo_u64(j, "foreign", d->foreign_packets);
	jo_u64(j, "flows_active", d->ft.nflows);
	jo_u64(j, "flows_created", s->flows_created);
	jo_u64(j, "flows_expired", s->flows_expired);
	jo_u64(j, "flows_untracked", s->flows_untracked);
	jo_u64(j, "cached_packets_now", d->ft.budget.packets);
	jo_u64(j, "cached_bytes_now", d->ft.budget.bytes);
	/*
	 * Fail-open: packets the kernel accepted without pepd.  Socket overflow
	 * leaves a gap in the packet ids; a full queue or no reader (bypass)
	 * shows only in the rules' counters: queued by the rules minus seen.
	 */
	jo_u64(j, "fail_open_id_gaps", s->fail_open_gaps);
	if (have_rule_count) {
		jo_u64(j, "rule_packets", queued);
		jo_u64(j, "fail_open_packets", queued > s->packets ? queued - s->packets : 0);
	}
	jo_u64(j, "verdicts_mangled", s->verdicts_mangled);
	jo_u64(j, "netlink_errors", s->netlink_errors);
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

	jo_arr_begin(j, "flows");
	flow_for_each(&d->ft, f) {
		if (listed++ >= max_flows)
			break;
		flow_entry(d, j, f, now);
	}
	jo_arr_end(j);
	jo_obj_end(j);
}
