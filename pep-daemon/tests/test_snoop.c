// SPDX-License-Identifier: GPL-2.0-only
/*
 * Snoop: tables of packet sequences and the actions they must produce.
 * Defaults unless a case says otherwise: rtx_thresh 1 (the harness's), rto_initial 200 ms,
 * rto_min 20 ms, max_local_rtx 4, hide_sack on.  1000-byte segments; the
 * wireless host's window is 1000 throughout (so equal ACKs are dupacks).
 */
#include "filter_snoop.h"
#include "tcase.h"

/* Classic sender (no SACK): one wireless loss, repaired on the first dupack. */
static const struct step single_loss[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 1000, FWD, ""),
	A(42, 1000, DROP, "rtx 1000"),	/* 2000 arrived: the hole is 1000 */
	A(43, 1000, DROP, ""),		/* 3000: expected, the rtx is still on its way */
	A(44, 1000, DROP, ""),
	A(85, 5000, FWD, ""),		/* the rtx arrived: everything acknowledged */
	END_,
};

/* drop_dupacks = false: the same local repair, every dupack goes on to the sender */
static const struct step single_loss_kept[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 1000, FWD, ""),
	A(42, 1000, FWD, "rtx 1000"),
	A(43, 1000, FWD, ""),
	A(44, 1000, FWD, ""),
	A(85, 5000, FWD, ""),
	END_,
};

/*
 * The local retransmission is lost too.  Without SACK a dupack does not
 * say which segment arrived: the timer repairs it.  With SACK the blocks
 * show 7000 (sent after the rtx) arrived: repaired at once.
 */
static const struct step lost_rtx[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	A(40, 1000, FWD, ""),
	A(42, 1000, DROP, "rtx 1000"),
	A(43, 1000, DROP, ""), A(44, 1000, DROP, ""), A(45, 1000, DROP, ""), A(46, 1000, DROP, ""),
	D(47, 7000),			/* sent after the rtx */
	A(90, 1000, DROP, ""),		/* 7000 arrived, 1000 did not */
	TK(162, "rtx 1000"),		/* 42 + rto 120 */
	A(210, 8000, FWD, ""),
	END_,
};

static const struct step lost_rtx_sack[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "rtx 1000", 1, { 2000, 3000 }),
	AS(46, 1000, DROP, false, "", 1, { 2000, 7000 }),
	D(47, 7000),			/* sent after the rtx */
	AS(90, 1000, DROP, false, "rtx 1000", 1, { 2000, 8000 }),
	A(130, 8000, FWD, ""),
	END_,
};

/* No SACK, two holes: the second is found at the partial ACK that ends the first. */
static const struct step two_holes_reno[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000),
	A(40, 1000, FWD, ""),
	A(42, 1000, DROP, "rtx 1000"),
	A(44, 1000, DROP, ""),		/* 4000 (3000 is lost too) */
	A(45, 1000, DROP, ""),
	A(85, 3000, FWD, "rtx 3000"),	/* the rtx of 1000 arrived; 3000 was sent before it: lost */
	A(125, 6000, FWD, ""),
	END_,
};

/* SACK: the hole is found from the blocks, and the blocks never reach the sender. */
static const struct step sack_single[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "rtx 1000", 1, { 2000, 3000 }),
	AS(43, 1000, DROP, false, "", 1, { 2000, 4000 }),
	AS(44, 1000, DROP, false, "", 1, { 2000, 5000 }),
	A(85, 5000, FWD, ""),
	END_,
};

/* The same with the sender's copy of 1000 racing the repair: dropped, and with the blocks hidden, no D-SACK for it. */
static const struct step sack_single_sender_rtx[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "rtx 1000", 1, { 2000, 3000 }),
	AS(43, 1000, DROP, false, "", 1, { 2000, 4000 }),
	AS(44, 1000, DROP, false, "", 1, { 2000, 5000 }),
	D_(60, 1000, DROP, ""),
	A(85, 5000, FWD, ""),
	END_,
};

/*
 * A GSO super-packet (4 x 988 bytes: the receiver's MSS of 1000 less the
 * timestamp option) is cached as four slices.  The receiver lost the
 * second: only that slice is repaired, and the ACK that ends the repair
 * frees the rest of the copy.
 */
static const struct step gso_slice_lost[] = {
	DL(0, 0, 3952), D(1, 3952), D(2, 4952),
	A(40, 988, FWD, ""),
	AS(42, 988, DROP, false, "rtx 988", 1, { 1976, 3952 }),
	AS(43, 988, DROP, false, "", 1, { 1976, 4952 }),
	AS(44, 988, DROP, false, "", 1, { 1976, 5952 }),
	A(85, 5952, FWD, ""),
	END_,
};

/* Two super-packets, each slice acknowledged in turn, one ACK across both: nothing to repair. */
static const struct step gso_clean[] = {
	DL(0, 0, 3952), DL(1, 3952, 3952),
	A(40, 1976, FWD, ""), A(41, 5928, FWD, ""), A(42, 7904, FWD, ""),
	END_,
};

/* drop_dupacks = false with SACK: repaired from the blocks; dupacks go on (hide_sack still blanks them) */
static const struct step sack_single_kept[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, FWD, true, "rtx 1000", 1, { 2000, 3000 }),
	AS(43, 1000, FWD, true, "", 1, { 2000, 4000 }),
	AS(44, 1000, FWD, true, "", 1, { 2000, 5000 }),
	A(85, 5000, FWD, ""),
	END_,
};

/* The defaults (drop_dupacks auto, hide_sack off) with SACK: repaired here, every dupack shown whole */
static const struct step sack_single_shown[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, FWD, false, "rtx 1000", 1, { 2000, 3000 }),
	AS(43, 1000, FWD, false, "", 1, { 2000, 4000 }),
	AS(44, 1000, FWD, false, "", 1, { 2000, 5000 }),
	A(85, 5000, FWD, ""),
	END_,
};

/* SACK, two holes: both retransmitted as the blocks reveal them; a partial ACK goes on with its blocks hidden. */
static const struct step sack_two_holes[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "rtx 1000", 1, { 2000, 3000 }),
	AS(44, 1000, DROP, false, "rtx 3000", 2, { 4000, 5000 }, { 2000, 3000 }),
	AS(45, 1000, DROP, false, "", 2, { 4000, 6000 }, { 2000, 3000 }),
	AS(85, 3000, FWD, true, "", 1, { 4000, 6000 }),
	A(87, 6000, FWD, ""),
	END_,
};

/*
 * rtx_priority: the repair of 1000 overtakes 3000-5000 in the egress
 * queue, so the ACK it draws is no evidence that they were lost.
 */
static const struct step priority_overtakes[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "rtx 1000", 1, { 2000, 3000 }),
	A(44, 3000, FWD, ""),		/* the repair arrived, 3000-5000 still queued */
	A(46, 4000, FWD, ""),
	A(47, 6000, FWD, ""),
	END_,
};

/*
 * Reordered on the hop: the blocks show 1000 missing, it is repaired, and
 * 3 ms later (less than the hop's 40 ms minimum round trip) the original
 * arrives.  That ACK cannot be the repair's, so it credits nothing: the
 * data sent before the repair, 3000-6000, are on their way, not lost.
 * (Credited from the repair, it made them all look lost at once.)
 */
static const struct step late_original[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "rtx 1000", 1, { 2000, 3000 }),
	A(45, 3000, FWD, ""),
	A(46, 4000, FWD, ""),
	A(47, 7000, FWD, ""),
	END_,
};

/*
 * The repair of 1000 is refused by the egress queue (a congestion signal:
 * the hole is the sender's), and the original turns up late.  A round that
 * never left takes no place in the order: the original's ACK credits
 * nothing, and 3000-6000 are not taken for lost.
 */
static const struct step late_original_refused[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	A(40, 1000, FWD, ""),
	ASQ(42, 1000, DROP, false, "rtx 1000", 1, { 2000, 3000 }),
	A(90, 3000, FWD, ""),
	A(91, 7000, FWD, ""),
	END_,
};

/*
 * reorder_window = 25 % of the hop's 40 ms: 2000 (sent at 2 ms) arrived
 * after 40 ms, so 1000 (sent at 1) is due by 51 ms.  At 42 it may only be
 * reordered: held.  Here it turns up at 45: no repair.
 */
static const struct step reorder_held[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "", 1, { 2000, 3000 }),
	A(45, 3000, FWD, ""),
	A(47, 5000, FWD, ""),
	END_,
};

/* The same hole lost: repaired when the window ends, by the timer it set. */
static const struct step reorder_lost[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "", 1, { 2000, 3000 }),
	AS(44, 1000, DROP, false, "", 1, { 2000, 5000 }),
	TK(51, "rtx 1000"),
	A(92, 5000, FWD, ""),
	END_,
};

/* A hole this box never saw (lost on the wired side): dupacks and SACK go to the sender. */
static const struct step uncached_hole[] = {
	D(0, 0), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, FWD, false, "", 1, { 2000, 3000 }),
	AS(43, 1000, FWD, false, "", 1, { 2000, 4000 }),
	D(80, 1000),			/* the sender's fast retransmit: cached, forwarded */
	A(120, 4000, FWD, ""),
	END_,
};

/* The sender retransmits data the wireless host has: drop, answer with its ACK (rate-limited). */
static const struct step acked_rtx[] = {
	D(0, 0), D(1, 1000),
	A(40, 2000, FWD, ""),
	D_(50, 0, DROP, "ack 2000"),
	D_(55, 1000, DROP, ""),		/* within rto_min of the last generated ACK */
	D_(80, 0, DROP, "ack 2000"),
	END_,
};

/* A lost tail: only the timer can find it; backoff doubles, rto_max caps, max_local_rtx gives up. */
static const struct step tail_timer[] = {
	D(0, 0), D(1, 1000),
	A(40, 1000, FWD, ""),		/* srtt 40 ms, rttvar 20 ms: rto 120 ms */
	TK(161, "rtx 1000"),		/* from 40: 1000 may have waited behind 0 until then */
	TK(401, "rtx 1000"),		/* 240 ms after */
	TK(881, "rtx 1000"),		/* 480 ms */
	TK(1841, "rtx 1000"),		/* 960 ms */
	TK(2841, ""),			/* rto_max 1 s; four rounds done: left to the sender */
	A(2850, 1000, FWD, ""),		/* so its dupacks pass */
	END_,
};

/*
 * The ACK that ends a repair also acknowledges the segments that waited
 * behind the hole: their age (201 ms for 4000) is the repair's, not the
 * hop's round trip.  The sample is the segment sent last (here the
 * repair itself: none, Karn), so 5000 is no congestion signal and the
 * local timeout stays at 100 ms: the lost tail is repaired 100 ms after
 * 5000, sent just before it, arrived (250 + 100).
 * Taking 4000's age as a sample, the hop's delay seemed to stand 161 ms
 * above its minimum (5000 dropped as a congestion signal) and the timeout
 * grew to 281 ms.
 */
static const struct step repair_is_no_sample[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 1000, FWD, ""),		/* srtt 40 ms, rttvar 20 ms: rto 120 ms */
	A(42, 1000, DROP, "rtx 1000"),
	A(43, 1000, DROP, ""), A(44, 1000, DROP, ""),
	TK(162, "rtx 1000"),		/* the first repair was lost too */
	A(205, 5000, FWD, ""),		/* repaired: no sample */
	D(210, 5000), D(211, 6000),
	A(250, 6000, FWD, ""),		/* 40 ms: srtt 40, rttvar 15, rto 100 */
	TK(351, "rtx 6000"),		/* 6000 was lost: 100 ms after 5000, sent before it, arrived */
	A(392, 7000, FWD, ""),
	END_,
};

/*
 * A timer round is no proof the original was lost (it may be late behind
 * a queue): when the ACK for it comes, it proves only the original arrived,
 * so the segments queued behind that original are not declared lost.
 */
static const struct step timer_then_late_original[] = {
	D(0, 0), D(1, 1000), D(60, 2000), D(61, 3000),
	A(40, 1000, FWD, ""),
	TK(161, "rtx 1000"),		/* 40 + rto 120 */
	A(165, 2000, FWD, ""),		/* the original was only late; 2000 and 3000 are still queued */
	A(166, 3000, FWD, ""),
	A(167, 4000, FWD, ""),
	END_,
};

/*
 * A standing queue: the hop's RTT stands 60 ms above its 40 ms minimum
 * (aqm_target 40 ms).  The first time (slow start overshooting) the next
 * new segment is dropped at once, uncached: its hole is the sender's.  No
 * second signal until the sender has recovered it; after that only when
 * the queue has stood above target for aqm_interval (100 ms).
 */
static const struct step congestion_signal[] = {
	D(0, 0),
	A(40, 1000, FWD, ""),		/* RTT 40 ms: the minimum */
	D(41, 1000),
	A(141, 2000, FWD, ""),		/* 100 ms: a queue */
	D_(142, 2000, DROP, ""),	/* the first signal: at once */
	D(143, 3000),			/* one at a time */
	A(244, 2000, FWD, ""),		/* the hole is not cached: the sender sees the dupack */
	D(290, 2000),			/* its fast retransmit */
	A(390, 4000, FWD, ""),		/* recovered: RTT 247 ms, still a queue */
	D(391, 4000),			/* above target since now */
	D_(492, 5000, DROP, ""),	/* for 101 ms: the second signal */
	END_,
};

/*
 * The egress queue refuses 2000 and 3000 (a burst into a full queue): the
 * first is the episode's signal, left to the sender; 3000 is repaired here.
 * The sender is told about 2000 only: the SACK option it gets covers 3000
 * (held here) and the received 4000-6000.
 */
static const struct step queue_episode[] = {
	D(0, 0), D(1, 1000), DQ(2, 2000), DQ(3, 3000), D(4, 4000), D(5, 5000),
	A(40, 2000, FWD, ""),
	AS(42, 2000, FWD, false, "rtx 3000, sack 3000-5000", 1, { 4000, 5000 }),
	AS(43, 2000, FWD, false, "sack 3000-6000", 1, { 4000, 6000 }),
	D(80, 2000),			/* the sender's fast retransmit of 2000 only */
	AS(90, 2000, FWD, false, "sack 3000-6000", 2, { 3000, 4000 }, { 4000, 6000 }),
	A(125, 6000, FWD, ""),
	END_,
};

/* The sender retransmits a segment whose local retransmission is on its way: that copy is dropped. */
static const struct step sender_rtx_redundant[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	A(42, 1000, DROP, "rtx 1000"),
	D_(60, 1000, DROP, ""),
	A(85, 4000, FWD, ""),
	END_,
};

/*
 * dsack_dropped_rtx, every ACK shown to the sender: its retransmission of
 * 1000, racing ours, is dropped and reported as a duplicate once ours is
 * acknowledged; its late copy of 5000 (repaired and acknowledged before
 * it came) is reported at once, a second copy of it no longer.  The
 * receiver's D-SACK for a duplicate of a repair made here is not the
 * sender's business (it never sent that copy) and is kept from it.
 */
static const struct step dsack_dropped[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, FWD, false, "rtx 1000", 1, { 2000, 3000 }),
	AS(43, 1000, FWD, false, "", 1, { 2000, 5000 }),
	AS(44, 1000, FWD, false, "rtx 5000", 2, { 6000, 7000 }, { 2000, 5000 }),
	D_(60, 1000, DROP, ""),		/* the sender's copy: ours is on its way */
	AS(85, 5000, FWD, false, "dsack 5000 1000-2000", 1, { 6000, 7000 }),
	A(88, 7000, FWD, ""),		/* 5000 repaired */
	AS(90, 7000, FWD, true, "", 1, { 5000, 6000 }),	/* the receiver's D-SACK for a copy of ours: kept */
	AS(91, 7000, FWD, false, "", 1, { 3000, 4000 }),	/* one for data never repaired here: passed */
	D_(140, 5000, DROP, "dsack 7000 5000-6000"),	/* a late copy of a repair: spurious too */
	D_(141, 5000, DROP, "ack 7000"),	/* again: one report per repair, then the plain answer */
	D_(150, 3000, DROP, ""),	/* never repaired here: the plain answer, within rto_min of the last */
	END_,
};

/* The sender's copy dropped, then a later one of its own passed on: the receiver reports that one, pepd nothing. */
static const struct step dsack_then_forwarded[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, FWD, false, "rtx 1000", 1, { 2000, 4000 }),
	D_(60, 1000, DROP, ""),
	TK(162, ""),			/* max_local_rtx = 1: the hole is given up to the sender */
	D(200, 1000),			/* whose next copy goes on */
	A(240, 4000, FWD, ""),
	END_,
};

/* The same without dsack_dropped_rtx: the copies are dropped in silence (the late one answered with an ACK). */
static const struct step dsack_off[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, FWD, false, "rtx 1000", 1, { 2000, 3000 }),
	AS(43, 1000, FWD, false, "", 1, { 2000, 5000 }),
	AS(44, 1000, FWD, false, "rtx 5000", 2, { 6000, 7000 }, { 2000, 5000 }),
	D_(60, 1000, DROP, ""),
	AS(85, 5000, FWD, false, "", 1, { 6000, 7000 }),
	A(88, 7000, FWD, ""),
	D_(140, 5000, DROP, "ack 7000"),
	END_,
};

/*
 * A NewReno sender recovering the hole left to it (2000, refused by the
 * egress queue) must not see the partial ACK for 4000, which this box is
 * repairing: it would retransmit 4000 too.  4000 was sent before the
 * sender's retransmission of 2000, which arrived: so it is lost (FIFO).
 */
static const struct step partial_ack_held[] = {
	D(0, 0), D(1, 1000), DQ(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000),
	A(40, 2000, FWD, ""),
	A(42, 2000, FWD, ""),		/* 3000 arrived: the hole is the sender's */
	A(44, 2000, FWD, ""),		/* 5000 (4000 lost on the hop) */
	D(80, 2000),			/* its fast retransmit: in recovery until 6000 */
	A(118, 4000, DROP, "rtx 4000"),	/* partial: held, repaired here */
	A(160, 6000, FWD, ""),
	END_,
};

/*
 * The default rtx_thresh 2: one odd duplicate ACK (a Linux receiver sends
 * them without any arrival) is not enough; two are.  At the partial ACK,
 * dupacks beyond the segments it covers mean a second hole.
 */
static const struct step thresh_two[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	A(40, 1000, FWD, ""),
	A(41, 1000, DROP, ""),		/* 2000 arrived */
	A(42, 1000, DROP, "rtx 1000"),	/* 4000 (3000 lost too) */
	A(44, 1000, DROP, ""),		/* 5000 */
	A(45, 1000, DROP, ""),		/* 6000 */
	A(85, 3000, FWD, "rtx 3000"),	/* 1000 and 2000 acked: 4 dupacks, 1 explained: 3000 is missing */
	A(125, 7000, FWD, ""),
	END_,
};

/*
 * The window clamp.  Once the hop's delivery rate (two samples, each over
 * at least two hop RTTs; the larger 4000 bytes in 160 ms = 25 kB/s), its
 * minimum RTT (40 ms) and the wired RTT (60 ms: from the ACK passed at 40
 * to the data echoing it at 100) are known, ACKs to the sender carry at
 * most 2 x rate x (60 + 40 ms) = 5000 bytes, and the right edge never
 * moves back: at 300 the receiver's 13000 becomes 12000 (the edge stays at
 * 18000), at 305 11000.
 */
static const struct step clamp[] = {
	D(0, 0),
	AW(40, 1000, 13000, FWD, ""),
	D(100, 1000),			/* echoes the ACK at 40 */
	D(101, 2000), D(102, 3000), D(103, 4000), D(104, 5000),
	AW(140, 2000, 13000, FWD, ""),	/* rate sample 1 (span >= 2 hop RTTs): 1000 bytes in 100 ms */
	AW(150, 3000, 13000, FWD, ""),
	AW(160, 4000, 13000, FWD, ""),
	AW(190, 5000, 13000, FWD, ""),	/* right edge 18000 */
	D(200, 6000), D(201, 7000),
	AW(300, 6000, 13000, FWD, "win 12000"),	/* sample 2: 4000 bytes in 160 ms = 25 kB/s */
	AW(305, 7000, 13000, FWD, "win 11000"),	/* the edge stays at 18000 */
	AW(310, 8000, 9000, FWD, ""),	/* the receiver's own window is no larger than the edge allows */
	END_,
};

/*
 * The first steps of the clamp table above (its rate sample 1, a 40 ms
 * hop, the right edge at 18000), shared by the tests below; each sets the
 * wired RTT with the data that follow.
 */
#define CLAMP_PATH_STEPS						\
	D(0, 0),							\
	AW(40, 1000, 13000, FWD, ""),					\
	D(100, 1000),							\
	D(101, 2000), D(102, 3000), D(103, 4000), D(104, 5000),	\
	AW(140, 2000, 13000, FWD, ""),					\
	AW(150, 3000, 13000, FWD, ""),					\
	AW(160, 4000, 13000, FWD, ""),					\
	AW(190, 5000, 13000, FWD, "")

/*
 * A hole repaired here while the clamp holds the sender's window: its
 * dupacks go on as window updates once they open the window past the right
 * edge, so that the sender sends one more segment per arrival instead of
 * falling silent until the repair arrives.  The clamp counts what is on
 * the path: here its floor of four segments, 4000 bytes (the data from 301
 * on echo the ACK of 300 at once: a wired RTT of 1 ms).  From the hole at
 * 8000 with k segments above it arrived, the edge may reach 8000 + 4000 +
 * 1000 k; it stood at 18000, so the seventh dupack is the first to move it.
 */
static const struct step repair_window[] = {
	CLAMP_PATH_STEPS,
	D(200, 6000), D(201, 7000),
	AW(300, 6000, 13000, FWD, "win 12000"),
	D(301, 8000), D(302, 9000), D(303, 10000), D(304, 11000), D(305, 12000), D(306, 13000), D(307, 14000),
	D(308, 15000), D(309, 16000), D(310, 17000),
	AW(340, 8000, 13000, FWD, "win 10000"),	/* 8000 is lost */
	AW(342, 8000, 13000, DROP, "rtx 8000"),	/* 9000 arrived: the edge could reach 13000 */
	AW(343, 8000, 13000, DROP, ""), AW(344, 8000, 13000, DROP, ""), AW(345, 8000, 13000, DROP, ""),
	AW(346, 8000, 13000, DROP, ""), AW(347, 8000, 13000, DROP, ""),
	AW(348, 8000, 13000, FWD, "win 11000"),	/* seven above the hole: 19000 */
	AW(349, 8000, 13000, FWD, "win 12000"),
	AW(350, 8000, 13000, FWD, ""),		/* 21000: the receiver's own window */
	AW(351, 8000, 13000, DROP, ""),		/* it cannot go further: a dupack, kept */
	AW(385, 18000, 13000, FWD, "win 4000"),	/* the repair arrived */
	END_,
};

/* repair_window_updates = false: the papers' Snoop, every dupack of the hole dropped. */
static const struct step repair_window_off[] = {
	CLAMP_PATH_STEPS,
	D(200, 6000), D(201, 7000),
	AW(300, 6000, 13000, FWD, "win 12000"),
	D(301, 8000), D(302, 9000), D(303, 10000), D(304, 11000), D(305, 12000), D(306, 13000), D(307, 14000),
	D(308, 15000), D(309, 16000), D(310, 17000),
	AW(340, 8000, 13000, FWD, "win 10000"),	/* 8000 is lost */
	AW(342, 8000, 13000, DROP, "rtx 8000"),
	AW(343, 8000, 13000, DROP, ""), AW(344, 8000, 13000, DROP, ""), AW(345, 8000, 13000, DROP, ""),
	AW(346, 8000, 13000, DROP, ""), AW(347, 8000, 13000, DROP, ""),
	AW(348, 8000, 13000, DROP, ""),
	AW(349, 8000, 13000, DROP, ""),
	AW(350, 8000, 13000, DROP, ""),
	AW(351, 8000, 13000, DROP, ""),
	AW(385, 18000, 13000, FWD, "win 4000"),
	END_,
};

/* With SACK the same, counted from the blocks: arrivals above the hole, not dupacks. */
static const struct step repair_window_sack[] = {
	CLAMP_PATH_STEPS,
	D(200, 6000), D(201, 7000),
	AW(300, 6000, 13000, FWD, "win 12000"),
	D(301, 8000), D(302, 9000), D(303, 10000), D(304, 11000), D(305, 12000), D(306, 13000), D(307, 14000),
	D(308, 15000), D(309, 16000), D(310, 17000),
	AW(340, 8000, 13000, FWD, "win 10000"),
	ASW(342, 8000, 13000, DROP, false, "rtx 8000", 1, { 9000, 10000 }),
	ASW(344, 8000, 13000, DROP, false, "", 1, { 9000, 12000 }),
	ASW(346, 8000, 13000, DROP, false, "", 1, { 9000, 14000 }),
	ASW(347, 8000, 13000, DROP, false, "", 1, { 9000, 15000 }),	/* six: 18000 */
	ASW(349, 8000, 13000, FWD, true, "win 12000", 1, { 9000, 17000 }),
	ASW(350, 8000, 13000, FWD, true, "", 1, { 9000, 18000 }),
	ASW(351, 8000, 13000, DROP, false, "", 1, { 9000, 18000 }),	/* nothing new */
	AW(385, 18000, 13000, FWD, "win 4000"),
	END_,
};

/*
 * window_clamp_percent: the clamp table's path (25 kB/s, a 40 ms hop, the
 * wired RTT now 10 ms: the data at 200 echo the ACK of 190), a BDP of
 * 1250 bytes.  At 150 % (the default) the clamp is its floor of four
 * segments, at 400 % 5000 bytes: the window from 14000 once the edge of
 * 17000 (the receiver's own, at 310) is behind.
 */
#define CLAMP_PERCENT_STEPS(last_window)							\
	CLAMP_PATH_STEPS,										\
	D(200, 6000), D(201, 7000),								\
	D(202, 8000), D(203, 9000), D(204, 10000), D(205, 11000), D(206, 12000), D(207, 13000),	\
	AW(300, 6000, 13000, FWD, "win 12000"),							\
	AW(305, 7000, 13000, FWD, "win 11000"),							\
	AW(310, 8000, 9000, FWD, ""),								\
	AW(340, 9000, 13000, FWD, "win 8000"),							\
	AW(345, 14000, 13000, FWD, last_window),						\
	END_

static const struct step clamp_percent_150[] = { CLAMP_PERCENT_STEPS("win 4000") };
static const struct step clamp_percent_400[] = { CLAMP_PERCENT_STEPS("win 5000") };

/*
 * The egress queue refuses 8000 while 1000..8999 are outstanding on the hop
 * (8000 bytes): it holds about 7000.  Before any rate estimate, ACKs to the
 * sender then carry at most that (the right edge, 6000, is already behind).
 */
#define CAPPED_AT_7000										\
	D(0, 0),											\
	AW(40, 1000, 5000, FWD, ""),									\
	D(41, 1000), D(42, 2000), D(43, 3000), D(44, 4000), D(45, 5000), D(46, 6000), D(47, 7000),	\
	DQ(48, 8000),											\
	AW(80, 2000, 13000, FWD, "win 7000")

static const struct step queue_cap[] = {
	CAPPED_AT_7000,
	AW(85, 3000, 13000, FWD, "win 7000"),
	AW(90, 4000, 6000, FWD, ""),	/* the receiver's own window is smaller */
	END_,
};

/*
 * With the clamp in force the first burst of refusals (3000) is the
 * clamp's own overshoot: capped, repaired here, no signal.  A refusal two
 * round trips later (7000), with the cap in force, is congestion: left to
 * the sender, whose dupacks pass.
 */
static const struct step queue_overshoot[] = {
	D(0, 0),
	AW(40, 1000, 5000, FWD, ""),
	D(41, 1000), D(42, 2000), DQ(43, 3000), D(44, 4000),
	AW(80, 3000, 5000, FWD, "win 4000"),	/* the cap: 2000 on the hop, four segments at least */
	AW(81, 3000, 5000, FWD, "rtx 3000"),	/* repaired here; passed as a window update */
	AW(120, 5000, 5000, FWD, "win 4000"),
	D(121, 5000), D(122, 6000), DQ(200, 7000), D(201, 8000),
	AW(202, 7000, 5000, FWD, "win 4000"),
	AW(203, 7000, 5000, FWD, "win 4000"),	/* the signal's dupack reaches the sender */
	END_,
};

/*
 * An ACK this box generates (here for the sender's retransmission of
 * acknowledged data) carries the clamped window, as the ACK passed before
 * it did: with the wireless host's 13000 it would move the sender's right
 * edge past the clamp, for good.
 */
static const struct step clamp_generated_ack[] = {
	CAPPED_AT_7000,
	D_(81, 1000, DROP, "ack 2000 win 7000"),
	END_,
};

/* ... and so does a D-SACK for the sender's copy of a repair made here (dsack_dropped_rtx). */
static const struct step clamp_generated_dsack[] = {
	CAPPED_AT_7000,
	ASW(82, 2000, 13000, FWD, false, "rtx 2000, win 8000", 1, { 3000, 4000 }),
	D_(90, 2000, DROP, ""),		/* the sender's copy: ours is on its way */
	/* the refused 8000 repaired; the D-SACK's window is the forwarded ACK's, not 13000 */
	AW(125, 8000, 13000, FWD, "dsack 8000 2000-3000 win 7082, rtx 8000, win 7082"),
	END_,
};

/* Not dupacks: an ACK carrying data passes; an ACK older than one seen is dropped. */
static const struct step not_dupacks[] = {
	D(0, 0), D(1, 1000), D(2, 2000),
	A(40, 1000, FWD, ""),
	{ .kind = ACK, .t_ms = 41, .seq = 1000, .len = 10, .verdict = FWD, .actions = "" },
	A(42, 2000, FWD, ""),
	A(43, 1000, DROP, ""),
	A(80, 3000, FWD, ""),
	END_,
};

/*
 * A Linux receiver grows its window while out-of-order data arrive.  With
 * SACK those ACKs are dupacks (the blocks say what arrived); without, they
 * are window updates by RFC 5681 (the application may have read): passed
 * on, and the hole is the timer's.
 */
static const struct step growing_window_sack[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	{ .kind = ACK, .t_ms = 42, .seq = 1000, .win = 1100, .verdict = DROP, .actions = "rtx 1000", .nsack = 1,
	  .sack = { { 2000, 3000 } } },
	{ .kind = ACK, .t_ms = 43, .seq = 1000, .win = 1200, .verdict = DROP, .actions = "", .nsack = 1,
	  .sack = { { 2000, 4000 } } },
	AW(84, 4000, 1300, FWD, ""),
	END_,
};

static const struct step growing_window[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	AW(42, 1000, 1100, FWD, ""),
	AW(43, 1000, 1200, FWD, ""),
	TK(161, "rtx 1000"),
	AW(202, 4000, 1300, FWD, ""),
	END_,
};

/* With a small per-flow bound only two segments fit: the third passes uncached. */
static const struct step cache_bound[] = {
	D(0, 0), D(1, 1000), D(2, 2000),
	A(40, 2000, FWD, ""),
	A(42, 2000, FWD, ""),		/* the hole is not cached: the sender must see this */
	A(80, 3000, FWD, ""),
	END_,
};

/*
 * This box's own queue refuses 2000 (congestion): not repaired locally,
 * its dupacks and SACK blocks go to the sender, which must slow down.
 */
static const struct step queue_drop[] = {
	D(0, 0), D(1, 1000), DQ(2, 2000), D(3, 3000), D(4, 4000),
	A(40, 2000, FWD, ""),
	AS(42, 2000, FWD, false, "", 1, { 3000, 4000 }),
	AS(43, 2000, FWD, false, "", 1, { 3000, 5000 }),
	D(80, 2000),			/* the sender's fast retransmit */
	A(120, 5000, FWD, ""),
	END_,
};

/*
 * egress_drops: the egress qdisc (CoDel) dropped something after segment
 * 1000 left, so its loss goes to the sender as a congestion signal, like a
 * refusal: no repair, the dupacks pass, the sender's retransmission is
 * cached.  The second hole, in the same episode, is repaired here.
 */
static const struct step egress_drop[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000),
	A(40, 1000, FWD, ""),
	QDROP(41),
	/* 1000 and 2000 both proven lost: 1000 is the sender's, 2000 repaired and shown as SACKed */
	AS(42, 1000, FWD, false, "rtx 2000, sack 2000-4000", 1, { 3000, 4000 }),
	AS(43, 1000, FWD, false, "sack 2000-5000", 1, { 3000, 5000 }),
	AS(44, 1000, FWD, false, "sack 2000-6000", 1, { 3000, 6000 }),
	D(80, 1000),			/* the sender's fast retransmit */
	A(120, 6000, FWD, ""),
	END_,
};

/* A rise seen before the segment left says nothing about its loss: repaired here. */
static const struct step egress_drop_before[] = {
	D(0, 0), QDROP(1), D(2, 1000), D(3, 2000), D(4, 3000), D(5, 4000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "rtx 1000", 1, { 2000, 3000 }),
	AS(43, 1000, DROP, false, "", 1, { 2000, 4000 }),
	AS(44, 1000, DROP, false, "", 1, { 2000, 5000 }),
	A(85, 5000, FWD, ""),
	END_,
};

/* A local retransmission the queue refuses: the hole becomes the sender's. */
static const struct step queue_drop_rtx[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	AQ(42, 1000, DROP, "rtx 1000"),	/* dropped: it triggered our rtx (which the queue refused) */
	A(43, 1000, FWD, ""),		/* from now on the sender sees them */
	END_,
};

/* rtx_priority: a refused repair filled its own queue, not the data's: no congestion signal, repaired again */
static const struct step queue_drop_priority_rtx[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	AQ(42, 1000, DROP, "rtx 1000"),
	A(43, 1000, DROP, "rtx 1000"),
	A(85, 4000, FWD, ""),
	END_,
};

/*
 * A timer round the egress queue refuses never left this box, so the
 * ACK for the (only late) original is no RTT sample of it: timed from the
 * refusal it would read 9 ms, a minimum far below the hop's 40, against
 * which the later 60 ms samples look like a standing queue and the segment
 * at 334 would be dropped as a congestion signal (aqm_target 40 ms, above
 * it for 100 ms since 232).
 */
static const struct step refused_rtx_is_no_sample[] = {
	D(0, 0), D(1, 1000),
	A(40, 1000, FWD, ""),		/* srtt 40, rttvar 20: rto 120 */
	{ .kind = TICK, .t_ms = 161, .actions = "rtx 1000", .queue_refuses = true },
	A(170, 2000, FWD, ""),		/* the original arrived */
	D(171, 2000),
	A(231, 3000, FWD, ""),		/* 60 ms */
	D(232, 3000), D(233, 4000),
	A(293, 4000, FWD, ""),		/* 61 ms */
	D(334, 5000),			/* no signal: 61 is below 40 + aqm_target */
	END_,
};

/*
 * The sender's hole (3000, refused by the queue: the episode's signal)
 * above one this box repairs (1000, lost on the air).  The sender is shown
 * two blocks: above its hole, what arrived or is held here (4000-7000, 5000
 * being repaired), and below it, what arrived (2000-3000); with the lower
 * one cut away it would take 2000 for lost as well and send it again.
 */
static const struct step exposed_above_ours[] = {
	D(0, 0), D(1, 1000), D(2, 2000), DQ(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "rtx 1000", 1, { 2000, 3000 }),
	AS(44, 1000, FWD, false, "", 2, { 4000, 5000 }, { 2000, 3000 }),	/* as it came: both true */
	AS(46, 1000, FWD, false, "rtx 5000, sack 4000-7000 2000-3000", 3, { 6000, 7000 }, { 4000, 5000 },
	   { 2000, 3000 }),
	D(80, 3000),			/* the sender's fast retransmit */
	A(120, 7000, FWD, ""),
	END_,
};

/* The sender's retransmission replaces the cached copy: its timestamp is the current one. */
static void sender_copy_replaces_ours(void)
{
	static const struct step steps[] = {
		D(0, 0), D(1, 1000), D(2, 2000),
		A(40, 1000, FWD, ""),
		D(60, 1000),		/* the sender's retransmission, TSval 5000 + 4 */
		END_,
	};
	struct harness h;
	struct pkt p;
	long i;

	h_init(&h, &filter_snoop, 4, true, 1000000);
	h_handshake(&h);
	h_run(&h, "sender_copy_replaces_ours", steps);
	i = segq_find(&h.flow->cache, h.isn_fh + 1 + 1000);
	CHECK(i >= 0 && pkt_parse(segq_at(&h.flow->cache, (uint32_t)i)->buf->data, segq_at(&h.flow->cache, (uint32_t)i)->buf->len,
				  &p) == PKT_OK && p.tsval == 5004,
	      "cached TSval %u, expected the retransmission's 5004", p.tsval);
	CHECK(h.flow->conn.fh_tsval == 5004, "the newest TSval of the fixed host is tracked (%u)", h.flow->conn.fh_tsval);
	h_free(&h);
}

/*
 * How a super-packet leaves: inject sends its slices (the range of the
 * packet), accept lets the kernel forward it; auto injects what fits the
 * MTU and accepts a super-packet, which pepd could only send slice by slice.
 */
static void forward_modes(void)
{
	static const struct {
		enum pep_forward mode;
		uint32_t len;
		enum pep_verdict want;
	} cases[] = {
		{ FORWARD_INJECT, 3952, VERDICT_INJECT }, { FORWARD_INJECT, 988, VERDICT_INJECT },
		{ FORWARD_ACCEPT, 3952, VERDICT_ACCEPT }, { FORWARD_ACCEPT, 988, VERDICT_ACCEPT },
		{ FORWARD_AUTO, 3952, VERDICT_ACCEPT },	  { FORWARD_AUTO, 988, VERDICT_INJECT },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct harness h;
		struct pep_out out;
		struct tpkt t;

		h_init(&h, &filter_snoop, 4, true, 1000000);
		h.cfg.forward = cases[i].mode;
		h_handshake(&h);
		t = (struct tpkt){ .family = 4, .from_fh = true, .seq = h.isn_fh + 1, .ack = h.isn_wh + 1,
				   .flags = TCPF_ACK, .win = 65535, .len = cases[i].len, .ts = true, .tsval = 5001 };
		h_packet(&h, &t, &out);
		CHECK(out.verdict == cases[i].want, "forward %d, %u bytes: verdict %d, expected %d", cases[i].mode,
		      cases[i].len, out.verdict, cases[i].want);
		CHECK(out.verdict != VERDICT_INJECT ||
			      (out.inject_seq == t.seq && out.inject_end == t.seq + cases[i].len),
		      "forward %d: injects the packet's whole range", cases[i].mode);
		CHECK(h.flow->cache.count == (cases[i].len > 988 ? 4u : 1u), "cached as %u segments", h.flow->cache.count);
		h_free(&h);
	}
}

/*
 * The handshake of a connection the wireless host opens: its SYN, the
 * fixed host's SYN-ACK (cached when it answers that SYN), the wireless
 * host's ACK.  Each case gives when the SYN-ACK is (re)sent by the fixed
 * host and when the ACK arrives, and expects the times pepd resends the
 * SYN-ACK from its cache (rto_initial 200 ms, then backoff, at most
 * SNOOP_SYNACK_ROUNDS rounds).  After the ACK, the first data segment's timer must not carry
 * the handshake's backoff: 3 x the handshake's round trip if the SYN-ACK
 * went once, else rto_initial.
 */
static void synack_cases(void)
{
	static const struct {
		const char *name;
		bool wh_syn;		/* false: the fixed host's SYN-ACK answers nothing seen */
		int32_t ack_off;	/* the SYN-ACK acknowledges isn_wh + 1 + ack_off */
		uint32_t fh_again_ms;	/* the fixed host resends its SYN-ACK (0: never) */
		uint32_t ack_ms;	/* the wireless host's ACK arrives (0: never, within 5 s) */
		const char *resent;	/* pepd's resends of the SYN-ACK, ms */
		uint32_t cached, given_up;
		uint32_t first_rto_ms;	/* the first data segment's local timeout */
	} cases[] = {
		{ "delivered", true, 0, 0, 40, "", 1, 0, 120 },	/* 3 x the handshake's 40 ms */
		{ "lost once", true, 0, 0, 240, "200", 1, 0, 200 },	/* resent: no sample (Karn) */
		{ "lost twice", true, 0, 0, 640, "200 600", 1, 0, 200 },
		{ "never acknowledged", true, 0, 0, 0, "200 600", 1, 1, 0 },	/* SNOOP_SYNACK_ROUNDS */
		{ "the fixed host's own resend replaces ours", true, 0, 1000, 1040, "200 600", 1, 0, 200 },
		{ "no SYN from the wireless host", false, 0, 0, 0, "", 0, 0, 0 },
		{ "answers another SYN", true, 5, 0, 0, "", 0, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tpkt syn = { .family = 4, .from_fh = false, .seq = 77777, .flags = TCPF_SYN, .win = 65535,
				    .ts = true, .tsval = 100, .sack_perm = true, .mss = 1000 };
		struct tpkt synack = { .family = 4, .from_fh = true, .seq = 1000000,
				       .ack = (uint32_t)(77778 + cases[i].ack_off), .flags = TCPF_SYN | TCPF_ACK,
				       .win = 65535, .ts = true, .tsval = 5000, .tsecr = 100, .sack_perm = true,
				       .mss = 1000 };
		struct tpkt ack = { .family = 4, .from_fh = false, .seq = 77778, .ack = 1000001, .flags = TCPF_ACK,
				    .win = 1000, .ts = true, .tsval = 101, .tsecr = 5000 };
		struct tpkt data = { .family = 4, .from_fh = true, .seq = 1000001, .ack = 77778,
				     .flags = TCPF_ACK | TCPF_PSH, .win = 65535, .len = 1000, .ts = true, .tsval = 5001,
				     .tsecr = 101 };
		uint64_t t0 = 1000000000ULL, due;
		char resent[128] = "";
		size_t used = 0;
		struct harness h;
		struct pep_out out;
		uint32_t ms;

		h_init(&h, &filter_snoop, 4, true, 1000000);
		h.now = t0;
		if (cases[i].wh_syn)
			h_packet(&h, &syn, &out);
		h_packet(&h, &synack, &out);
		for (ms = 1; ms <= 5000; ms++) {
			h.now = t0 + (uint64_t)ms * NS_PER_MS;
			due = flow_timer_next(&h.ft);
			if (due && due <= h.now) {
				uint32_t k;

				h_tick(&h, &out);
				for (k = 0; k < out.nact; k++)
					if (out.act[k].type == ACTION_SEND_SEGMENT && out.act[k].seq == synack.seq)
						used += (size_t)snprintf(resent + used, sizeof(resent) - used, "%s%u",
									 used ? " " : "", ms);
			}
			if (ms == cases[i].fh_again_ms)
				h_packet(&h, &synack, &out);
			if (ms == cases[i].ack_ms)
				break;
		}
		CHECK(strcmp(resent, cases[i].resent) == 0, "SYN-ACK %s: resent at [%s], expected [%s]", cases[i].name,
		      resent, cases[i].resent);
		CHECK(h.flow->cnt.syn_acks_cached == cases[i].cached, "SYN-ACK %s: syn_acks_cached %llu, expected %u",
		      cases[i].name, (unsigned long long)h.flow->cnt.syn_acks_cached, cases[i].cached);
		CHECK(h.flow->cnt.rtx_given_up == cases[i].given_up, "SYN-ACK %s: rtx_given_up %llu, expected %u",
		      cases[i].name, (unsigned long long)h.flow->cnt.rtx_given_up, cases[i].given_up);
		if (cases[i].ack_ms) {
			h_packet(&h, &ack, &out);
			CHECK(h.flow->cache.count == 0 && flow_timer_next(&h.ft) == 0,
			      "SYN-ACK %s: the ACK empties the cache (%u) and stops the timer", cases[i].name,
			      h.flow->cache.count);
			h_packet(&h, &data, &out);
			CHECK(flow_timer_next(&h.ft) == h.now + (uint64_t)cases[i].first_rto_ms * NS_PER_MS,
			      "SYN-ACK %s: the first data segment's timer is %.0f ms, expected %u", cases[i].name,
			      (double)(flow_timer_next(&h.ft) - h.now) / 1e6, cases[i].first_rto_ms);
		}
		CHECK(h.ft.budget.bytes == h.flow->cache.bytes, "SYN-ACK %s: budget %llu vs flow %u", cases[i].name,
		      (unsigned long long)h.ft.budget.bytes, h.flow->cache.bytes);
		h_free(&h);
	}
}

static int run_case(const char *name, const struct step *steps, int family, bool sack, uint32_t isn,
		    void (*tweak)(struct pep_config *), const char *expect_counters)
{
	struct harness h;
	int failed;

	h_init(&h, &filter_snoop, family, sack, isn);
	if (tweak)
		tweak(&h.cfg);
	flow_table_free(&h.ft);
	if (flow_table_init(&h.ft, 16, 42, h.cfg.total_cache_bytes, (uint32_t)h.cfg.flow_cache_bytes) < 0)
		abort();
	h_handshake(&h);
	failed = h_run(&h, name, steps);
	if (expect_counters) {
		char buf[256], *tok, *save = NULL;

		snprintf(buf, sizeof(buf), "%s", expect_counters);
		for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			char *eq = strchr(tok, '=');
			unsigned long long want = strtoull(eq + 1, NULL, 10), got = ~0ULL;

			*eq = '\0';
#define PICK(n, d) if (strcmp(tok, #n) == 0) got = h.flow->cnt.n;
			PEP_FLOW_COUNTERS(PICK)
#undef PICK
			CHECK(got == want, "%s: %s = %llu, expected %llu", name, tok, got, want);
		}
	}
	/* the per-flow cache accounting must agree with the shared budget */
	CHECK(h.ft.budget.bytes == h.flow->cache.bytes, "%s: budget %llu vs flow %u", name,
	      (unsigned long long)h.ft.budget.bytes, h.flow->cache.bytes);
	h_free(&h);
	return failed;
}

static void thresh2(struct pep_config *c)
{
	c->rtx_thresh = 2;
}

static void clamp_on(struct pep_config *c)
{
	c->window_clamp = true;
	c->aqm_target_ns = 0;	/* the clamp alone */
	c->rto_min_ns = 1000000000ULL;	/* and no local timer in the way */
}

static void clamp_on_400(struct pep_config *c)
{
	clamp_on(c);
	c->window_clamp_percent = 400;
}

static void clamp_on_no_updates(struct pep_config *c)
{
	clamp_on(c);
	c->repair_window_updates = false;
}

static void keep_dupacks(struct pep_config *c)
{
	c->drop_dupacks = DROP_DUPACKS_FALSE;
}

static void egress_drops(struct pep_config *c)
{
	c->egress_drops = true;
}

static void rtx_priority(struct pep_config *c)
{
	c->rtx_priority = 0x10010;
}

static void reorder_window(struct pep_config *c)
{
	c->reorder_window_percent = 25;
}

static void show_acks_dsack(struct pep_config *c)
{
	c->drop_dupacks = DROP_DUPACKS_FALSE;
	c->hide_sack = false;
	c->dsack_dropped_rtx = true;
}

static void dsack_only(struct pep_config *c)
{
	c->dsack_dropped_rtx = true;
}

static void clamp_dsack(struct pep_config *c)
{
	clamp_on(c);
	show_acks_dsack(c);
}

static void show_acks_dsack_one_round(struct pep_config *c)
{
	show_acks_dsack(c);
	c->max_local_rtx = 1;
}

static void show_acks(struct pep_config *c)
{
	c->drop_dupacks = DROP_DUPACKS_FALSE;
	c->hide_sack = false;
}

static void default_acks(struct pep_config *c)
{
	struct pep_config d;

	config_defaults(&d);
	c->drop_dupacks = d.drop_dupacks;
	c->hide_sack = d.hide_sack;
	c->dsack_dropped_rtx = d.dsack_dropped_rtx;
}

static void small_cache(struct pep_config *c)
{
	c->flow_cache_bytes = 2200;	/* two 1052-byte packets */
}

/*
 * A standing queue: a segment every 10 ms, each acknowledged 100 ms after
 * it was sent, for long enough that rttvar has all but vanished (the local
 * timeout is 100 + 1 ms).  Then the queue holds 5 ms more: segment 25,
 * sent at 250, is acknowledged at 355.  Timed from its send, it would be
 * retransmitted at 351 although the hop had gone on delivering what was
 * sent before it until 340: a spurious round.  Timed from that last
 * delivery, its timeout is 441, and its ACK comes first.
 */
static void late_in_a_steady_queue(void)
{
	static struct step steps[80];
	unsigned int n = 0, t;

	for (t = 0; t <= 350; t += 10) {
		if (t >= 100 && t <= 340)
			steps[n++] = (struct step)A(t, (t / 10 - 10 + 1) * 1000, FWD, "");
		steps[n++] = (struct step)D(t, t / 10 * 1000);
	}
	steps[n++] = (struct step)TK(351, "");
	steps[n++] = (struct step)A(355, 26000, FWD, "");
	steps[n++] = (struct step)END_;
	run_case("late_in_a_steady_queue", steps, 4, true, 1000000, NULL, "local_rtx_timer=0 timer_expiries=0");
}

/*
 * The delivery rate behind the clamp across a repair: the hop delivers a
 * 1000-byte segment per ms (1 MB/s), each acknowledged 40 ms after it
 * left; the segment sent at 200 ms is lost and repaired here, and the
 * cumulative ACK then jumps over the 40-odd segments SACKed meanwhile.
 * A sample closes only at a new cumulative ACK, so the one with the jump
 * also spans the stall before it: no sample may read the jump as a burst
 * faster than the hop (the clamp would let the sender overfill the queue).
 */
static void rate_across_a_repair(void)
{
	struct harness h;
	struct pep_out out;
	uint32_t t, acked = 0, rtx_at = 0;
	uint64_t max;

	h_init(&h, &filter_snoop, 4, true, 1000000);
	h_handshake(&h);
	for (t = 0; t <= 600; t++) {
		uint64_t base = 1000000000ULL;

		h.now = base + (uint64_t)t * NS_PER_MS;
		if (t >= 40) {
			/* the ACK for the segment sent at t - 40 */
			uint32_t sent = t - 40, top = (sent + 1) * 1000;
			struct tpkt a = { .family = 4, .seq = h.isn_wh + 1, .flags = TCPF_ACK, .win = 1000, .ts = true,
					  .tsval = h.tsval, .tsecr = 5000 };

			if (rtx_at && t >= rtx_at + 40) {
				acked = top;	/* the repair arrived: everything below top */
			} else if (sent >= 200) {
				acked = 200000;
				a.nsack = sent > 200 ? 1 : 0;
				a.sack[0] = (struct sack_block){ h.isn_fh + 1 + 201000, h.isn_fh + 1 + top };
			} else {
				acked = top;
			}
			a.ack = h.isn_fh + 1 + acked;
			h_packet(&h, &a, &out);
			if (out.nact && out.act[0].type == ACTION_SEND_SEGMENT && !rtx_at)
				rtx_at = t;
			h_sent(&h, &out, false);
		}
		if (t < 600) {
			struct tpkt d = { .family = 4, .from_fh = true, .seq = h.isn_fh + 1 + t * 1000,
					  .ack = h.isn_wh + 1, .flags = TCPF_ACK, .len = 1000, .ts = true,
					  .tsval = 5000 + t, .tsecr = h.tsval };

			h_packet(&h, &d, &out);
			h_sent(&h, &out, false);
		}
	}
	max = snoop_max_rate(&h.flow->st.snoop);
	CHECK(rtx_at > 200 && rtx_at < 250, "rate: the hole is repaired here (at %u ms)", rtx_at);
	CHECK(h.flow->st.snoop.rate_n >= 4, "rate: %u samples", h.flow->st.snoop.rate_n);
	CHECK(max >= 900000 && max <= 1100000, "rate: highest sample %llu bytes/s, the hop delivers 1000000",
	      (unsigned long long)max);
	h_free(&h);
}

/*
 * The delivery rate over loss patterns, a table: a simulated hop sends one
 * 1000-byte segment per ms (1 MB/s), first come first served, new data and
 * pepd's repairs alike, 20 ms each way; the wireless host acknowledges
 * every arrival with up to three SACK blocks (the highest runs); the
 * segments lost[] never arrive, pepd's repairs always do; without SACK
 * each duplicate ACK counts as one segment's arrival.  A rate that
 * counted only the cumulative ACK read the jump over data SACKed before
 * its sample began as a burst (a partial ACK between two holes, the end of
 * a fade): 1.3-2.8 x the hop's rate in the VM, a clamp that never held.
 * Counted where the receiver first reports a segment, no sample may exceed
 * the hop's rate by more than the sampling's jitter.
 */
#define RATE_SEGS 600
#define RATE_SPAN_MS (RATE_SEGS + 200)

struct rate_link {
	uint32_t free_at;	/* ms: when the hop is free for the next transmission */
	bool sack;		/* the receiver sends SACK blocks (else plain duplicate ACKs) */
	bool got[RATE_SEGS];
	struct tpkt due[RATE_SPAN_MS + 100][4];	/* ACKs reaching pepd, by ms */
	uint8_t ndue[RATE_SPAN_MS + 100];
};

/* Segment k enters the hop at ms t; unless lost, the ACK it draws reaches pepd 40 ms after it left. */
static void rate_link_send(struct rate_link *l, const struct harness *h, uint32_t k, uint32_t t, bool lost)
{
	struct tpkt a = { .family = 4, .seq = h->isn_wh + 1, .flags = TCPF_ACK, .win = 1000, .ts = true,
			  .tsval = h->tsval, .tsecr = 5000 + k };
	uint32_t ack = 0, j, top, left = l->free_at > t ? l->free_at : t;

	l->free_at = left + 1;
	if (lost)
		return;
	l->got[k] = true;
	while (ack < RATE_SEGS && l->got[ack])
		ack++;
	a.ack = h->isn_fh + 1 + ack * 1000;
	for (top = RATE_SEGS; l->sack && top > ack && a.nsack < 3;) {
		uint32_t end;

		while (top > ack && !l->got[top - 1])
			top--;
		if (top <= ack)
			break;
		end = top;
		for (j = top; j > ack && l->got[j - 1]; j--)
			;
		a.sack[a.nsack++] = (struct sack_block){ h->isn_fh + 1 + j * 1000, h->isn_fh + 1 + end * 1000 };
		top = j;
	}
	if (left + 40 < RATE_SPAN_MS + 100 && l->ndue[left + 40] < 4)
		l->due[left + 40][l->ndue[left + 40]++] = a;
}

static void rate_over_losses(void)
{
	static const struct {
		const char *name;
		bool sack;
		uint32_t lost[24];	/* segment numbers, ascending; 0 ends the list */
	} cases[] = {
		{ "one hole", true, { 200 } },
		{ "two holes, a partial ACK between", true, { 200, 215 } },
		{ "holes every 40 ms", true, { 200, 240, 280, 320, 360, 400 } },
		{ "a 20 ms fade", true, { 200, 201, 202, 203, 204, 205, 206, 207, 208, 209,
					  210, 211, 212, 213, 214, 215, 216, 217, 218, 219 } },
		{ "one hole, no SACK", false, { 200 } },
		{ "two holes, no SACK", false, { 200, 215 } },
		{ "holes every 40 ms, no SACK", false, { 200, 240, 280, 320, 360, 400 } },
	};
	static struct rate_link l;
	size_t c;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct harness h;
		struct pep_out out;
		uint32_t t, i, k, repairs = 0;
		uint64_t max;

		memset(&l, 0, sizeof(l));
		l.sack = cases[c].sack;
		h_init(&h, &filter_snoop, 4, cases[c].sack, 1000000);
		h_handshake(&h);
		for (t = 0; t < RATE_SPAN_MS; t++) {
			h.now = 1000000000ULL + (uint64_t)t * NS_PER_MS;
			for (i = 0; i < l.ndue[t]; i++) {
				h_packet(&h, &l.due[t][i], &out);
				for (k = 0; k < out.nact; k++) {
					uint32_t rel = (out.act[k].seq - h.isn_fh - 1) / 1000;

					if (out.act[k].type == ACTION_SEND_SEGMENT && rel < RATE_SEGS) {
						rate_link_send(&l, &h, rel, t, false);
						repairs++;
					}
				}
				h_sent(&h, &out, false);
			}
			if (t < RATE_SEGS) {
				struct tpkt d = { .family = 4, .from_fh = true, .seq = h.isn_fh + 1 + t * 1000,
						  .ack = h.isn_wh + 1, .flags = TCPF_ACK, .len = 1000, .ts = true,
						  .tsval = 5000 + t, .tsecr = h.tsval };
				bool lost = false;

				for (i = 0; i < 24 && cases[c].lost[i]; i++)
					lost |= cases[c].lost[i] == t;
				h_packet(&h, &d, &out);
				h_sent(&h, &out, false);
				rate_link_send(&l, &h, t, t, lost);
			}
		}
		max = snoop_max_rate(&h.flow->st.snoop);
		CHECK(repairs > 0 && h.flow->st.snoop.last_ack == h.isn_fh + 1 + RATE_SEGS * 1000,
		      "rate, %s: %u repairs, everything acknowledged", cases[c].name, repairs);
		CHECK(h.flow->st.snoop.rate_n >= 4, "rate, %s: %u samples", cases[c].name,
		      h.flow->st.snoop.rate_n);
		CHECK(max >= 900000 && max <= 1100000, "rate, %s: highest sample %llu bytes/s, the hop's 1000000",
		      cases[c].name, (unsigned long long)max);
		h_free(&h);
	}
}

/*
 * The clamp from the path's state, a table: rate in bytes/s (two samples),
 * the hop's and the wired side's minimum RTT, what a refusal measured on
 * the hop (queue_cap).  A refusal's cap adds the wired side's share at the
 * hop's rate: the sender's window spans the whole path, the refusal only
 * the hop (10 Mbit/s with 40 ms on each side was held to 56 kB, 5.6 Mbit/s).
 * The queue beyond one BDP is at least window_clamp_min_queue at the hop's
 * rate (min_queue_ms; 25, the default, in the first cases): it binds on a
 * short path only, and a refusal still caps it; and at least min_segments
 * of the flow's (1000 bytes here), which binds on a slow hop.
 */
static void clamp_from_path_state(void)
{
	static const struct {
		const char *name;
		uint64_t rate, hop_rtt_ms, wired_rtt_ms, queue_cap, percent, min_queue_ms, min_segments, expect;
	} cases[] = {
		{ "nothing known", 0, 0, 0, 0, 150, 25, 0, 0 },
		{ "150 % of the BDP", 1250000, 40, 40, 0, 150, 25, 0, 150000 },
		{ "400 % of the BDP", 1250000, 40, 40, 0, 400, 25, 0, 400000 },
		{ "refusal plus the wired side", 1250000, 40, 40, 56000, 150, 25, 0, 106000 },
		{ "refusal above the clamp", 1250000, 40, 40, 200000, 150, 25, 0, 150000 },
		{ "never below one BDP", 1250000, 40, 40, 10000, 150, 25, 0, 100000 },
		{ "refusal, wired side unknown", 1250000, 40, 0, 20000, 150, 25, 0, 20000 },
		{ "four segments at least", 10000, 10, 10, 1000, 150, 25, 0, 4000 },
		{ "short path: 25 ms of queue, not 12", 1250000, 4, 20, 0, 150, 25, 0, 61250 },
		{ "short path, min_queue 0: 150 %", 1250000, 4, 20, 0, 150, 0, 0, 45000 },
		{ "long path, min_queue above its 50 %", 1250000, 40, 40, 0, 150, 50, 0, 162500 },
		{ "short path, a refusal caps the floor", 1250000, 4, 20, 20000, 150, 25, 0, 45000 },
		{ "slow hop: 8 segments, not 40 ms", 125000, 40, 40, 0, 150, 25, 8, 18000 },
		{ "fast hop: 8 segments below its 50 %", 1250000, 40, 40, 0, 150, 25, 8, 150000 },
		{ "short path: 40 segments above 25 ms", 1250000, 4, 20, 0, 150, 25, 40, 70000 },
		{ "slow hop, min_segments 0: 50 %", 125000, 40, 40, 0, 150, 25, 0, 15000 },
	};
	struct pep_config cfg;
	struct flow f;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct snoop_state *s = &f.st.snoop;
		uint64_t got;

		memset(&f, 0, sizeof(f));
		config_defaults(&cfg);
		cfg.window_clamp = true;
		cfg.window_clamp_percent = (uint32_t)cases[i].percent;
		cfg.window_clamp_min_queue_ns = cases[i].min_queue_ms * NS_PER_MS;
		cfg.window_clamp_min_segments = (uint32_t)cases[i].min_segments;
		f.conn.max_payload = 1000;
		if (cases[i].rate) {
			s->rate[0] = cases[i].rate;
			s->rate[1] = cases[i].rate;
			s->rate_n = 2;
		}
		s->min_rtt_ns = cases[i].hop_rtt_ms * NS_PER_MS;
		s->wired_rtt_ns = cases[i].wired_rtt_ms * NS_PER_MS;
		s->queue_cap = cases[i].queue_cap;
		got = snoop_clamp_bytes(&f, &cfg);
		CHECK(got == cases[i].expect, "clamp, %s: %llu bytes, expected %llu", cases[i].name,
		      (unsigned long long)got, (unsigned long long)cases[i].expect);
	}
}

/*
 * A refusal of the egress queue, a table: what it teaches the clamp
 * (queue_cap: outstanding on the hop less an eighth, at least one segment;
 * the smallest of one burst) and whether it is the clamp's own overshoot
 * (no signal) or congestion.  The hop's srtt is 40 ms, the wired side's
 * 40: a burst lasts two round trips, 160 ms.  cap_age and since_age: how
 * long ago the cap was last set, and since its burst began (0: no cap).
 */
static void queue_refusal(void)
{
	static const struct {
		const char *name;
		bool clamp, no_syns;
		uint32_t outstanding;
		uint64_t cap, cap_age_ms, since_age_ms, expect_cap;
		bool expect_overshoot;
	} cases[] = {
		{ "first refusal: the clamp's overshoot", true, false, 80000, 0, 0, 0, 70000, true },
		{ "small window: one segment of margin", true, false, 4000, 0, 0, 0, 3000, true },
		{ "same burst: the smaller figure", true, false, 90000, 70000, 10, 100, 70000, true },
		{ "same burst, a smaller figure", true, false, 64000, 70000, 10, 100, 56000, true },
		{ "after the burst, cap in force: congestion", true, false, 72000, 70000, 1000, 1000, 63000, false },
		{ "cap lapsed: overshoot again", true, false, 80000, 50000, 10001, 10001, 70000, true },
		{ "clamp off: always congestion", false, false, 80000, 0, 0, 0, 70000, false },
		{ "no window scale known: congestion", true, true, 80000, 0, 0, 0, 70000, false },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pep_counters total = { 0 };
		struct pep_config cfg;
		struct pep_ctx ctx = { .cfg = &cfg, .total = &total, .now = 100000 * NS_PER_MS };
		struct snoop_state *s;
		struct flow f;
		bool overshoot;

		memset(&f, 0, sizeof(f));
		s = &f.st.snoop;
		config_defaults(&cfg);
		cfg.window_clamp = cases[i].clamp;
		f.conn.max_payload = 1000;
		f.conn.fh_syn = !cases[i].no_syns;
		f.conn.wh_syn = !cases[i].no_syns;
		s->ack_seen = true;
		s->last_ack = 5000;
		s->snd_max = 5000 + cases[i].outstanding;
		s->rtt_valid = true;
		s->srtt_ns = 40 * NS_PER_MS;
		s->wired_rtt_ns = 40 * NS_PER_MS;
		s->queue_cap = cases[i].cap;
		s->queue_cap_ns = ctx.now - cases[i].cap_age_ms * NS_PER_MS;
		s->queue_cap_since = ctx.now - cases[i].since_age_ms * NS_PER_MS;
		overshoot = snoop_note_queue_full(&f, &ctx);
		CHECK(overshoot == cases[i].expect_overshoot && s->queue_cap == cases[i].expect_cap,
		      "refusal, %s: %s, cap %llu (expected %s, %llu)", cases[i].name,
		      overshoot ? "overshoot" : "congestion", (unsigned long long)s->queue_cap,
		      cases[i].expect_overshoot ? "overshoot" : "congestion", (unsigned long long)cases[i].expect_cap);
	}
}

/*
 * share_hop_rtt, a table: another flow to the same wireless host (or to
 * another host) saw the hop at hop_ms, hop_age_ms ago; this flow's first
 * segment is acknowledged 30 ms after it left.  Its minimum is the lower
 * of its own and its host's, and the counter says when the host's won.
 */
static void shared_hop_minimum(void)
{
	static const struct {
		const char *name;
		bool share, other_host;
		uint64_t hop_ms, hop_age_ms, expect_ms, from_hop;
	} cases[] = {
		{ "no other flow", true, false, 0, 0, 30, 0 },
		{ "another flow saw the hop at 5 ms", true, false, 5, 100, 5, 1 },
		{ "... with share_hop_rtt off", false, false, 5, 100, 30, 0 },
		{ "another host's 5 ms", true, true, 5, 100, 30, 0 },
		{ "a 5 ms older than the window", true, false, 5, 10001, 30, 0 },
		{ "the flow's own is lower", true, false, 50, 100, 30, 0 },
	};
	static const struct step steps[] = { D(0, 0), A(30, 1000, FWD, ""), END_ };
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t wh[16] = { 0 };
		struct harness h;

		h_init(&h, &filter_snoop, 4, true, 1000000);
		h.cfg.share_hop_rtt = cases[i].share;
		h_handshake(&h);
		memcpy(wh, TC_WH4, 4);
		wh[3] += cases[i].other_host;
		if (cases[i].hop_ms)
			hop_rtt_sample(&h.ft.hops, 4, wh, cases[i].hop_ms * NS_PER_MS,
				       h.now - cases[i].hop_age_ms * NS_PER_MS, SNOOP_MIN_RTT_WINDOW_NS);
		h_run(&h, cases[i].name, steps);
		CHECK(h.flow->st.snoop.min_rtt_ns == cases[i].expect_ms * NS_PER_MS &&
		      h.flow->cnt.min_rtt_from_hop == cases[i].from_hop,
		      "hop minimum, %s: %.1f ms (expected %llu), min_rtt_from_hop %llu (expected %llu)", cases[i].name,
		      (double)h.flow->st.snoop.min_rtt_ns / 1e6, (unsigned long long)cases[i].expect_ms,
		      (unsigned long long)h.flow->cnt.min_rtt_from_hop, (unsigned long long)cases[i].from_hop);
		h_free(&h);
	}
}

/*
 * The minimum RTT's renewal, a table: 5 ms learned at the start; at t_ms
 * `burst` segments leave back to back and their ACK comes r_ms later.  An
 * expired minimum gives way to a higher sample only from a segment that
 * left with at most two of the flow's on the hop: behind the flow's own
 * queue (which the clamp allows) it is kept, or the queue becomes the
 * minimum.  A lower sample is taken whatever it waited behind.
 */
static void min_rtt_renewal(void)
{
	static const struct {
		const char *name;
		uint32_t t_ms, burst, r_ms;
		uint64_t expect_ms, renewed;
	} cases[] = {
		{ "expired, the hop clear: renewed", 11000, 1, 15, 15, 1 },
		{ "expired, a pair (one ACK for two): renewed", 11000, 2, 15, 15, 1 },
		{ "expired, behind nine of the flow's: kept", 11000, 10, 15, 5, 0 },
		{ "not expired, the hop clear: kept", 5000, 1, 15, 5, 0 },
		{ "lower, behind nine: taken", 11000, 10, 3, 3, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct step steps[16] = { D(0, 0), A(5, 1000, FWD, "") };
		struct harness h;
		uint32_t k, n = 2;

		for (k = 0; k < cases[i].burst; k++)
			steps[n++] = (struct step)D(cases[i].t_ms, 1000 + k * 1000);
		steps[n++] = (struct step)A(cases[i].t_ms + cases[i].r_ms, 1000 + cases[i].burst * 1000, FWD, "");
		steps[n] = (struct step)END_;
		h_init(&h, &filter_snoop, 4, true, 1000000);
		h_handshake(&h);
		h_run(&h, cases[i].name, steps);
		CHECK(h.flow->st.snoop.min_rtt_ns == cases[i].expect_ms * NS_PER_MS &&
		      h.flow->cnt.min_rtt_renewed == cases[i].renewed,
		      "min RTT renewal, %s: %.1f ms (expected %llu), min_rtt_renewed %llu (expected %llu)",
		      cases[i].name, (double)h.flow->st.snoop.min_rtt_ns / 1e6, (unsigned long long)cases[i].expect_ms,
		      (unsigned long long)h.flow->cnt.min_rtt_renewed, (unsigned long long)cases[i].renewed);
		h_free(&h);
	}
}

int main(void)
{
	clamp_from_path_state();
	queue_refusal();
	min_rtt_renewal();
	shared_hop_minimum();
	late_in_a_steady_queue();
	rate_across_a_repair();
	rate_over_losses();
	sender_copy_replaces_ours();
	forward_modes();
	synack_cases();
	run_case("single_loss", single_loss, 4, false, 1000000, NULL,
		 "local_rtx=1 dupacks_dropped=3 cached_packets=5 dupacks_forwarded=0 "
		 "repaired_one_round=1 repaired_more_rounds=0");
	run_case("single_loss/ipv6", single_loss, 6, false, 1000000, NULL, "local_rtx=1 dupacks_dropped=3");
	run_case("single_loss/wrap", single_loss, 4, false, 0xfffff000u, NULL, "local_rtx=1 dupacks_dropped=3");
	run_case("lost_rtx", lost_rtx, 4, false, 1000000, NULL,
		 "local_rtx=1 local_rtx_timer=1 dupacks_dropped=6 repaired_one_round=0 repaired_more_rounds=1");
	run_case("lost_rtx_sack", lost_rtx_sack, 4, true, 1000000, NULL,
		 "local_rtx=2 dupacks_dropped=3 repaired_one_round=0 repaired_more_rounds=1");
	run_case("single_loss/keep_dupacks", single_loss_kept, 4, false, 1000000, keep_dupacks,
		 "local_rtx=1 dupacks_dropped=0 dupacks_forwarded=3");
	run_case("sack_single/keep_dupacks", sack_single_kept, 4, true, 1000000, keep_dupacks,
		 "local_rtx=1 dupacks_dropped=0 dupacks_forwarded=3");
	run_case("single_loss/default_acks", single_loss, 4, false, 1000000, default_acks,
		 "local_rtx=1 dupacks_dropped=3 dupacks_forwarded=0");
	run_case("sack_single/default_acks", sack_single_shown, 4, true, 1000000, default_acks,
		 "local_rtx=1 dupacks_dropped=0 dupacks_forwarded=3 sack_hidden=0");
	run_case("two_holes_reno", two_holes_reno, 4, false, 1000000, NULL,
		 "local_rtx=2 repaired_one_round=2 repaired_more_rounds=0");
	run_case("sack_single", sack_single, 4, true, 1000000, NULL, "local_rtx=1 dupacks_dropped=3");
	run_case("gso_slice_lost", gso_slice_lost, 4, true, 1000000, NULL,
		 "local_rtx=1 cached_packets=3 dupacks_dropped=3 repaired_one_round=1");
	run_case("gso_slice_lost/ipv6", gso_slice_lost, 6, true, 1000000, NULL, "local_rtx=1");
	run_case("gso_clean", gso_clean, 4, true, 1000000, NULL, "local_rtx=0 cached_packets=2 cache_full=0");
	run_case("sack_single/ipv6", sack_single, 6, true, 1000000, NULL, "local_rtx=1");
	run_case("sack_two_holes", sack_two_holes, 4, true, 1000000, NULL, "local_rtx=2 sack_hidden=1");
	run_case("sack_two_holes/wrap", sack_two_holes, 4, true, 0xffffe000u, NULL, "local_rtx=2 sack_hidden=1");
	run_case("priority_overtakes", priority_overtakes, 4, true, 1000000, rtx_priority, "local_rtx=1");
	run_case("late_original", late_original, 4, true, 1000000, NULL,
		 "local_rtx=1 repairs_unneeded=1 repaired_one_round=1");
	run_case("late_original/wrap", late_original, 4, true, 0xffffe000u, NULL, "local_rtx=1 repairs_unneeded=1");
	run_case("reorder_held", reorder_held, 4, true, 1000000, reorder_window,
		 "local_rtx=0 reorder_held=1 reorder_saved=1");
	run_case("reorder_held/wrap", reorder_held, 4, true, 0xffffe000u, reorder_window, "local_rtx=0 reorder_saved=1");
	run_case("reorder_lost", reorder_lost, 4, true, 1000000, reorder_window,
		 "local_rtx=1 reorder_held=1 reorder_saved=0 local_rtx_timer=0 repaired_one_round=1");
	run_case("late_original_refused", late_original_refused, 4, true, 1000000, NULL,
		 "local_rtx=1 queue_drops=1 repaired_one_round=0");
	run_case("uncached_hole", uncached_hole, 4, true, 1000000, NULL,
		 "local_rtx=0 dupacks_forwarded=2 sender_rtx=1 sack_hidden=0");
	run_case("acked_rtx", acked_rtx, 4, false, 1000000, NULL, "data_dropped=3 acks_generated=2");
	run_case("tail_timer", tail_timer, 4, false, 1000000, NULL,
		 "local_rtx_timer=4 rtx_given_up=1 timer_expiries=5 dupacks_forwarded=1");
	run_case("not_dupacks", not_dupacks, 4, false, 1000000, NULL, "stale_acks_dropped=1 dupacks_dropped=0");
	run_case("egress_drop", egress_drop, 4, true, 1000000, egress_drops,
		 "egress_drop_signals=1 local_rtx=1 dupacks_forwarded=3 sender_rtx=1");
	run_case("egress_drop_before", egress_drop_before, 4, true, 1000000, egress_drops,
		 "egress_drop_signals=0 local_rtx=1 dupacks_dropped=3");
	run_case("egress_drop/off", sack_single, 4, true, 1000000, NULL, "egress_drop_signals=0 local_rtx=1");
	run_case("queue_drop", queue_drop, 4, true, 1000000, NULL,
		 "queue_drops=1 congestion_signals=1 local_rtx=0 dupacks_forwarded=2 sack_hidden=0");
	run_case("queue_drop_rtx", queue_drop_rtx, 4, false, 1000000, NULL,
		 "queue_drops=1 local_rtx=1 dupacks_dropped=1 dupacks_forwarded=1");
	run_case("queue_drop_priority_rtx", queue_drop_priority_rtx, 4, false, 1000000, rtx_priority,
		 "queue_drops=1 congestion_signals=0 local_rtx=2 dupacks_forwarded=0");
	run_case("repair_is_no_sample", repair_is_no_sample, 4, false, 1000000, NULL,
		 "local_rtx=1 local_rtx_timer=2 repaired_more_rounds=1");
	run_case("timer_then_late_original", timer_then_late_original, 4, false, 1000000, NULL,
		 "local_rtx=0 local_rtx_timer=1");
	run_case("timer_then_late_original/sack", timer_then_late_original, 4, true, 1000000, NULL,
		 "local_rtx=0 local_rtx_timer=1");
	run_case("congestion_signal", congestion_signal, 4, false, 1000000, NULL,
		 "congestion_signals=2 dupacks_forwarded=1 local_rtx=0 sender_rtx=1");
	run_case("queue_episode", queue_episode, 4, true, 1000000, NULL,
		 "congestion_signals=1 queue_drops=2 local_rtx=1 sack_trimmed=3 sender_rtx=1");
	run_case("sender_rtx_redundant", sender_rtx_redundant, 4, false, 1000000, NULL,
		 "sender_rtx_dropped=1 local_rtx=1");
	run_case("dsack_dropped", dsack_dropped, 4, true, 1000000, show_acks_dsack,
		 "dsacks_sent=2 dsacks_kept=1 sender_rtx_dropped=1 local_rtx=2 acks_generated=1");
	run_case("dsack_dropped/ipv6", dsack_dropped, 6, true, 1000000, show_acks_dsack, "dsacks_sent=2");
	run_case("dsack_dropped/default", dsack_dropped, 4, true, 1000000, default_acks, "dsacks_sent=2");
	run_case("dsack_dropped/wrap", dsack_dropped, 4, true, 0xffffe000u, show_acks_dsack, "dsacks_sent=2");
	run_case("dsack_then_forwarded", dsack_then_forwarded, 4, true, 1000000, show_acks_dsack_one_round,
		 "dsacks_sent=0 sender_rtx_dropped=1 rtx_given_up=1");
	run_case("dsack_dropped/off", dsack_off, 4, true, 1000000, show_acks, "dsacks_sent=0 sender_rtx_dropped=1");
	run_case("dsack_dropped/no_sack", sender_rtx_redundant, 4, false, 1000000, dsack_only,
		 "dsacks_sent=0 sender_rtx_dropped=1");
	/* the SACK blocks hidden from the sender (the paper's Snoop): no D-SACK block either */
	run_case("dsack_dropped/hidden", sack_single_sender_rtx, 4, true, 1000000, dsack_only,
		 "dsacks_sent=0 sender_rtx_dropped=1");
	run_case("partial_ack_held", partial_ack_held, 4, false, 1000000, NULL,
		 "partial_acks_held=1 local_rtx=1 congestion_signals=1 dupacks_forwarded=2");
	run_case("clamp", clamp, 4, false, 1000000, clamp_on, "window_clamped=2");
	run_case("clamp/400", clamp, 4, false, 1000000, clamp_on_400, "window_clamped=2");
	run_case("clamp_percent/150", clamp_percent_150, 4, false, 1000000, clamp_on, "window_clamped=4");
	run_case("clamp_percent/400", clamp_percent_400, 4, false, 1000000, clamp_on_400, "window_clamped=4");
	run_case("refused_rtx_is_no_sample", refused_rtx_is_no_sample, 4, false, 1000000, NULL,
		 "queue_drops=1 congestion_signals=1 local_rtx_timer=1");
	run_case("exposed_above_ours", exposed_above_ours, 4, true, 1000000, NULL,
		 "sack_trimmed=1 local_rtx=2 congestion_signals=1");
	run_case("repair_window", repair_window, 4, false, 1000000, clamp_on,
		 "repair_window_updates=3 dupacks_dropped=7 local_rtx=1");
	run_case("repair_window/off", repair_window_off, 4, false, 1000000, clamp_on_no_updates,
		 "repair_window_updates=0 dupacks_dropped=10 local_rtx=1");
	run_case("repair_window_sack", repair_window_sack, 4, true, 1000000, clamp_on,
		 "repair_window_updates=2 dupacks_dropped=5 local_rtx=1");
	run_case("queue_cap", queue_cap, 4, false, 1000000, clamp_on, "window_clamped=2 queue_drops=1");
	run_case("clamp_generated_ack", clamp_generated_ack, 4, false, 1000000, clamp_on, "acks_generated=1");
	run_case("clamp_generated_dsack", clamp_generated_dsack, 4, true, 1000000, clamp_dsack, "dsacks_sent=1");
	run_case("queue_overshoot", queue_overshoot, 4, false, 1000000, clamp_on,
		 "queue_drops=2 queue_cap_refusals=1 congestion_signals=1 local_rtx=1 dupacks_forwarded=1");
	run_case("thresh_two", thresh_two, 4, false, 1000000, thresh2, "local_rtx=2");
	run_case("growing_window", growing_window, 4, false, 1000000, NULL, "local_rtx_timer=1 dupacks_dropped=0");
	run_case("growing_window_sack", growing_window_sack, 4, true, 1000000, NULL, "local_rtx=1 dupacks_dropped=2");
	run_case("cache_bound", cache_bound, 4, false, 1000000, small_cache, "cache_full=1 cached_packets=2");
	return tc_report("test_snoop");
}
