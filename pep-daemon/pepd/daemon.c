// SPDX-License-Identifier: GPL-2.0-only
/*
 * pepd's daemon: a queue's packets through the filter, the filter's
 * actions carried out, timers, and the life cycle.
 *
 * Several queues (queues), each run by a thread of its own with its own
 * event loop (evloop.h): its netlink socket (packets, through lib/nfq.c),
 * its timer (the earliest flow timer or the next idle sweep), its snapshot
 * requests from the control thread (pepd stats), and for queue 0, which
 * runs in the main thread, the signals.  The kernel's queue hash keeps
 * both directions of a connection on one queue, so each thread owns its
 * flows and nothing on the packet path is shared.  Packets are read until
 * the socket is empty, each is parsed, given to its flow's filter and
 * answered; verdicts go back in batches (verdict_batch bounds how many
 * wait).  Every packet is answered within its round, never held: the cache
 * keeps a copy, so the queue never fills because of pepd's own
 * bookkeeping.
 *
 * Order on the wire: the egress queue must take packets in the order the
 * filter saw them leave, since Snoop infers a loss from a later
 * transmission's arrival.  pepd's own sends (raw socket) leave at once,
 * the kernel forwards an accepted packet when its verdict is sent; so
 * before a send of pepd's own, held verdicts that let data towards the
 * wireless host through are sent first (order_flushes).  Sent after them,
 * a repair overtook data accepted earlier in its round, whose arrival
 * then came after the repair's: the data were taken for lost and
 * repaired in vain, and their ACK credited the repair's place in the
 * order, so everything sent since was taken for lost too.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
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
/* what headers_only copies: IPv4 or IPv6 with extension headers, TCP with every option */
#define HEADERS_COPY_RANGE 256

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
	if (q->wireless_verdict_held) {
		nfqueue_flush(&q->nfq);	/* see "Order on the wire" at the top */
		q->wireless_verdict_held = false;
		q->stats.order_flushes++;
	}
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

/*
 * Send every cached segment of [seq, end) (a GSO super-packet's slices, or
 * one segment): the original's place.  A send that fails for another
 * reason than a full queue lets the original go instead (*fallback).
 */
static void send_range(struct pepd_queue *q, struct flow *f, const struct pep_ctx *ctx, uint32_t seq, uint32_t end,
		       bool *fallback)
{
	long i = segq_find(&f->cache, seq);

	while (i >= 0 && (uint32_t)i < f->cache.count && !*fallback) {
		const struct seg *g = segq_at(&f->cache, (uint32_t)i);
		uint32_t next = g->end;

		if (!seq_before(g->seq, end))
			break;
		send_cached(q, f, ctx, g->seq, 1, false, fallback);
		if (next == end)
			break;
		/* the filter's answer may have changed the cache: find the next one by its place in sequence */
		i = segq_find(&f->cache, next);
	}
}

static void do_actions(struct pepd_queue *q, struct flow *f, const struct pep_ctx *ctx, const struct pep_out *out)
{
	uint32_t i;

	for (i = 0; i < out->nact; i++) {
		const struct pep_action *a = &out->act[i];

		if (a->type == ACTION_SEND_SEGMENT) {
			send_cached(q, f, ctx, a->seq, a->copies, true, NULL);
		} else if (inject_ack(&q->inj, f, a->seq, a->type == ACTION_SEND_DSACK ? &a->dsack : NULL,
					 a->window) < 0) {
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

/* Does the packet need its checksum completed before the filter sees it (it may be cached: data, a SYN-ACK)? */
static bool complete_first(const struct pepd_queue *q, const struct pkt *p, enum pep_dir dir)
{
	return q->caches_data && dir == DIR_TO_WIRELESS && (p->payload_len || (p->flags & TCPF_SYN));
}

/* When the wireless interfaces' egress qdiscs last dropped (egress_drops; 0: not watched). */
static uint64_t egress_drop_ns(struct pepd_queue *q, uint64_t now)
{
	if (!q->egress.nl)
		return 0;
	egress_poll(&q->egress, q->ifs.port, q->ifs.n, now);
	return q->egress.drops.rise_ns;
}

/* What the filters see of their queue; now and egress_drop_ns are the caller's. */
static struct pep_ctx queue_ctx(struct pepd_queue *q)
{
	return (struct pep_ctx){ .cfg = q->cfg, .budget = &q->ft.budget, .hops = &q->ft.hops,
				 .total = &q->stats.total, .mtu = q->inj.mtu };
}

/* The receive loop's callback: one packet, which gets its verdict here. */
void pepd_handle_packet(void *queue, const struct nfqueue_packet *pkt)
{
	struct pepd_queue *q = queue;
	struct pep_ctx ctx = queue_ctx(q);
	const struct pep_devs devs = { pkt->indev, pkt->outdev, pkt->physindev, pkt->physoutdev };
	bool cut = pkt->cap_len && pkt->cap_len != pkt->len, partial = false, ordered;
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
	if (cut) {
		bool short_copy;

		/* only the headers are here (headers_only, or a packet past 64 KiB): enough unless it is cached */
		if (q->caches_data || pkt->cap_len < pkt->len) {
			q->stats.truncated++;
			accept_unchanged(q, pkt);
			return;
		}
		r = pkt_parse_headers(pkt->data, pkt->len, pkt->cap_len, &p, &short_copy);
		if (short_copy) {
			q->stats.truncated++;
			accept_unchanged(q, pkt);
			return;
		}
	} else {
		r = pkt_parse(pkt->data, pkt->len, &p);
	}
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
	ctx.egress_drop_ns = egress_drop_ns(q, ctx.now);
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
	if (csum == CSUM_UNVERIFIABLE) {
		q->stats.headers_unverifiable++;
		accept_unchanged(q, pkt);
		return;
	}
	if (csum == CSUM_BAD) {
		if (dir == DIR_TO_WIRELESS)
			q->stats.bad_checksum_down++;
		else
			q->stats.bad_checksum_up++;
		accept_unchanged(q, pkt);
		return;
	}
	/*
	 * CHECKSUM_PARTIAL (the kernel's own bytes): completed before anything
	 * may be cached, otherwise only if pepd edits the packet; passed on
	 * unchanged, the kernel completes it itself.
	 */
	if (csum == CSUM_PARTIAL) {
		if (!complete_first(q, &p, dir))
			partial = true;
		else if (!complete_checksum(q, &p)) {
			accept_unchanged(q, pkt);	/* cannot happen: it parsed a moment ago */
			return;
		}
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
	/* data (or a SYN-ACK) the filter may have cached: its place in the order counts */
	ordered = q->caches_data && dir == DIR_TO_WIRELESS && (p.payload_len || (p.flags & TCPF_SYN));
	if (ordered && !(out.verdict == VERDICT_DROP || out.verdict == VERDICT_INJECT))
		q->wireless_verdict_held = true;
	if (out.verdict == VERDICT_DROP) {
		nfqueue_verdict(&q->nfq, pkt->id, NFQUEUE_DROP, NULL, 0);
	} else if (out.verdict == VERDICT_INJECT) {
		bool fallback = false;

		send_range(q, f, &ctx, out.inject_seq, out.inject_end, &fallback);
		nfqueue_verdict(&q->nfq, pkt->id, fallback ? NFQUEUE_ACCEPT : NFQUEUE_DROP, NULL, 0);
		if (fallback && ordered)
			q->wireless_verdict_held = true;
	} else if ((((out.sack_n || out.hide_sack) && p.sack_opt_off) || out.set_window) && !cut &&
		   (!partial || complete_checksum(q, &p))) {
		/* never a cut packet: its verdict's bytes would replace, and so cut, the whole packet */
		build_edit_ack(&p, out.hide_sack && p.sack_opt_off, out.sack_blocks, p.sack_opt_off ? out.sack_n : 0,
			       out.set_window ? out.window : -1, q->scratch);
		nfqueue_verdict(&q->nfq, pkt->id, NFQUEUE_ACCEPT, q->scratch, p.len);
		q->stats.verdicts_mangled++;
	} else if (out.bypass && q->bypass_mark && pkt->family != NFPROTO_BRIDGE && !(pkt->mark & q->bypass_mark)) {
		/*
		 * Through pepd's chain again with the mark, which its first rule
		 * saves to the connection: its queue rules then skip the flow.
		 * Never twice (a packet back with the mark: rules that do not
		 * know it), never a bridged frame (no conntrack in that family).
		 */
		nfqueue_verdict_mark(&q->nfq, pkt->id, NFQUEUE_REPEAT, pkt->mark | q->bypass_mark);
		if (!f->cnt.flows_bypassed)
			COUNT(&ctx, f, flows_bypassed, 1);
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
	struct pep_ctx ctx = queue_ctx(q);
	struct pep_out out;
	struct flow *f;

	ctx.now = pepd_now_ns();
	ctx.egress_drop_ns = egress_drop_ns(q, ctx.now);
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
	if (ctx.now - q->pool_trimmed_ns >= IDLE_SWEEP_NS) {
		/* copies the cache's pool kept for reuse and nobody reused: back to malloc */
		cache_pool_trim(&q->ft.budget);
		q->pool_trimmed_ns = ctx.now;
	}
}

/*
 * The earliest flow timer, or the next idle sweep: a second after the
 * last one, a fixed point, so that the timer is re-armed only when a flow
 * timer changes (run_timers also runs after every round of packets).
 */
static uint64_t next_deadline(void *ctx)
{
	struct pepd_queue *q = ctx;
	uint64_t next = flow_timer_next(&q->ft), sweep = q->pool_trimmed_ns + IDLE_SWEEP_NS;

	return !next || next > sweep ? sweep : next;
}

static void tick(void *ctx)
{
	run_timers(ctx);
}

/* A thread busy polling returns to its loop (timers, snapshots) after this long at most. */
#define BUSY_POLL_MAX_NS 1000000ULL

static void on_netlink(void *ctx, uint32_t events)
{
	struct pepd_queue *q = ctx;
	uint64_t start, now, until;

	(void)events;
	if (!nfqueue_receive(&q->nfq, MESSAGES_PER_ROUND, pepd_handle_packet, q) || !q->cfg->busy_poll_ns)
		return;
	/* busy_poll: stay awake a while for what follows closely, rather than be woken for it */
	start = now = pepd_now_ns();
	until = start + q->cfg->busy_poll_ns;
	while (now < until && now - start < BUSY_POLL_MAX_NS) {
		if (nfqueue_receive(&q->nfq, MESSAGES_PER_ROUND, pepd_handle_packet, q))
			until = pepd_now_ns() + q->cfg->busy_poll_ns;
		now = pepd_now_ns();
	}
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

/* What a queue's thread keeps resident of its stack (it never recurses; its buffers are in struct pepd_queue). */
#define QUEUE_THREAD_STACK (256ULL << 10)

uint32_t pepd_queue_max_flows(const struct pep_config *cfg)
{
	uint32_t nq = config_queue_count(cfg);

	return (cfg->max_flows + nq - 1) / nq;
}

uint64_t pepd_queue_cache_bytes(const struct pep_config *cfg)
{
	return cfg->total_cache_bytes / config_queue_count(cfg);
}

uint32_t pepd_copy_range(const struct pep_config *cfg)
{
	/* only passthrough never reads, caches or sends on a packet's data */
	return cfg->headers_only && cfg->filter == FILTER_PASSTHROUGH ? HEADERS_COPY_RANGE : NFQUEUE_COPY_ALL;
}

uint64_t pepd_memory_bound(const struct pep_config *cfg)
{
	uint64_t buckets = 1, bound, nq = config_queue_count(cfg), per_queue = pepd_queue_max_flows(cfg);

	while (buckets < per_queue && buckets < (1u << 30))
		buckets <<= 1;
	bound = PEPD_BASE_MEMORY + sizeof(struct pepd);
	bound += nq * (sizeof(struct pepd_queue) + nfqueue_memory() + QUEUE_THREAD_STACK);
	bound += nq * (per_queue * (sizeof(struct flow) + sizeof(struct flow *)) + buckets * sizeof(struct flow *));
	bound += nq * HOP_SLOTS * sizeof(struct hop);
	bound += cfg->total_cache_bytes;
	if (cfg->trace_file[0])
		bound += nq << 20;
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
	jo_u64(j, "cache_pool_bytes", c->cache_pool_bytes);
	jo_u64(j, "cache_copies_fresh", c->cache_copies_fresh);
	jo_u64(j, "cache_copies_reused", c->cache_copies_reused);
	jo_u64(j, "memory_bound", pepd_memory_bound(cfg));
}

/* ---------------------------------------------------------------- lifecycle */

/* The main thread asks a queue's thread to stop. */
static void on_stop(void *ctx, uint32_t events)
{
	struct pepd_queue *q = ctx;

	(void)events;
	q->loop.stop = true;
}

/* Everything closed (so queue_close is safe after any failure). */
static void queue_init(struct pepd_queue *q)
{
	evloop_init(&q->loop);
	q->stop_fd = -1;
	q->snap.ask_fd = q->snap.done_fd = -1;
	nfqueue_init(&q->nfq);
	q->inj.fd4 = q->inj.fd6 = q->inj.rtx4 = q->inj.rtx6 = -1;
}

static int open_trace(struct pepd_queue *q, const struct pep_config *cfg, char *err, size_t errlen)
{
	char path[PEP_PATH_MAX + 16];

	/* one file per queue: threads never share one */
	if (config_queue_count(cfg) > 1)
		snprintf(path, sizeof(path), "%s.%u", cfg->trace_file, cfg->queue + q->index);
	else
		snprintf(path, sizeof(path), "%s", cfg->trace_file);
	q->trace = fopen(path, "w");
	if (!q->trace) {
		snprintf(err, errlen, "trace_file = %s: %s", path, strerror(errno));
		return -1;
	}
	setvbuf(q->trace, NULL, _IOFBF, 1 << 20);
	return 0;
}

/*
 * A queue's flows, sockets, NFQUEUE binding and event loop (queue 0's
 * takes the signals); on error one line in err (queue_close undoes any
 * part).
 */
static int queue_open(struct pepd_queue *q, uint32_t index, const struct pep_config *cfg,
		      const struct pep_filter_ops *ops, uint32_t bypass_mark, uint64_t now, char *err, size_t errlen)
{
	const struct nfqueue_params params = {
		.queue = (uint16_t)(cfg->queue + index),
		.maxlen = cfg->queue_maxlen,
		.socket_buffer = cfg->socket_buffer,
		.copy_range = pepd_copy_range(cfg),
		.flush_bound = cfg->verdict_batch,
		.fail_open = cfg->fail_open,
		.gso = cfg->gso,
	};
	uint64_t seed = 0;

	q->cfg = cfg;
	q->ops = ops;
	q->index = index;
	q->caches_data = cfg->filter == FILTER_SNOOP || cfg->filter == FILTER_SNOOPPLUS;
	q->bypass_mark = bypass_mark;
	q->trace_start_ns = now;
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = now + index;
	if (flow_table_init(&q->ft, pepd_queue_max_flows(cfg), seed, pepd_queue_cache_bytes(cfg),
			    (uint32_t)cfg->flow_cache_bytes) < 0) {
		snprintf(err, errlen, "max_flows = %u: cannot allocate the flow table", cfg->max_flows);
		return -1;
	}
	q->ft.budget.seg_limit = cfg->flow_cache_segments;
	resolve_interfaces(q);
	for (uint32_t i = 0; i < cfg->nwireless && index == 0; i++)
		if (!q->ifs.port[i])
			fprintf(stderr, "pepd: warning: wireless = %s: no such interface (yet); watching for it\n",
				cfg->wireless[i]);
	if (inject_open(&q->inj, cfg->mark, cfg->rtx_priority, err, errlen) < 0)
		return -1;
	if (q->caches_data && cfg->egress_drops && egress_open(&q->egress, err, errlen) < 0)
		return -1;
	if (cfg->trace_file[0] && open_trace(q, cfg, err, errlen) < 0)
		return -1;
	if (nfqueue_open(&q->nfq, &params, err, errlen) < 0)
		return -1;
	if (index == 0) {
		if (evloop_open(&q->loop, err, errlen) < 0)
			return -1;
	} else if (evloop_open_thread(&q->loop, err, errlen) < 0) {
		return -1;
	}
	if (ctl_snapshot_open(&q->snap, err, errlen) < 0)
		return -1;
	q->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->stop_fd < 0 || evloop_add(&q->loop, nfqueue_fd(&q->nfq), EPOLLIN, on_netlink, q) < 0 ||
	    evloop_add(&q->loop, q->snap.ask_fd, EPOLLIN, on_snapshot, q) < 0 ||
	    evloop_add(&q->loop, q->stop_fd, EPOLLIN, on_stop, q) < 0) {
		snprintf(err, errlen, "queue %u: event loop set-up: %s", cfg->queue + index, strerror(errno));
		return -1;
	}
	return 0;
}

static void queue_close(struct pepd_queue *q)
{
	nfqueue_close(&q->nfq);
	inject_close(&q->inj);
	egress_close(&q->egress);
	flow_table_free(&q->ft);
	if (q->trace)
		fclose(q->trace);
	q->trace = NULL;
	ctl_snapshot_close(&q->snap);
	free(q->snap_flows);
	q->snap_flows = NULL;
	if (q->stop_fd >= 0)
		close(q->stop_fd);
	q->stop_fd = -1;
	evloop_close(&q->loop);
}

static void *queue_thread(void *arg)
{
	struct pepd_queue *q = arg;

	if (evloop_run(&q->loop, next_deadline, tick, q, "pepd") < 0)
		fprintf(stderr, "pepd: queue %u stopped: its packets pass without pepd (fail-open)\n",
			q->cfg->queue + q->index);
	return NULL;
}

int pepd_start(struct pepd *d, const struct pep_config *cfg, char *err, size_t errlen)
{
	/* once: the queues hand flows back with the mark the rules skip, so both must agree */
	uint32_t bypass_mark = rules_bypass_mark(cfg);
	char ctl_path[PEP_PATH_MAX];
	uint32_t i;

	memset(d, 0, sizeof(*d));
	ctl_server_init(&d->ctl);
	d->cfg = *cfg;
	d->ops = filter_find(config_filter_name(cfg->filter));
	if (!d->ops) {
		snprintf(err, errlen, "filter = %s: no such filter in this build", config_filter_name(cfg->filter));
		return -1;
	}
	d->nqueues = config_queue_count(cfg);
	d->queues = calloc(d->nqueues, sizeof(*d->queues));
	if (!d->queues) {
		snprintf(err, errlen, "queues = %u: out of memory", d->nqueues);
		d->nqueues = 0;
		return -1;
	}
	for (i = 0; i < d->nqueues; i++)
		queue_init(&d->queues[i]);
	d->started_ns = pepd_now_ns();
	/* first: another pepd answering on this socket must stop us before we touch anything */
	pepd_ctl_path(cfg, ctl_path, sizeof(ctl_path));
	if (ctl_server_open(&d->ctl, ctl_path, "pepd", err, errlen) < 0)
		return -1;
	/* queue 0 first: its loop blocks the signals, which every thread started later inherits */
	for (i = 0; i < d->nqueues; i++)
		if (queue_open(&d->queues[i], i, &d->cfg, d->ops, bypass_mark, d->started_ns, err, errlen) < 0)
			return -1;
	for (i = 1; i < d->nqueues; i++) {
		int e = pthread_create(&d->queues[i].thread, NULL, queue_thread, &d->queues[i]);

		if (e) {
			snprintf(err, errlen, "queue %u: thread: %s", cfg->queue + i, strerror(e));
			return -1;
		}
		d->queues[i].thread_running = true;
	}

	/* Rules last: by now everything that takes the packets is in place. */
	if (rules_install(cfg, d->nqueues, bypass_mark, &d->rules_used, err, errlen) < 0)
		return -1;
	d->rules_installed = cfg->rules != RULES_NONE;
	/*
	 * The control socket is served by a thread of its own (never one that
	 * handles packets), started once everything it reports on is set: an
	 * answer to ping means pepd is ready.
	 */
	if (ctl_server_start(&d->ctl, pepd_report, d, err, errlen) < 0)
		return -1;
	if (d->nqueues > 1)
		fprintf(stderr, "pepd: queues %u-%u", cfg->queue, cfg->queue + d->nqueues - 1);
	else
		fprintf(stderr, "pepd: queue %u", cfg->queue);
	fprintf(stderr, ", filter %s, wireless %s%s, rules %s, fail-open %s, gso %s\n", config_filter_name(cfg->filter),
		cfg->wireless[0], cfg->nwireless > 1 ? " ..." : "", config_rules_name(d->rules_used),
		cfg->fail_open ? "on" : "off", cfg->gso ? "on" : "off");
	return 0;
}

int pepd_run(struct pepd *d)
{
	return evloop_run(&d->queues[0].loop, next_deadline, tick, &d->queues[0], "pepd");
}

void pepd_stop(struct pepd *d)
{
	uint64_t one = 1;
	uint32_t i;

	ctl_server_stop(&d->ctl);	/* first: its thread reads what follows */
	if (d->rules_installed)
		rules_remove(&d->cfg, d->rules_used);
	d->rules_installed = false;
	for (i = 1; i < d->nqueues; i++) {
		struct pepd_queue *q = &d->queues[i];

		if (!q->thread_running)
			continue;
		if (write(q->stop_fd, &one, sizeof(one)) < 0)
			fprintf(stderr, "pepd: queue %u: cannot ask its thread to stop\n", d->cfg.queue + i);
		pthread_join(q->thread, NULL);
		q->thread_running = false;
	}
	for (i = 0; i < d->nqueues; i++)
		queue_close(&d->queues[i]);
	free(d->queues);
	d->queues = NULL;
	d->nqueues = 0;
}
