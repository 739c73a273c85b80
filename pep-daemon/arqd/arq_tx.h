/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sending side of the ARQ link: pure (no I/O, the clock is an
 * argument).  IP packets go in (arq_tx_submit), link frames come out
 * (arq_tx_peek, then arq_tx_sent once the link took the frame), link
 * acknowledgements come back (arq_tx_on_ack: Vaidya99's per-frame acks;
 * arq_tx_on_status: RLP-style cumulative + bitmap status frames).
 *
 * Every frame gets a link sequence number of its own when it is queued.
 * A frame is lost when a frame transmitted after it has been acknowledged
 * (per transmission, so a retransmission is not declared lost again by
 * acks of frames sent before it) or when its retransmission timer expires.
 * Lost frames go to a retransmission queue that is served before new data.
 * After max_rtx retransmissions a frame is given up (counted) and the link
 * goes on: nothing is reset (Wong/Leung's best-effort modified MDLP).
 *
 * States of a frame: NEW (queued, never sent) -> INFLIGHT -> DONE
 * (acknowledged), or INFLIGHT -> LOST (in the retransmission queue) ->
 * INFLIGHT ..., or LOST -> given up (DONE).  An acknowledgement of a LOST
 * frame (its ack was late, not the frame) makes it DONE.
 *
 * idle_repair: while the sender has nothing else to send (no new frame, no
 * retransmission queued), a frame's timer is one smoothed link round trip
 * plus one deviation instead of the full timeout, and it backs off only
 * while nothing is heard from the peer.  Such a repair costs airtime the
 * link would leave unused, and it finds the losses no later frame can
 * reveal: the last frames of a burst, and retransmissions that were lost
 * again.  It counts towards max_rtx like any retransmission.
 *
 * timer_restart: the full timeout of a frame runs from the later of its
 * transmission and the last ack of a new frame, as TCP's (RFC 6298 5.3):
 * only a link silent for a whole timeout fires it.
 */
#ifndef ARQ_TX_H
#define ARQ_TX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arq_frame.h"

#define ARQ_TX_COUNTERS(X)                                                                       \
	X(packets_in, "IP packets taken from the TUN device")                                   \
	X(frames_queued, "link frames queued (one per packet, or per fragment)")                \
	X(fragmented_packets, "packets cut into fragments to the link MTU")                     \
	X(frames_sent, "data frames handed to the link, first transmissions and retransmissions") \
	X(frames_new, "first transmissions")                                                    \
	X(retransmitted, "retransmissions")                                                     \
	X(lost_by_ack, "frames declared lost because a later frame was acknowledged")           \
	X(lost_by_timer, "frames declared lost by the retransmission timer")                    \
	X(lost_by_idle_timer, "of those, by the shorter timer of an idle link (idle_repair)")    \
	X(given_up, "frames given up after max_rtx retransmissions (left to TCP)")              \
	X(acked, "frames acknowledged")                                                         \
	X(acked_after_rtx, "frames acknowledged after a retransmission")                        \
	X(stale_feedback, "acks or status frames about frames not outstanding")                 \
	X(buffer_full_drops, "packets dropped: send buffer (window or bytes) full")             \
	X(too_big_drops, "packets dropped: larger than the link MTU allows (255 fragments, or no fragmentation)") \
	X(payload_bytes_sent, "payload bytes of data frames sent (retransmissions included)")

struct arq_tx_counters {
#define ARQ_TX_FIELD(name, desc) uint64_t name;
	ARQ_TX_COUNTERS(ARQ_TX_FIELD)
#undef ARQ_TX_FIELD
};

struct arq_tx_params {
	uint32_t window;	/* frames outstanding (queued or unacknowledged) at most */
	uint32_t max_rtx;	/* N2: retransmissions of a frame before it is given up */
	uint64_t buffer_bytes;	/* payload bytes held at most */
	uint32_t frag_payload;	/* fragment packets longer than this (bytes); 0: never */
	uint32_t max_payload;	/* packets longer than this are dropped when not fragmenting */
	uint64_t rto_initial_ns, rto_min_ns, rto_max_ns;
	bool idle_repair;	/* the shorter timer while there is nothing else to send */
	bool timer_restart;	/* the full timeout runs from the last ack of a new frame, if later */
	uint32_t isn;		/* the first sequence number: random in the daemon, so that a restart
				 * is seen as one by the receiver, whose window is elsewhere */
};

enum arq_tx_state { TX_FREE, TX_NEW, TX_INFLIGHT, TX_LOST };

struct arq_tx_frame {
	uint8_t *data;
	uint16_t len;
	uint8_t state;
	uint8_t ntx;		/* transmissions so far */
	uint16_t pkt_id;
	uint8_t frag_index, frag_count;
	uint64_t first_order;	/* transmission counter at the first send */
	uint64_t order;		/* ... at the latest send */
	uint64_t sent_ns;	/* latest send */
};

struct arq_tx {
	struct arq_tx_params p;
	struct arq_tx_frame *ring;	/* indexed by seq & mask */
	uint32_t mask;
	uint32_t base;		/* lowest frame not yet acknowledged or given up */
	uint32_t next_seq;	/* next sequence number to assign */
	uint32_t next_new;	/* lowest NEW frame (all below were sent at least once) */
	uint32_t *rtxq;		/* retransmission queue: sequence numbers, FIFO */
	uint32_t rtx_head, rtx_count;
	uint64_t order;		/* transmissions so far */
	uint64_t acked_order;	/* highest first_order of an acknowledged frame */
	uint64_t bytes;		/* payload bytes held */
	uint16_t next_pkt_id;
	uint64_t srtt_ns, rttvar_ns, rto_ns;
	bool have_rtt;
	uint32_t backoff;	/* timer expiries since the last RTT sample: rto doubles */
	uint64_t heard_ns;	/* the latest frame from the peer (arq_tx_heard, acks, status) */
	uint64_t progress_ns;	/* the latest ack of a frame not acknowledged before */
	uint32_t peek_seq;	/* what arq_tx_peek returned */
	bool peek_valid, peek_rtx;
	struct arq_tx_counters cnt;
};

int arq_tx_init(struct arq_tx *tx, const struct arq_tx_params *p);
void arq_tx_free(struct arq_tx *tx);

/* Frames that can be queued now (window and bytes permitting). */
uint32_t arq_tx_room(const struct arq_tx *tx);

/* Frames a packet of len bytes takes. */
uint32_t arq_tx_frames_for(const struct arq_tx *tx, size_t len);

/* Queue an IP packet (copied): 0, or -1 if dropped (counted: full, too big). */
int arq_tx_submit(struct arq_tx *tx, const uint8_t *pkt, size_t len);

/*
 * The frame to send next, retransmissions before new data (f->payload
 * points into the sender's buffer); false if there is none.  Nothing
 * changes until arq_tx_sent: a link that refused the frame (full queue)
 * simply gets the same frame again later.
 */
bool arq_tx_peek(struct arq_tx *tx, struct arq_frame *f);

/* The frame arq_tx_peek returned has been handed to the link at now. */
void arq_tx_sent(struct arq_tx *tx, uint64_t now);

/* A link ack: frame seq received, and every frame below cum received or given up by us. */
void arq_tx_on_ack(struct arq_tx *tx, uint32_t seq, uint32_t cum, uint64_t now);

/* An ack carried in a data frame: every frame below cum received or given up by us. */
void arq_tx_on_carried_ack(struct arq_tx *tx, uint32_t cum, uint64_t now);

/* A status frame: every frame below cum received; bitmap bit i: frame cum + 1 + i received. */
void arq_tx_on_status(struct arq_tx *tx, uint32_t cum, const uint8_t *bitmap, size_t bitmap_len, uint64_t now);

/* A valid frame of any type arrived from the peer at now: the link is up. */
void arq_tx_heard(struct arq_tx *tx, uint64_t now);

/* The earliest retransmission deadline (0: none). */
uint64_t arq_tx_deadline(const struct arq_tx *tx);

/* Declare frames whose timer expired lost (or give them up). */
void arq_tx_on_timer(struct arq_tx *tx, uint64_t now);

/* Frames outstanding (queued or unacknowledged) now. */
static inline uint32_t arq_tx_outstanding(const struct arq_tx *tx)
{
	return tx->next_seq - tx->base;
}

#endif
