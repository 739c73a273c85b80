// SPDX-License-Identifier: GPL-2.0-only
/*
 * pepd's daemon: a queue's packets through the filter, the filter's
 * actions carried out, timers, and the life cycle.
 *
 * One thread, one queue, the shared event loop (evloop.h): the netlink
 * socket (packets, through lib/nfq.c), its timer (the earliest flow timer
 * or the next idle sweep), signals and the control socket (pepd stats).
 * Packets are read until the socket is empty, each is parsed, given to its
 * flow's filter and answered; the verdicts of one round go back in one
 * netlink batch.  Every packet is accepted (or dropped) at once, never
 * held: the cache keeps a copy, so the queue never fills because of pepd's
 * own bookkeeping.
 *
 * Order on the wire: a local retransmission is sent (raw socket) while its
 * trigger is processed, before the verdicts of the round are sent, so it
 * enters the egress queue ahead of the new data accepted in the same round.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "admit.h"
#include "csum.h"
#include "daemon.h"
#include "rules.h"

#define MESSAGES_PER_ROUND 256		/* then look at timers and the control socket again */
#define IDLE_SWEEP_NS 1000000000ULL
#define IFINDEX_RECHECK_NS 1000000000ULL

uint64_t pepd_now_ns(void)
{
	return evloop_now_ns();
}

void pepd_ctl_path(const struct pep_config *cfg, char *path, size_t len)
{
	if (cfg->control_socket[0])
		snprintf(path, len, "%s", cfg->control_socket);
	else
		snprintf(path, len, "/run/pepd/pepd-%u.sock", cfg->queue);
}

/* ---------------------------------------------------------------- interfaces */

static void resolve_interfaces(struct pepd_queue *q)
{
	char bridge[IF_NAMESIZE + 1];
	struct ifreq ifr;
	uint32_t i, mtu = 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	q->ifs.n = q->cfg->nwireless;
	for (i = 0; i < q->cfg->nwireless; i++) {
		q->ifs.port[i] = if_nametoindex(q->cfg->wireless[i]);
		rules_bridge_of(q->cfg->wireless[i], bridge, sizeof(bridge));
		q->ifs.bridge[i] = bridge[0] ? if_nametoindex(bridge) : 0;
		if (fd < 0)
			continue;
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", q->cfg->wireless[i]);
		if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0 && (!mtu || (uint32_t)ifr.ifr_mtu < mtu))
			mtu = (uint32_t)ifr.ifr_mtu;
	}
	if (fd >= 0)
		close(fd);
	q->inj.mtu = mtu ? mtu : 1500;
}

/* ---------------------------------------------------------------- per packet */

/* ---------------------------------------------------------------- tracing (debug) */

static void trace_out(struct pepd_queue *q, const struct pep_out *out)
{
	uint32_t i;

	fprintf(q->trace, " -> %s", out->verdict == VERDICT_DROP ? "drop" : out->verdict == VERDICT_INJECT ? "inject" : "accept");
	if (out->hide_sack)
		fprintf(q->trace, "+hide");
	for (i = 0; i < out->nact; i++)
		fprintf(q->trace, " %s:%u*%u", out->act[i].type == ACTION_SEND_SEGMENT ? "rtx" : "ack", out->act[i].seq,
			out->act[i].copies);
	if (out->timer_op == TIMER_SET)
		fprintf(q->trace, " timer+%.1fms", (double)(out->timer_at - pepd_now_ns()) / 1e6);
	else if (out->timer_op == TIMER_CANCEL)
		fprintf(q->trace, " timer-off");
}

static void trace_packet(struct pepd_queue *q, const struct flow *f, const struct pkt *p, enum pep_dir dir,
			 const struct pep_out *out, uint64_t now)
{
	int b;

	fprintf(q->trace, "%.3f %llu %s seq=%u ack=%u len=%u win=%u fl=%02x", (double)(now - q->trace_start_ns) / 1e6,
		(unsigned long long)f->id, dir == DIR_TO_WIRELESS ? "D" : "A", p->seq, p->ack, p->payload_len,
		p->window, p->flags);
	for (b = 0; b < p->nsack; b++)
		fprintf(q->trace, "%s%u-%u", b ? "," : " sack=", p->sack[b].start, p->sack[b].end);
	trace_out(q, out);
	fprintf(q->trace, " cache=%u\n", f->cache.count);
}

/* A send the egress queue refused: congestion (anything else is a local fault). */
static bool refused_by_queue(int r)
{
	return r == -ENOBUFS || r == -EAGAIN;
}

/*
 * Send the cached segment at seq and tell the filter whether the egress
 * queue took it; returns what inject_segment returned.  If the send failed
 * for another reason than a full queue, *fallback says the original should
 * go the kernel's way instead (its verdict is still open).
 */
static int send_cached(struct pepd_queue *q, struct flow *f, const struct pep_ctx *ctx, uint32_t seq, unsigned int copies,
		       bool repair, bool *fallback)
{
	long idx = segq_find(&f->cache, seq);
	int r;

	if (idx < 0)
		return -ENOENT;
	r = inject_segment(&q->inj, f, segq_at(&f->cache, (uint32_t)idx), copies, repair);
	if (r < 0) {
		f->cnt.inject_errors++;
		q->stats.total.inject_errors++;
	}
	if (r == -E2BIG)
		q->stats.slices_refused++;
	if (q->trace)
		fprintf(q->trace, "%.3f %llu send %u*%u %s\n", (double)(ctx->now - q->trace_start_ns) / 1e6,
			(unsigned long long)f->id, seq, copies, r > 0 ? "queued" : strerror(-r));
	if (fallback && r < 0 && !refused_by_queue(r)) {
		*fallback = true;	/* e.g. a firewall in OUTPUT: let the original pass */
		r = 1;
	}
	if (q->ops->sent)
		q->ops->sent(f, seq, r > 0 || !refused_by_queue(r), ctx);
	return r;
}

static void do_actions(struct pepd_queue *q, struct flow *f, const struct pep_ctx *ctx, const struct pep_out *out)
{
	uint32_t i;

	for (i = 0; i < out->nact; i++) {
		const struct pep_action *a = &out->act[i];

		if (a->type == ACTION_SEND_SEGMENT) {
			send_cached(q, f, ctx, a->seq, a->copies, true, NULL);
		} else if (inject_ack(&q->inj, f, a->seq) < 0) {
			f->cnt.inject_errors++;
			q->stats.total.inject_errors++;
		}
	}
}

static void apply_timer(struct pepd_queue *q, struct flow *f, const struct pep_out *out)
{
	if (out->timer_op == TIMER_SET)
		flow_timer_set(&q->ft, f, out->timer_at);
	else if (out->timer_op == TIMER_CANCEL)
		flow_timer_cancel(&q->ft, f);
}

static void log_flow_end(struct pepd_queue *q, const struct flow *f, const char *why)
{
	char fh[INET6_ADDRSTRLEN], wh[INET6_ADDRSTRLEN];
	int af = f->key.family == 4 ? AF_INET : AF_INET6;

	if (!q->cfg->log_flows)
		return;
	inet_ntop(af, f->key.fh, fh, sizeof(fh));
	inet_ntop(af, f->key.wh, wh, sizeof(wh));
	fprintf(stderr,
		"pepd: flow %s:%u -> %s:%u %s: data %llu, local_rtx %llu+%llu timer, copies %llu, dupacks dropped "
		"%llu, sack hidden %llu, acks generated %llu, data dropped %llu\n",
		fh, f->key.fh_port, wh, f->key.wh_port, why, (unsigned long long)f->cnt.data_packets,
		(unsigned long long)f->cnt.local_rtx, (unsigned long long)f->cnt.local_rtx_timer,
		(unsigned long long)f->cnt.copies_sent, (unsigned long long)f->cnt.dupacks_dropped,
		(unsigned long long)f->cnt.sack_hidden, (unsigned long long)f->cnt.acks_generated,
		(unsigned long long)f->cnt.data_dropped);
}

static void accept_unchanged(struct pepd_queue *q, const struct nfqueue_packet *pkt)
{
	nfqueue_verdict(&q->nfq, pkt->id, NFQUEUE_ACCEPT, NULL, 0);
}

/*
 * A flow for a packet that has none, if it may start one (admit_flow);
 * when the table is full the oldest embryonic flow makes room.  NULL: the
 * packet passes as it is.
 */
static struct flow *new_flow(struct pepd_queue *q, const struct pkt *p, enum pep_dir dir, const struct flow_key *key,
			     const struct pep_ctx *ctx)
{
	struct flow *f, *victim;

	switch (admit_flow(p, dir, q->cfg->adopt_midstream)) {
	case ADMIT_IGNORE:
		return NULL;
	case ADMIT_NOT_ADOPTED:
		q->stats.not_adopted++;
		return NULL;
	case ADMIT_SYN:
	case ADMIT_MIDSTREAM:
		break;
	}
	f = flow_create(&q->ft, key, ctx->now);
	if (!f && (victim = flow_oldest_embryonic(&q->ft))) {
		log_flow_end(q, victim, "evicted");
		q->stats.flows_evicted++;
		flow_destroy(&q->ft, victim);
		f = flow_create(&q->ft, key, ctx->now);
	}
	if (!f) {
		q->stats.flows_untracked++;
		return NULL;
	}
	q->stats.flows_created++;
	f->conn.midstream = !(p->flags & TCPF_SYN);
	q->ops->init(f, ctx);
	return f;
}

/*
 * A packet pepd received without a full checksum (CHECKSUM_PARTIAL, the
 * kernel's own bytes): written out with one into q->norm and parsed again,
 * so that what the filter caches, and every edit of it, carries a right
 * checksum.
 */
static bool complete_checksum(struct pepd_queue *q, struct pkt *p)
{
	memcpy(q->norm, p->data, p->len);
	csum_tcp(q->norm + p->tcp_off, p->len - p->tcp_off, p->family, p->src, p->dst);
	return pkt_parse(q->norm, p->len, p) == PKT_OK;
}

/* The receive loop's callback: one packet, which gets its verdict here. */
void pepd_handle_packet(void *queue, const struct nfqueue_packet *pkt)
{
	struct pepd_queue *q = queue;
	struct pep_ctx ctx = { .cfg = q->cfg, .budget = &q->ft.budget, .total = &q->stats.total };
	const struct pep_devs devs = { pkt->indev, pkt->outdev, pkt->physindev, pkt->physoutdev };
	enum admit_where where;
	enum admit_csum csum;
	struct flow_key key;
	struct pep_out out;
	enum pkt_result r;
	enum pep_dir dir;
	struct flow *f;
	struct pkt p;

	if (!pkt->data) {
		q->stats.parse[PKT_ERR_EMPTY]++;
		accept_unchanged(q, pkt);
		return;
	}
	q->stats.packets++;
	if (pkt->cap_len && pkt->cap_len != pkt->len) {
		q->stats.truncated++;
		accept_unchanged(q, pkt);
		return;
	}
	r = pkt_parse(pkt->data, pkt->len, &p);
	q->stats.parse[r]++;
	if (r != PKT_OK) {
		accept_unchanged(q, pkt);	/* malformed or not ours: unchanged */
		return;
	}
	if (p.family == 6)
		q->stats.ipv6_packets++;
	if (pkt->gso)
		q->stats.gso_packets++;
	ctx.now = pepd_now_ns();
	where = admit_where(&q->ifs, &devs);
	if (where == WHERE_FOREIGN && ctx.now - q->ifindex_checked_ns > IFINDEX_RECHECK_NS) {
		q->ifindex_checked_ns = ctx.now;	/* an interface may have been re-created */
		resolve_interfaces(q);
		where = admit_where(&q->ifs, &devs);
	}
	if (where != WHERE_TO_WIRELESS && where != WHERE_FROM_WIRELESS) {
		q->foreign_packets++;
		accept_unchanged(q, pkt);
		return;
	}
	dir = (enum pep_dir)where;
	/*
	 * Nothing with a wrong checksum is ever edited, cached or allowed to
	 * move a flow's state: it goes on as it came, and its receiver drops it.
	 */
	csum = admit_checksum(&p, pkt->csum_not_ready, pkt->csum_not_verified, pkt->hook);
	if (csum == CSUM_VERIFIED || csum == CSUM_BAD)
		q->stats.checksum_verified++;
	if (csum == CSUM_BAD) {
		if (dir == DIR_TO_WIRELESS)
			q->stats.bad_checksum_down++;
		else
			q->stats.bad_checksum_up++;
		accept_unchanged(q, pkt);
		return;
	}
	if (csum == CSUM_PARTIAL && !complete_checksum(q, &p)) {
		accept_unchanged(q, pkt);	/* cannot happen: it parsed a moment ago */
		return;
	}
	flow_key_of(&p, dir, &key);
	f = flow_lookup(&q->ft, &key);
	if (!f) {
		f = new_flow(q, &p, dir, &key, &ctx);
		if (!f) {
			accept_unchanged(q, pkt);
			return;
		}
	}
	if ((p.flags & (TCPF_SYN | TCPF_ACK)) == TCPF_SYN && (f->conn.closed || f->conn.fh_syn || f->conn.wh_syn)) {
		/* a new connection on a 4-tuple seen before: start from scratch, keep the counters */
		segq_clear(&f->cache, &q->ft.budget);
		flow_timer_cancel(&q->ft, f);
		memset(&f->conn, 0, sizeof(f->conn));
		flow_restart(&q->ft, f);
		q->ops->init(f, &ctx);
	}
	flow_touch(&q->ft, f, ctx.now);
	conn_observe(&f->conn, &p, dir);
	if (f->conn.established)
		flow_establish(&q->ft, f);
	if (!f->conn.established && !f->conn.midstream && !(p.flags & TCPF_SYN)) {
		/*
		 * Not a proven connection yet: the filter sees its SYNs (to learn
		 * the options) and nothing else; the packet goes on as it is.
		 */
		q->stats.before_handshake++;
		accept_unchanged(q, pkt);
		goto done;
	}
	out_reset(&out);
	q->ops->packet(f, &p, dir, &ctx, &out);
	if (q->trace)
		trace_packet(q, f, &p, dir, &out, ctx.now);
	apply_timer(q, f, &out);
	do_actions(q, f, &ctx, &out);
	if (out.verdict == VERDICT_DROP) {
		nfqueue_verdict(&q->nfq, pkt->id, NFQUEUE_DROP, NULL, 0);
	} else if (out.verdict == VERDICT_INJECT) {
		bool fallback = false;

		send_cached(q, f, &ctx, out.inject_seq, 1, false, &fallback);
		nfqueue_verdict(&q->nfq, pkt->id, fallback ? NFQUEUE_ACCEPT : NFQUEUE_DROP, NULL, 0);
	} else if (((out.sack_n || out.hide_sack) && p.sack_opt_off) || out.set_window) {
		build_edit_ack(&p, out.hide_sack && p.sack_opt_off, out.sack_blocks, p.sack_opt_off ? out.sack_n : 0,
			       out.set_window ? out.window : -1, q->scratch);
		nfqueue_verdict(&q->nfq, pkt->id, NFQUEUE_ACCEPT, q->scratch, p.len);
		q->stats.verdicts_mangled++;
	} else {
		accept_unchanged(q, pkt);
	}
done:
	if (f->conn.closed && !f->conn.established && !f->cache.count) {
		/* reset before its handshake completed: nothing to keep */
		q->stats.flows_reset++;
		flow_destroy(&q->ft, f);
	} else if (f->conn.closed && !f->cache.count && f->deadline) {
		flow_timer_cancel(&q->ft, f);	/* reset: kept (for its counters) until idle_timeout */
	}
}

/* ---------------------------------------------------------------- timers */

static void run_timers(struct pepd_queue *q)
{
	struct pep_ctx ctx = { .cfg = q->cfg, .budget = &q->ft.budget, .total = &q->stats.total };
	struct pep_out out;
	struct flow *f;

	ctx.now = pepd_now_ns();
	while ((f = flow_timer_expired(&q->ft, ctx.now))) {
		out_reset(&out);
		q->ops->timer(f, &ctx, &out);
		if (q->trace) {
			fprintf(q->trace, "%.3f %llu timer", (double)(ctx.now - q->trace_start_ns) / 1e6,
				(unsigned long long)f->id);
			trace_out(q, &out);
			fprintf(q->trace, " cache=%u\n", f->cache.count);
		}
		apply_timer(q, f, &out);
		do_actions(q, f, &ctx, &out);
	}
	while ((f = flow_oldest_idle(&q->ft, ctx.now, q->cfg->idle_timeout_ns))) {
		log_flow_end(q, f, "idle");
		q->stats.flows_expired++;
		flow_destroy(&q->ft, f);
	}
}

/* The earliest flow timer, or the next idle sweep. */
static uint64_t next_deadline(void *ctx)
{
	struct pepd_queue *q = ctx;
	uint64_t next = flow_timer_next(&q->ft), sweep = pepd_now_ns() + IDLE_SWEEP_NS;

	return !next || next > sweep ? sweep : next;
}

static void tick(void *ctx)
{
	run_timers(ctx);
}

static void on_netlink(void *ctx, uint32_t events)
{
	struct pepd_queue *q = ctx;

	(void)events;
	nfqueue_receive(&q->nfq, MESSAGES_PER_ROUND, pepd_handle_packet, q);
}

/* The control thread wants this queue's counters and flows: render them now, between two packets. */
static void on_snapshot(void *ctx, uint32_t events)
{
	struct pepd_queue *q = ctx;

	(void)events;
	ctl_snapshot_serve(&q->snap, pepd_queue_snapshot, q);
}

/* ---------------------------------------------------------------- memory and refusals */

/*
 * What pepd's program, libraries, stack and stdio take besides the data
 * structures below: an idle pepd's resident size, with room (measured:
 * Documentation/pepd.rst, "Floods").
 */
#define PEPD_BASE_MEMORY (6ULL << 20)

uint64_t pepd_memory_bound(const struct pep_config *cfg)
{
	uint64_t buckets = 1, bound;

	while (buckets < cfg->max_flows && buckets < (1u << 30))
		buckets <<= 1;
	bound = PEPD_BASE_MEMORY + sizeof(struct pepd) + nfqueue_memory();
	bound += (uint64_t)cfg->max_flows * (sizeof(struct flow) + sizeof(struct flow *)) + buckets * sizeof(struct flow *);
	bound += cfg->total_cache_bytes;
	if (cfg->trace_file[0])
		bound += 1 << 20;
	return bound;
}

/* From the queues' copies (the control thread): pepd_queue_snapshot fills them. */
void pepd_report_refusals(const struct pepd_queue_counters *c, const struct pep_config *cfg, struct json_out *j)
{
#define PEP_QUEUE_OUT(name, desc) jo_u64(j, #name, c->stats.name);
	PEP_QUEUE_COUNTERS(PEP_QUEUE_OUT)
#undef PEP_QUEUE_OUT
	jo_u64(j, "flows_embryonic", c->flows_embryonic);
	jo_u64(j, "cache_refused_flow_bytes", c->cache_refused_flow_bytes);
	jo_u64(j, "cache_refused_flow_segments", c->cache_refused_flow_segments);
	jo_u64(j, "cache_refused_total", c->cache_refused_total);
	jo_u64(j, "cache_refused_nomem", c->cache_refused_nomem);
	jo_u64(j, "cache_memory_now", c->cache_memory_now);
	jo_u64(j, "memory_bound", pepd_memory_bound(cfg));
}

/* ---------------------------------------------------------------- lifecycle */

/* A queue's flows, sockets and NFQUEUE binding; on error one line in err (queue_close undoes any part). */
static int queue_open(struct pepd_queue *q, const struct pep_config *cfg, const struct pep_filter_ops *ops,
		      uint64_t now, char *err, size_t errlen)
{
	const struct nfqueue_params params = {
		.queue = (uint16_t)cfg->queue,
		.maxlen = cfg->queue_maxlen,
		.socket_buffer = cfg->socket_buffer,
		.fail_open = cfg->fail_open,
		.gso = cfg->gso,
	};
	uint64_t seed = 0;

	q->cfg = cfg;
	q->ops = ops;
	q->trace_start_ns = now;
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = now;
	if (flow_table_init(&q->ft, cfg->max_flows, seed, cfg->total_cache_bytes, (uint32_t)cfg->flow_cache_bytes) < 0) {
		snprintf(err, errlen, "max_flows = %u: cannot allocate the flow table", cfg->max_flows);
		return -1;
	}
	q->ft.budget.seg_limit = cfg->flow_cache_segments;
	resolve_interfaces(q);
	for (uint32_t i = 0; i < cfg->nwireless; i++)
		if (!q->ifs.port[i])
			fprintf(stderr, "pepd: warning: wireless = %s: no such interface (yet); watching for it\n",
				cfg->wireless[i]);
	if (inject_open(&q->inj, cfg->mark, cfg->rtx_priority, err, errlen) < 0)
		return -1;
	if (cfg->trace_file[0]) {
		q->trace = fopen(cfg->trace_file, "w");
		if (!q->trace) {
			snprintf(err, errlen, "trace_file = %s: %s", cfg->trace_file, strerror(errno));
			return -1;
		}
		setvbuf(q->trace, NULL, _IOFBF, 1 << 20);
	}
	return nfqueue_open(&q->nfq, &params, err, errlen);
}

static void queue_close(struct pepd_queue *q)
{
	nfqueue_close(&q->nfq);
	inject_close(&q->inj);
	flow_table_free(&q->ft);
	if (q->trace)
		fclose(q->trace);
	q->trace = NULL;
}

int pepd_start(struct pepd *d, const struct pep_config *cfg, char *err, size_t errlen)
{
	char ctl_path[PEP_PATH_MAX];

	memset(d, 0, sizeof(*d));
	evloop_init(&d->loop);
	ctl_server_init(&d->ctl);
	d->queue.snap.ask_fd = d->queue.snap.done_fd = -1;
	nfqueue_init(&d->queue.nfq);
	d->queue.inj.fd4 = d->queue.inj.fd6 = d->queue.inj.rtx4 = d->queue.inj.rtx6 = -1;
	d->cfg = *cfg;
	d->ops = filter_find(config_filter_name(cfg->filter));
	if (!d->ops) {
		snprintf(err, errlen, "filter = %s: no such filter in this build", config_filter_name(cfg->filter));
		return -1;
	}
	d->started_ns = pepd_now_ns();
	/* first: another pepd answering on this socket must stop us before we touch anything */
	pepd_ctl_path(cfg, ctl_path, sizeof(ctl_path));
	if (ctl_server_open(&d->ctl, ctl_path, "pepd", err, errlen) < 0)
		return -1;
	if (queue_open(&d->queue, &d->cfg, d->ops, d->started_ns, err, errlen) < 0)
		return -1;
	if (evloop_open(&d->loop, err, errlen) < 0 || ctl_snapshot_open(&d->queue.snap, err, errlen) < 0)
		return -1;
	if (evloop_add(&d->loop, nfqueue_fd(&d->queue.nfq), EPOLLIN, on_netlink, &d->queue) < 0 ||
	    evloop_add(&d->loop, d->queue.snap.ask_fd, EPOLLIN, on_snapshot, &d->queue) < 0) {
		snprintf(err, errlen, "event loop set-up: %s", strerror(errno));
		return -1;
	}

	/* Rules last: by now everything that takes the packets is in place. */
	if (rules_install(cfg, &d->rules_used, err, errlen) < 0)
		return -1;
	d->rules_installed = cfg->rules != RULES_NONE;
	/*
	 * The control socket is served by a thread of its own (never this one,
	 * which handles packets), started once everything it reports on is
	 * set: an answer to ping means pepd is ready.
	 */
	if (ctl_server_start(&d->ctl, pepd_report, d, err, errlen) < 0)
		return -1;
	fprintf(stderr, "pepd: queue %u, filter %s, wireless %s%s, rules %s, fail-open %s, gso %s\n", cfg->queue,
		config_filter_name(cfg->filter), cfg->wireless[0], cfg->nwireless > 1 ? " ..." : "",
		config_rules_name(d->rules_used), cfg->fail_open ? "on" : "off", cfg->gso ? "on" : "off");
	return 0;
}

int pepd_run(struct pepd *d)
{
	return evloop_run(&d->loop, next_deadline, tick, &d->queue, "pepd");
}

void pepd_stop(struct pepd *d)
{
	ctl_server_stop(&d->ctl);	/* first: its thread reads what follows */
	if (d->rules_installed)
		rules_remove(&d->cfg, d->rules_used);
	d->rules_installed = false;
	queue_close(&d->queue);
	ctl_snapshot_close(&d->queue.snap);
	free(d->queue.snap_flows);
	d->queue.snap_flows = NULL;
	evloop_close(&d->loop);
}
