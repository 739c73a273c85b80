/* SPDX-License-Identifier: GPL-2.0-only */
/* Per-flow state of each filter; kept in a union inside struct flow. */
#ifndef PEPD_FILTER_STATE_H
#define PEPD_FILTER_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "packet.h"

#define SNOOP_RATE_SAMPLES 8
#define SNOOP_TS_RING 8
#define SNOOP_REPAIRED_RING 8

/*
 * Adaptive Snoop+: a two-state (Gilbert) estimate of the wireless hop from
 * the fate of first transmissions, in sequence order: p is the loss
 * probability, p_bb the probability that a transmission right after a lost
 * one is lost too (burstiness).  Both are exponentially weighted over about
 * adaptive_window samples.
 */
struct loss_estimator {
	double p;
	double p_bb;
	uint64_t samples;
	uint64_t samples_after_loss;
	bool prev_lost;
	uint8_t copies;		/* the current choice of extra copies */
};

struct snoop_state {
	bool ack_seen;
	bool data_seen;
	uint16_t last_win;	/* raw window of the last ACK from the wireless host */
	uint32_t last_ack;	/* highest cumulative ACK from the wireless host */
	uint32_t snd_max;	/* one past the highest sequence number from the fixed host */
	uint32_t dupacks;	/* counted dupacks for last_ack (copy-caused ones excluded) */
	uint32_t dup_discount;	/* dupacks for last_ack still expected from our extra copies */
	uint64_t tx_counter;	/* ordinal of the latest transmission towards the wireless host */
	uint64_t delivered;	/* highest ordinal known (or inferred) to have arrived */
	uint64_t delivered_ns;	/* ... when it last grew */
	uint64_t delivered_rtt_ns;	/* ... the round trip of the transmission it credits (reorder_window) */
	uint64_t reorder_at;	/* when a segment held back by reorder_window is due (0: none) */
	uint64_t srtt_ns;
	uint64_t rttvar_ns;
	bool rtt_valid;
	uint64_t handshake_rtt_ns;	/* the cached SYN-ACK's round trip: times the local timer until rtt_valid */
	uint32_t backoff;
	uint64_t last_gen_ack_ns;
	/* congestion signalling at this box's queue (see filter_snoop.c) */
	uint64_t last_rtt_ns;	/* latest RTT sample of the hop, queueing included */
	uint64_t min_rtt_ns;	/* its minimum: the hop without a queue */
	uint64_t min_rtt_stamp;
	bool clear_valid;	/* [clear_start, clear_end) left with at most two of the flow's segments */
	uint32_t clear_start, clear_end;	/* ... on the hop: their round trips are the hop's without its queue */
	uint64_t above_since;	/* queueing delay above aqm_target since (0: below) */
	uint64_t signal_ns;	/* last congestion signal */
	uint32_t signal_seq;	/* the segment dropped as the signal */
	bool signal_pending;	/* ... not yet acknowledged: the sender has not recovered it */
	bool signal_dropped;	/* the signal was a segment dropped here (so never sent on) */
	bool sender_recovering;	/* the sender retransmitted a hole left to it ... */
	uint32_t sender_recover;	/* ... and is in recovery until this is acknowledged */
	/* pacing the sender to the hop (window_clamp) */
	uint64_t delivered_bytes;	/* received by the wireless host, in all: each byte once, when reported */
	uint32_t dupack_credit;		/* ... of which credited from dupacks (without SACK) since the last new ACK */
	uint64_t rate_start_ns, rate_start_bytes;
	uint64_t rate[SNOOP_RATE_SAMPLES];	/* delivery rate samples, bytes/s */
	uint8_t rate_n, rate_i;
	uint32_t ts_fwd[SNOOP_TS_RING];	/* TSvals of ACKs passed to the fixed host ... */
	uint64_t ts_fwd_ns[SNOOP_TS_RING];	/* ... and when */
	uint8_t ts_i;
	uint64_t wired_rtt_ns;		/* min time from passing an ACK to the data echoing it */
	uint64_t wired_rtt_stamp;
	bool right_edge_valid;
	uint32_t right_edge;		/* of the window last passed to the fixed host */
	uint64_t queue_cap;		/* bytes the egress queue held when it last refused one (0: none) */
	uint64_t queue_cap_ns;		/* ... and when */
	uint64_t queue_cap_since;	/* the first refusal of the burst that set it */
	/* segments repaired here and acknowledged since: a sender retransmission of one is spurious */
	struct sack_block repaired[SNOOP_REPAIRED_RING];
	uint8_t repaired_i;
	struct loss_estimator est;
};

struct pc_state {
	bool ack_seen;
	bool data_seen;
	uint16_t last_win;
	uint32_t last_ack_sent;	/* lastAckSent: the last ACK passed to the fixed host */
	uint32_t dupacks;	/* duplicates of last_ack_sent received from the wireless host */
	uint32_t snd_max;
	uint32_t rtx_seq;	/* segment whose retransmissions are being counted */
	uint32_t rtx_count;
	bool rtx_valid;
	/* stepping aside (sack_flows, aside_losses) */
	bool seen;		/* counted in flows_seen */
	bool aside;		/* stepped aside: every packet passes untouched */
	bool hole_rtx;		/* the sender retransmitted the hole of the current run */
	uint32_t reorder_runs;	/* runs of 3..dupack_thresh-1 dupacks ended with no retransmission */
	uint32_t loss_runs;	/* runs that reached dupack_thresh, or ended by a retransmission */
};

#endif
