/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A flow's segment cache: copies of the data packets forwarded towards the
 * wireless host and not yet acknowledged by it, in sequence order.
 *
 * A ring of descriptors (most segments arrive at the tail and leave at the
 * head), each pointing at a copy of the IP packet it was cut from: one
 * segment per packet, or, for a GSO super-packet, one per MSS-sized slice,
 * all sharing the one copy (counted references), so that each slice is
 * acknowledged, found lost and retransmitted on its own.  Three bounds,
 * each refusal counted by its reason: a flow's packet bytes
 * (flow_cache_bytes, each slice charged as the packet it would be on its
 * own), a flow's segments (flow_cache_segments: a flood of tiny segments
 * costs descriptors and per-ACK work, not bytes), and the memory of all
 * flows' caches together (total_cache_bytes), charged as the allocator
 * spends it: each copy by its size class with malloc's overhead, each ring
 * by its capacity (freed when it empties), and the copies the pool keeps
 * for reuse.  An insert that would exceed one is refused, and the caller
 * passes that segment through uncached.
 *
 * The copies come from a pool of size classes (each at most 1.5 times the
 * last, 64 bytes to a 64 KiB packet): a freed copy goes to its class's
 * free list and the next packet of that size takes it, so a steady flow
 * costs no malloc per packet.  What a free list held unused since the last
 * cache_pool_trim (once a second, pepd's idle sweep) goes back to malloc.
 */
#ifndef PEPD_CACHE_H
#define PEPD_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Segment flags */
#define SEG_SENDER_RTX 0x01	/* the fixed host retransmitted it: dupacks for it go to the sender */
#define SEG_SACKED 0x02		/* the receiver's SACK blocks cover it */
#define SEG_GIVEN_UP 0x04	/* max_local_rtx reached: the sender must recover it */
#define SEG_QUEUE_DROP 0x08	/* refused by this box's egress queue: a congestion loss, the sender's */
#define SEG_UNSENT_TX 0x10	/* its latest transmission never left (the queue refused it): no RTT sample */
#define SEG_RTX_DROPPED 0x20	/* the sender's retransmission of it was dropped (ours was on its way) */
#define SEG_REORDER_HELD 0x40	/* reorder_window held its repair back: it may only be reordered */
#define SEG_RATE_COUNTED 0x80	/* its bytes are in the delivery rate already (SACKed before the ACK) */
#define SEG_NOT_OURS (SEG_GIVEN_UP | SEG_QUEUE_DROP)	/* holes pepd will not repair */

/* A cached packet: one allocation, shared by the segments cut from it. */
struct seg_buf {
	struct seg_buf *next_free;	/* on its class's free list */
	uint32_t refs;		/* segments that point at it */
	uint32_t len;		/* bytes at data: the whole IP packet as forwarded */
	uint8_t cls;		/* its pool size class */
	uint8_t data[];
};

struct seg {
	uint32_t seq;		/* first sequence number */
	uint32_t end;		/* one past the last */
	uint64_t tx_first;	/* ordinal of the first copy of its latest transmission round */
	uint64_t tx_order;	/* ordinal of the last copy of that round */
	uint64_t credit_order;	/* what an ACK or SACK of it proves arrived (see filter_snoop.c) */
	uint64_t first_tx_ns;
	uint64_t last_tx_ns;
	uint16_t local_rtx;	/* local retransmission rounds so far */
	uint8_t flags;
	uint8_t last_extra;	/* extra copies sent in the latest local round */
	uint32_t len;		/* bytes charged to the flow: the segment as a packet of its own */
	struct seg_buf *buf;	/* the packet it was cut from (buf->data, buf->len) */
};

#define CACHE_CLASSES 21

/* Copies kept for reuse, by size class. */
struct cache_pool {
	struct seg_buf *free[CACHE_CLASSES];
	uint32_t nfree[CACHE_CLASSES];
	uint32_t taken[CACHE_CLASSES];	/* taken from a free list since the last trim */
	uint64_t mem;		/* what the free lists hold, as malloc spent it */
	uint64_t fresh;		/* copies malloc'ed */
	uint64_t reused;	/* copies taken from a free list */
};

struct cache_budget {
	uint64_t bytes;		/* packet bytes cached now, all flows */
	uint64_t packets;
	uint64_t mem;		/* memory the caches hold now: copies with allocation overhead, rings */
	uint64_t limit;		/* total_cache_bytes: the bound on mem + pool.mem */
	struct cache_pool pool;
	uint32_t flow_limit;	/* flow_cache_bytes: the bound on a flow's packet bytes */
	uint32_t seg_limit;	/* flow_cache_segments: the bound on a flow's segments (0: none) */
	/* inserts refused, by the bound that refused them */
	uint64_t refused_flow_bytes, refused_flow_segments, refused_total, refused_nomem;
};

/* Memory an allocation of n bytes takes from the heap (glibc: 16-byte chunks, 8 bytes of header). */
static inline uint64_t cache_alloc_size(uint64_t n)
{
	uint64_t c = (n + 8 + 15) & ~(uint64_t)15;

	return c < 32 ? 32 : c;
}

/* What a copy of a len-byte packet costs the total bound: its size class, as malloc spends it. */
uint64_t cache_charge(uint32_t len);

struct segq {
	struct seg *ring;
	uint32_t cap;		/* power of two, or 0 before the first insert */
	uint32_t head;
	uint32_t count;
	uint32_t bytes;
};

static inline struct seg *segq_at(const struct segq *q, uint32_t i)
{
	return &q->ring[(q->head + i) & (q->cap - 1)];
}

enum cache_insert {
	CACHE_INSERTED,
	CACHE_DUPLICATE,	/* a segment with this sequence number is already cached */
	CACHE_FULL,		/* a bound (counted in the budget by reason): not cached */
	CACHE_NOMEM,
};

/*
 * Insert a copy of the packet (len bytes) covering [seq, end), keeping
 * sequence order; *out points at the descriptor when inserted or duplicate.
 */
enum cache_insert segq_insert(struct segq *q, struct cache_budget *b, uint32_t seq, uint32_t end,
			      const uint8_t *pkt, uint32_t len, struct seg **out);

/*
 * Replace g's bytes (and end) with a newer copy of the same segment, e.g.
 * the sender's own retransmission.  -1 if the bounds do not allow it: the
 * caller must then drop the old copy (segq_remove), never keep it.
 */
int segq_replace(struct segq *q, struct cache_budget *b, struct seg *g, uint32_t end, const uint8_t *pkt,
		 uint32_t len);

/*
 * A copy of a packet to cut several segments from (a GSO super-packet):
 * the caller holds one reference, and each segment inserted with it one
 * more.  NULL when the total bound or malloc refuses (counted).
 */
struct seg_buf *seg_buf_new(struct cache_budget *b, const uint8_t *pkt, uint32_t len);

/* Drop a reference; the last one gives the copy back to the pool. */
void seg_buf_put(struct cache_budget *b, struct seg_buf *buf);

/*
 * segq_insert and segq_replace for a segment of a shared copy, charged
 * `charge` bytes against the flow's bound (the segment as a packet of its
 * own); a segment inserted or replaced takes a reference to buf.
 */
enum cache_insert segq_insert_buf(struct segq *q, struct cache_budget *b, uint32_t seq, uint32_t end,
				  struct seg_buf *buf, uint32_t charge, struct seg **out);
int segq_replace_buf(struct segq *q, struct cache_budget *b, struct seg *g, uint32_t end, struct seg_buf *buf,
		     uint32_t charge);

/* Give malloc back what the free lists held unused since the last call (pepd: once a second). */
void cache_pool_trim(struct cache_budget *b);

/* Give malloc back every copy the free lists hold. */
void cache_pool_drain(struct cache_budget *b);

/* Free the segment at index i. */
void segq_remove(struct segq *q, struct cache_budget *b, uint32_t i);

/* Free every segment whose end is at or before ack; returns how many. */
uint32_t segq_ack(struct segq *q, struct cache_budget *b, uint32_t ack);

/* Index of the segment containing seq, or -1. */
long segq_find(const struct segq *q, uint32_t seq);

void segq_clear(struct segq *q, struct cache_budget *b);

#endif
