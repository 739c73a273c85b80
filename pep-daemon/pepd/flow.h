/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flow table: TCP connections between a fixed host and a wireless
 * host, keyed by the 4-tuple oriented from the fixed host's side, with
 * bounded memory.  max_flows descriptors are allocated once.
 *
 * A flow is embryonic until its handshake is proven (conn_observe): the
 * side that answered a SYN acknowledges the other's initial sequence
 * number, something a sender of forged SYNs who never sees the answer
 * cannot do.  Embryonic and established flows are kept on two LRU lists:
 * when every descriptor is in use, a new connection takes the place of
 * the oldest embryonic flow (a SYN flood churns among its own), and only
 * when none is embryonic does it pass through untracked; both counted.
 * Flows idle for idle_timeout are freed, oldest first, and each flow can
 * hold one timer, kept in a binary min-heap.
 */
#ifndef PEPD_FLOW_H
#define PEPD_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "filter.h"
#include "filter_state.h"
#include "hop.h"
#include "packet.h"
#include "seq.h"
#include "stats.h"

struct flow_key {
	uint8_t family;
	uint8_t pad;
	uint16_t fh_port;	/* the fixed host's port */
	uint16_t wh_port;	/* the wireless host's port */
	uint8_t fh[16];
	uint8_t wh[16];
};

/* What pepd knows of the connection, from both directions, whatever the filter. */
struct conn {
	bool fh_syn, wh_syn;		/* SYN seen from that side */
	bool fh_sack_perm, wh_sack_perm;
	bool fh_ts, wh_ts;
	bool fh_wscale, wh_wscale_seen;	/* the SYNs carried window scale options */
	uint8_t wh_wscale;		/* the wireless host's shift */
	bool sack_seen;			/* SACK blocks seen mid-stream */
	uint16_t wh_mss;		/* MSS the wireless host announced (0: unknown) */
	uint32_t max_payload;		/* largest payload seen from the fixed host */
	bool fh_has_ts;
	uint32_t fh_tsval;		/* the fixed host's newest TSval */
	/* the wireless host's side: enough to write an ACK in its name */
	bool wh_seen;
	uint32_t wh_nxt;
	uint16_t wh_window;
	bool wh_has_ts;
	uint32_t wh_tsval, wh_tsecr;
	bool closed;			/* RST seen */
	bool midstream;			/* adopted without seeing its SYN */
	/* the handshake, seen from here */
	uint32_t fh_isn, wh_isn;	/* initial sequence numbers (a mid-stream flow: before its first byte seen) */
	bool fh_started;		/* fh_isn and fh_nxt are known */
	uint32_t fh_nxt;		/* one past the highest sequence number from the fixed host */
	bool established;		/* one side acknowledged what the other sent: a real connection */
};

/*
 * The TSval for a local retransmission of a segment cached with cached_tsval.
 * In FIFO order the fixed host's newest: never below the receiver's
 * TS.Recent (PAWS would drop it), and everything queued ahead of it is
 * older anyway.  A repair that overtakes the queue (rtx_priority) must not
 * be newer than what it overtakes: once it fills the hole the receiver
 * takes its TSval as TS.Recent and PAWS then drops every queued segment
 * sent more than a tick before it.  So: the segment's own TSval, raised to
 * the receiver's TS.Recent (the TSecr of its latest ACK) if that is newer.
 */
static inline uint32_t conn_repair_tsval(const struct conn *c, uint32_t cached_tsval, bool overtakes)
{
	if (!overtakes)
		return c->fh_tsval;
	return c->wh_has_ts ? seq_max(cached_tsval, c->wh_tsecr) : cached_tsval;
}

/* The shift the fixed host applies to the wireless host's window; -1 unknown (no SYNs seen). */
static inline int conn_wh_shift(const struct conn *c)
{
	if (!c->fh_syn || !c->wh_syn)
		return -1;
	return c->fh_wscale && c->wh_wscale_seen ? c->wh_wscale : 0;
}

static inline bool conn_sack_ok(const struct conn *c)
{
	return (c->fh_sack_perm && c->wh_sack_perm) || c->sack_seen;
}

#define FLOW_NO_HEAP UINT32_MAX

struct flow {
	struct flow_key key;
	struct flow *hnext;
	struct flow *lru_prev, *lru_next;	/* most recently seen at the head (of its list) */
	bool young;				/* on the embryonic list */
	uint32_t heap_idx;
	uint64_t deadline;			/* 0: no timer */
	uint64_t created_ns;
	uint64_t last_ns;
	uint64_t id;
	struct conn conn;
	struct segq cache;
	struct pep_counters cnt;
	union {
		struct snoop_state snoop;
		struct pc_state pc;
	} st;
};

struct flow_table {
	struct flow **buckets;
	uint32_t nbuckets;	/* power of two */
	struct flow *pool;
	struct flow *free_list;
	uint32_t max_flows;
	uint32_t nflows;
	uint32_t nyoung;	/* embryonic flows */
	struct flow lru;	/* sentinel: established flows */
	struct flow young;	/* sentinel: embryonic flows */
	struct flow **heap;
	uint32_t heap_len;
	uint64_t seed;
	uint64_t next_id;
	struct cache_budget budget;
	struct hop_table hops;	/* what the flows to one wireless host share */
};

int flow_table_init(struct flow_table *t, uint32_t max_flows, uint64_t seed, uint64_t total_cache,
		    uint32_t flow_cache);
void flow_table_free(struct flow_table *t);

/* Key of the connection a packet belongs to, oriented by the direction it travels. */
void flow_key_of(const struct pkt *p, enum pep_dir dir, struct flow_key *k);

struct flow *flow_lookup(struct flow_table *t, const struct flow_key *k);

/* Allocate an embryonic flow for k; NULL when the table is full. */
struct flow *flow_create(struct flow_table *t, const struct flow_key *k, uint64_t now);

/* The oldest embryonic flow (to make room for a new one), or NULL. */
struct flow *flow_oldest_embryonic(struct flow_table *t);

/* Move f to the established flows once conn_observe proved its handshake. */
void flow_establish(struct flow_table *t, struct flow *f);

/* Back to the embryonic flows: a new connection on f's 4-tuple. */
void flow_restart(struct flow_table *t, struct flow *f);

/* Free f and everything it caches. */
void flow_destroy(struct flow_table *t, struct flow *f);

/* Mark f as seen now (moves it to the head of the LRU list). */
void flow_touch(struct flow_table *t, struct flow *f, uint64_t now);

/* Flows not seen since now - idle_ns, oldest first; NULL when none. */
struct flow *flow_oldest_idle(struct flow_table *t, uint64_t now, uint64_t idle_ns);

void flow_timer_set(struct flow_table *t, struct flow *f, uint64_t deadline);
void flow_timer_cancel(struct flow_table *t, struct flow *f);

/* Earliest timer deadline, or 0 when no flow has one. */
uint64_t flow_timer_next(const struct flow_table *t);

/* Pop a flow whose deadline is at or before now (its timer is cleared); NULL when none. */
struct flow *flow_timer_expired(struct flow_table *t, uint64_t now);

/*
 * Update the connection facts from a packet (any filter).  Sets
 * c->established when the packet acknowledges, for the first time, bytes
 * the other side sent: the fixed host acknowledging the wireless host's
 * SYN (its initial sequence number and beyond, up to what it sent), or the
 * wireless host acknowledging the fixed host's SYN or, for a flow adopted
 * mid-stream, data pepd saw.
 */
void conn_observe(struct conn *c, const struct pkt *p, enum pep_dir dir);

/* The next live flow after f (established ones first, then embryonic), NULL at the end. */
static inline struct flow *flow_iter_next(struct flow_table *t, const struct flow *f)
{
	struct flow *n = f->lru_next;

	if (n == &t->lru)
		n = t->young.lru_next;
	return n == &t->young ? NULL : n;
}

/* Iterate every live flow (for stats): established ones, most recent first, then embryonic ones. */
#define flow_for_each(t, f) for ((f) = flow_iter_next((t), &(t)->lru); (f); (f) = flow_iter_next((t), (f)))

#endif
