/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Counters.  The per-flow list is an X-macro so that the struct, the human
 * output and the JSON output are generated from one place; every flow
 * counter is also kept in total (flows that expired included).
 */
#ifndef PEPD_STATS_H
#define PEPD_STATS_H

#include <stdint.h>

#include "packet.h"

#define PEP_FLOW_COUNTERS(X)                                                                                    \
	X(data_packets, "data packets towards the wireless host")                                              \
	X(ack_packets, "packets from the wireless host")                                                       \
	X(cached_packets, "data packets copied into the cache")                                                \
	X(cache_full, "data packets passed uncached: flow or total cache bound reached")                       \
	X(syn_acks_cached, "SYN-ACKs answering the wireless host's SYN, cached for local retransmission")     \
	X(local_rtx, "segments retransmitted locally on dupacks or SACK holes")                               \
	X(local_rtx_timer, "segments retransmitted locally by the local timer")                               \
	X(copies_sent, "extra copies sent with local retransmissions (Snoop+)")                               \
	X(copies_withheld, "adaptive Snoop+ copies not sent because a queue stood on the hop")                \
	X(copies_withheld_sack, "Snoop+ copies not sent because the flow has SACK (copies_sack = false)")     \
	X(rtx_given_up, "segments left to the sender after max_local_rtx rounds")                              \
	X(repaired_one_round, "locally repaired segments acknowledged after one local round")                 \
	X(repaired_more_rounds, "locally repaired segments acknowledged after two or more local rounds")      \
	X(reorder_held, "segments whose repair reorder_window held back (a later transmission had arrived)")   \
	X(reorder_saved, "... of them, segments that then arrived without the repair: reordered, not lost")     \
	X(repairs_unneeded, "repaired segments acknowledged sooner after the repair than the hop's minimum "  \
			    "round trip: an earlier copy had arrived late (reordered), no evidence of loss")  \
	X(dupacks_dropped, "duplicate ACKs kept from the sender")                                              \
	X(dupacks_forwarded, "duplicate ACKs passed to the sender")                                            \
	X(sack_hidden, "ACKs forwarded with their SACK option blanked")                                        \
	X(sack_trimmed, "ACKs forwarded with SACK cut to the blocks around the hole left to the sender")       \
	X(acks_generated, "ACKs written by pepd on behalf of the wireless host")                               \
	X(data_dropped, "sender retransmissions of acknowledged data dropped")                                 \
	X(sender_rtx, "sender retransmissions seen")                                                           \
	X(timer_expiries, "local retransmission timer expiries")                                               \
	X(stale_acks_dropped, "ACKs older than the last one seen, dropped")                                    \
	X(window_clamped, "ACKs passed with their window cut to the window clamp")          \
	X(repair_window_updates, "duplicate ACKs of a hole repaired here, passed as window updates")            \
	X(partial_acks_held, "partial ACKs kept from a recovering sender while this box repairs the next hole") \
	X(sender_rtx_dropped, "sender retransmissions of segments being repaired here, dropped")                \
	X(dsacks_sent, "D-SACK ACKs telling the sender a retransmission dropped here was spurious")          \
	X(dsacks_kept, "the receiver's D-SACK blocks for duplicates of repairs made here, kept from the sender") \
	X(min_rtt_renewed, "expired minimum RTTs replaced by a higher sample of a segment sent to a hop clear of the flow's queue") \
	X(min_rtt_from_hop, "RTT samples after which a flow took its wireless host's lower minimum (share_hop_rtt)") \
	X(congestion_signals, "segments dropped on purpose as a congestion signal (aqm_target)")                  \
	X(queue_drops, "segments this box's own egress queue refused (congestion): left to the sender")             \
	X(queue_cap_refusals, "... of which the window clamp's own overshoot: capped and repaired here, no signal") \
	X(egress_drop_signals, "losses left to the sender because the egress qdisc dropped meanwhile (egress_drops)") \
	X(inject_errors, "sends that failed (the egress queue was full, or no route)")                         \
	X(flows_seen, "flows the filter decided whether to act on (pc; 1 per connection)")                     \
	X(flows_stepped_aside, "... of which it stepped aside for: passed untouched (pc: SACK, or only losses)") \
	X(flows_bypassed, "... of which the kernel stopped queueing: handed back once with bypass_mark")

struct pep_counters {
#define PEP_COUNTER_FIELD(name, desc) uint64_t name;
	PEP_FLOW_COUNTERS(PEP_COUNTER_FIELD)
#undef PEP_COUNTER_FIELD
};

/*
 * Counters of the queue, not of a flow: mostly what pepd refused to act on, and
 * why.  Reported with the totals (pepd_report_refusals).
 */
#define PEP_QUEUE_COUNTERS(X)                                                                                   \
	X(checksum_verified, "packets whose TCP checksum pepd verified itself (the kernel had not)")           \
	X(bad_checksum_down, "packets towards the wireless host with a wrong TCP or IPv4 header checksum: "   \
			     "passed unchanged, never cached, edited or used")                                \
	X(bad_checksum_up, "packets from the wireless host with a wrong checksum: passed unchanged, unused")    \
	X(not_adopted, "data packets of connections whose start pepd did not see (adopt_midstream off): "     \
		       "passed unchanged")                                                                    \
	X(before_handshake, "packets of flows whose handshake is not proven yet, passed without the filter")    \
	X(flows_evicted, "embryonic flows dropped to make room for a new one (the flow table was full)")       \
	X(flows_reset, "embryonic flows freed at a reset")                                                      \
	X(slices_refused, "cached segments not sent because they would need more than 128 slices")            \
	X(order_flushes, "verdicts sent ahead of their round so that data let through before one of pepd's own "  \
			 "sends enters the egress queue first (the order the loss inference assumes)")           \
	X(headers_unverifiable, "packets of which only the headers were copied (headers_only) and whose TCP "  \
				"checksum nobody had verified: passed unchanged, unused")

struct pep_stats {
	struct pep_counters total;	/* sum over every flow, live or expired */
#define PEP_QUEUE_FIELD(name, desc) uint64_t name;
	PEP_QUEUE_COUNTERS(PEP_QUEUE_FIELD)
#undef PEP_QUEUE_FIELD
	uint64_t packets;		/* packets received from the queue */
	uint64_t parse[PKT__RESULT_COUNT];	/* per parser result */
	uint64_t truncated;		/* copied short by the kernel: passed unchanged */
	uint64_t flows_created;
	uint64_t flows_expired;
	uint64_t flows_untracked;	/* no room in the flow table: passed through */
	uint64_t verdicts_mangled;	/* verdicts that carried a rewritten packet */
	uint64_t ipv6_packets;
	uint64_t gso_packets;		/* larger than the MSS (GSO/GRO) */
};

static inline uint64_t stats_malformed(const struct pep_stats *s)
{
	uint64_t n = 0;
	int r;

	for (r = PKT_FIRST_ERROR; r < PKT__RESULT_COUNT; r++)
		n += s->parse[r];
	return n;
}

static inline uint64_t stats_unhandled(const struct pep_stats *s)
{
	uint64_t n = s->truncated;
	int r;

	for (r = PKT_OK + 1; r < PKT_FIRST_ERROR; r++)
		n += s->parse[r];
	return n;
}

#define COUNT(ctx, flow, name, n)                    \
	do {                                         \
		(flow)->cnt.name += (n);             \
		(ctx)->total->name += (n);           \
	} while (0)

#endif
