/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The receiving side of the ARQ link: pure (no I/O, the clock is an
 * argument; deliveries and feedback frames leave through callbacks).
 *
 * A data frame whose sequence number lies a window or more past the base
 * it carries is a lie (the sender never has more than a window outstanding
 * above its base): dropped, counted.  A frame whose base lies far from the
 * window (more than two windows below low: a sender that restarted, or
 * more than a window above it: one that gave up more than a window during
 * an outage) is out of step: it is dropped, and only RESYNC_FRAMES such
 * frames with distinct sequence numbers and bases agreeing with each
 * other, with no frame in step between them, move the window to their
 * base.  So one stale frame (of a sender that restarted since) or one
 * forged frame never resets the receiver; a restarted sender's first few
 * frames are retransmitted.
 *
 * Every data frame is checked against the receive window [low, low +
 * window): below it or already received is a duplicate (suppressed,
 * counted; in ack mode acknowledged again, since its ack may have been
 * lost), beyond it is dropped.  "low" is the lowest frame neither received
 * nor given up: it advances over received frames, and over holes the
 * sender has given up on (the base it carries in every data frame) or that
 * waited longer than reseq_timeout in the resequencing mode.
 *
 * rx_buffer bounds what is held, resequencing and reassembly alike: a
 * frame that would need more is dropped unacknowledged (counted per
 * buffer), so the sender sends it again later; a fragment that completes
 * its packet is always taken (it frees what the packet held).
 *
 * Delivery: immediate (the default, non-sequencing as in Vaidya99 and
 * Wong/Leung: a frame goes up at once, out of order) or resequencing (held
 * until every earlier frame arrived or was given up).  Fragments are
 * reassembled (in any order) before the packet goes up; a packet one of
 * whose fragments was given up is dropped (counted).
 *
 * Feedback: per-frame acks (mode ack: every data frame answered at once
 * with its sequence number and low; with ack_delay, a frame that leaves
 * nothing missing is answered within ack_delay, by low alone, carried in
 * the next data frame going back or in an ack of its own when none left
 * in time: one ack then covers every such frame; a duplicate, or a frame
 * that leaves a hole, is still answered at once), or status frames (mode status: low
 * and a bitmap of what was received above it, every status_interval while
 * there is news or a hole, and at once when a new hole appears).
 */
#ifndef ARQ_RX_H
#define ARQ_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arq_frame.h"

#define ARQ_RX_COUNTERS(X)                                                                 \
	X(frames_received, "valid data frames received")                                  \
	X(frames_new, "data frames received for the first time")                          \
	X(duplicates, "duplicate data frames suppressed")                                 \
	X(out_of_window, "data frames beyond the receive window, dropped")                \
	X(buffer_full_drops, "data frames dropped: resequencing buffer bytes full (not acknowledged)") \
	X(reasm_buffer_full, "fragments dropped: reassembly would exceed rx_buffer (not acknowledged)") \
	X(packets_delivered, "IP packets delivered up")                                   \
	X(frames_out_of_order, "new frames that arrived after a later frame")             \
	X(holes_skipped, "frames never received that the window moved past (given up by the sender or reseq_timeout)") \
	X(resequenced, "frames held for resequencing before delivery")                    \
	X(reassembled, "packets reassembled from fragments")                              \
	X(reassembly_dropped, "incomplete packets dropped (a fragment given up, timeout or no slot)") \
	X(acks_sent, "link acks sent")                                                    \
	X(acks_deferred, "new frames whose ack waited (ack_delay): nothing missing, low says it all") \
	X(acks_carried, "waiting acks carried in a data frame going back instead of an ack frame") \
	X(status_sent, "status frames sent")                                              \
	X(inconsistent, "data frames whose sequence number lies a window or more past the base they carry: dropped") \
	X(out_of_step, "data frames whose base lies far from the window, not (yet) confirmed as a restart: dropped") \
	X(resyncs, "restarts (or outages) of the sender confirmed by several frames: window moved to its base")

struct arq_rx_counters {
#define ARQ_RX_FIELD(name, desc) uint64_t name;
	ARQ_RX_COUNTERS(ARQ_RX_FIELD)
#undef ARQ_RX_FIELD
	uint64_t reorder_depth_max;	/* frames: highest - seq of a late new frame */
	uint64_t reorder_depth_sum;	/* over frames_out_of_order: the mean */
	uint64_t reseq_held_max;	/* frames held at once at most */
};

enum arq_feedback { ARQ_FEEDBACK_ACK, ARQ_FEEDBACK_STATUS };

struct arq_rx_params {
	enum arq_feedback feedback;
	bool resequence;
	uint32_t window;		/* frames */
	uint64_t buffer_bytes;		/* resequencing and reassembly bytes held at most */
	uint64_t reseq_timeout_ns;
	uint64_t status_interval_ns;
	uint64_t ack_delay_ns;		/* feedback = ack: 0, every frame acknowledged at once */
	uint32_t status_max_bytes;	/* bitmap bytes per status frame at most */
	uint32_t reasm_slots;
	uint64_t reasm_timeout_ns;
};

struct arq_rx_held {
	uint8_t *data;		/* resequencing: the frame's payload */
	uint16_t len;
	uint16_t pkt_id;
	uint8_t frag_index, frag_count;
	uint64_t arrived_ns;
};

struct arq_reasm {
	bool used;
	uint16_t pkt_id;
	uint8_t count, got;
	uint32_t first_seq;	/* the packet's fragment 0 */
	uint64_t started_ns;
	uint8_t *frag[255];
	uint16_t flen[255];
};

typedef void (*arq_deliver_fn)(void *ctx, const uint8_t *pkt, size_t len);
typedef void (*arq_feedback_fn)(void *ctx, const struct arq_frame *f);

/* Frames out of step with the window that agree with each other before the window moves to them. */
#define ARQ_RESYNC_FRAMES 3

struct arq_rx {
	struct arq_rx_params p;
	uint32_t low;		/* lowest frame neither received nor given up */
	uint32_t high;		/* one past the highest frame received */
	bool started;		/* a frame was seen: low and high mean something */
	struct {
		uint32_t n;	/* out-of-step frames agreeing so far (0: none) */
		uint32_t base;	/* the newest base among them */
		uint32_t seq[ARQ_RESYNC_FRAMES];
	} resync;
	uint8_t *seen;		/* bit per frame in the window, indexed seq % window */
	struct arq_rx_held *held;	/* resequencing buffer, indexed seq % window */
	uint32_t nheld;
	struct arq_reasm *reasm;
	uint64_t bytes;		/* held + reassembly */
	uint8_t *scratch;	/* a reassembled packet; a status bitmap */
	bool status_news;	/* received something since the last status */
	uint64_t status_at;	/* next status frame due (0: none) */
	uint64_t ack_at;	/* a waiting ack is due (0: none waits) */
	uint32_t ack_seq;	/* the newest frame it acknowledges */
	arq_deliver_fn deliver;
	arq_feedback_fn feedback;
	void *ctx;
	struct arq_rx_counters cnt;
};

int arq_rx_init(struct arq_rx *rx, const struct arq_rx_params *p, arq_deliver_fn deliver, arq_feedback_fn feedback,
		void *ctx);
void arq_rx_free(struct arq_rx *rx);

/* A valid data frame (parsed by arq_frame_parse) arrived at now. */
void arq_rx_on_data(struct arq_rx *rx, const struct arq_frame *f, uint64_t now);

/*
 * An ack waits to be carried (ack_delay): true, and *cum the receiver's low
 * to put in the next data frame.  arq_rx_ack_carried once that frame went.
 */
bool arq_rx_ack_waiting(const struct arq_rx *rx, uint32_t *cum);
void arq_rx_ack_carried(struct arq_rx *rx);

/* The earliest timer (waiting ack, status, resequencing or reassembly timeout); 0: none. */
uint64_t arq_rx_deadline(const struct arq_rx *rx);

/* Run what is due at now. */
void arq_rx_on_timer(struct arq_rx *rx, uint64_t now);

#endif
