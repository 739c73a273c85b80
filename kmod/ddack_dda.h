/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tcp_ddack's per-flow state machine, pure: a flow's state and one
 * outgoing segment (or a timer expiry) in, the state changed and a
 * decision out; no locks, skbs, timers or clocks.  ddack_flow.c carries
 * out the decisions; tests/dda_harness.c runs the same ddack_dda.c in
 * userspace (tests/unit/test_ddack_dda.py, a table of every state and
 * event).
 *
 * A duplicate ACK is a pure ACK whose ack number and raw window equal
 * those of the flow's previous ACK (RFC 5681's definition, the one a
 * Linux sender applies).  Per loss episode (a run of dupacks):
 *
 *   flow created by  +------+  a new cumulative ACK, from any state
 *   its first ACK -->| IDLE |<------------------------------------+
 *                    +------+  below: held ACKs discarded, fill    |
 *                       | dupack #1   time -> adaptive d            |
 *                       v                                           |
 *                 +-----------+  dupacks #1..threshold, and any     |
 *                 | IMMEDIATE |  while d = 0 or there is no room    |
 *                 +-----------+  to hold: sent at once (SACK        |
 *                       |        stripped in sack_mode 1 and 2)     |
 *   dupack #threshold+1 v  (held, timer armed for d)                |
 *                 +---------+  more dupacks: held too (the oldest   |
 *                 | HOLDING |  freed past max_held)                 |
 *                 +---------+                                       |
 *   d after the first   v  hold (at most DDACK_HOLD_MAX_US)         |
 *                 +----------+  held ACKs sent, one per pace_us,    |
 *                 | RELEASED |  all once DDACK_HOLD_MAX_US after ---+
 *                 +----------+  the first hold; later dupacks of
 *                               the episode at once
 *
 * From every state: FIN or RST from the socket frees what is held and
 * leads to CLOSED (nothing held any more, every segment passes); the same
 * 4-tuple on a new socket frees what is held and starts over at IDLE,
 * its segment the new reference.
 *
 * Stepping aside (ASIDE: every segment passes as it is, nothing held or
 * stripped, until FIN, RST or a new socket) for flows that holding cannot
 * help, decided from what the receiver sees:
 *  - at the flow's start (ddack_dda_start()), a connection that negotiated
 *    SACK while sack_mode = aside: a SACK sender with RACK (Linux's
 *    default) marks a hole lost by time from the first SACK-bearing dupack,
 *    so holding the third only delays its recovery;
 *  - at the end of a loss episode, a flow whose held episodes that were
 *    released (the hole outlived d) outnumber those filled within d by
 *    aside_unfilled: nothing on the path repairs most of its losses
 *    locally, and every hold costs the sender d.
 *
 * No ACK is held longer than DDACK_HOLD_MAX_US, whatever d and pace_us
 * say: d is at most that (the knobs' ranges, and a clamp here), and the
 * paced release sends everything left once it is reached.  A dupack
 * older than that is stale: the sender has long timed out (Linux's
 * initial RTO is 1 s, the paper's largest d 200 ms).  Times are
 * nanoseconds of one monotonic clock.
 */
#ifndef _DDACK_DDA_H
#define _DDACK_DDA_H

#include "airtcp_wire.h"

/* The longest any ACK is held; also the largest d the knobs take. */
#define DDACK_HOLD_MAX_US	2000000
#define DDACK_NS_PER_US		1000

/* How dupacks of senders with SACK are treated (net.tcp_ddack.sack_mode). */
enum ddack_sack_mode {
	DDACK_SACK_KEEP = 0,	/* the paper: only the count matters */
	DDACK_SACK_STRIP = 1,	/* early dupacks leave without SACK blocks */
	DDACK_SACK_HOLD = 2,	/* SACK-bearing dupacks are held from the 1st */
	DDACK_SACK_ASIDE = 3,	/* flows that negotiated SACK are not touched */
};

/* Where a flow is (the diagram above). */
enum ddack_state {
	DDACK_IDLE,		/* no dupack since the last new cumulative ACK */
	DDACK_IMMEDIATE,	/* dupacks of an episode sent at once */
	DDACK_HOLDING,		/* dupacks held until release_at */
	DDACK_RELEASED,		/* held ones leaving; later dupacks at once */
	DDACK_CLOSED,		/* FIN or RST sent: nothing is held any more */
	DDACK_ASIDE,		/* stepped aside: every segment passes untouched */
	DDACK_NR_STATES
};

/* One flow's place in its loss episode. */
struct ddack_dda {
	u8 state;		/* enum ddack_state */
	u16 last_win;		/* raw 16-bit field, as the sender sees it */
	u32 last_ack;
	u32 dupcnt;		/* dupacks in the current episode */
	u16 released_eps;	/* held episodes whose hole outlived d */
	u16 filled_eps;		/* held episodes filled within d */
	s64 episode_start;	/* its first dupack */
	s64 hold_start;		/* its first held dupack */
	s64 release_at;		/* the next held ACK is due then */
	s64 released_at;	/* the episode's first release */
};

/* The namespace's knobs, as read for one segment. */
struct ddack_params {
	u32 delay_us;		/* d in force (fixed or adaptive); 0: no holding */
	u32 threshold;
	u32 max_held;
	u32 aside_unfilled;	/* released - filled episodes to step aside; 0: never */
	u8 sack_mode;		/* enum ddack_sack_mode */
	bool adaptive;
};

/* One outgoing segment of the flow's socket. */
struct ddack_seg {
	s64 now;
	u32 ack;
	u16 win;
	bool pure_ack;		/* ACK, no SYN/FIN/RST, no payload */
	bool ends_flow;		/* FIN or RST */
	bool has_sack;
	bool sack_hole;		/* a SACK block above the ACK: a hole is open */
	bool new_socket;	/* its 4-tuple was another socket's */
	bool sack_ok;		/* the connection negotiated SACK */
	bool may_hold;		/* the namespace has room for one more held ACK */
	u32 held;		/* ACKs the flow holds now */
	u32 rcv_rtt_us;		/* the socket's receive-side RTT estimate */
};

/* What to do with the segment ... */
enum ddack_verdict {
	DDACK_PASS,		/* send it now */
	DDACK_HOLD,		/* queue it on the flow */
	DDACK_DROP,		/* the flow's, never the machine's: the route
				 * could not be kept; TCP sends another ACK
				 */
};

/* ... and with what the flow holds already. */
enum ddack_drop {
	DDACK_KEEP_HELD,
	DDACK_DISCARD_HELD,	/* the hole filled: never to be sent */
	DDACK_FLUSH_HELD,	/* the flow ended or was reused: freed */
};

/* Events the decision counts (DDACK_STAT_* of the same name). */
#define DDACK_EV_DUPACK		BIT(0)
#define DDACK_EV_EPISODE	BIT(1)	/* a new loss episode */
#define DDACK_EV_IMMEDIATE	BIT(2)	/* a dupack sent at once */
#define DDACK_EV_FILLED		BIT(3)	/* held ACKs, hole filled in time */
#define DDACK_EV_ADAPT_SAMPLE	BIT(4)	/* fill_us is a sample for d */
#define DDACK_EV_ADAPT_IGNORED	BIT(5)	/* the fill was the sender's */
#define DDACK_EV_LIMITED	BIT(6)	/* would be held: no room (at once) */
#define DDACK_EV_ASIDE_SACK	BIT(7)	/* stepped aside: SACK negotiated */
#define DDACK_EV_ASIDE_UNFILLED	BIT(8)	/* stepped aside: holes outlive d */

struct ddack_decision {
	u8 verdict;		/* enum ddack_verdict */
	u8 drop;		/* enum ddack_drop */
	bool strip;		/* PASS: without the SACK blocks that show the hole */
	bool evict;		/* HOLD: free the oldest held ACK (max_held) */
	bool arm;		/* start the timer at release_at */
	bool cancel;		/* stop the timer */
	u32 events;		/* DDACK_EV_* */
	u32 fill_us;		/* with DDACK_EV_ADAPT_SAMPLE */
};

/* What the flow's timer does when it fires. */
struct ddack_release {
	u32 send;		/* held ACKs to send now, oldest first */
	bool rearm;		/* start the timer again at release_at */
	bool first;		/* the episode's first release */
	bool capped;		/* a paced release cut short: DDACK_HOLD_MAX_US */
};

u32 ddack_dda_start(struct ddack_dda *dda, const struct ddack_params *params,
		    const struct ddack_seg *seg);
struct ddack_decision ddack_dda_segment(struct ddack_dda *dda,
					const struct ddack_params *params,
					const struct ddack_seg *seg);
struct ddack_release ddack_dda_timer(struct ddack_dda *dda, s64 now, u32 held,
				     u32 pace_us);
bool ddack_dda_expired(const struct ddack_dda *dda, s64 now, s64 last_seen,
		       s64 timeout_ns, u32 held);

#endif /* _DDACK_DDA_H */
