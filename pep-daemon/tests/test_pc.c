// SPDX-License-Identifier: GPL-2.0-only
/* The Packet Controller: ACK filter (dupack_thresh) and Data filter (lastAckSent). */
#include "tcase.h"

/* dupack_thresh 6: dupacks 1-2 pass, 3-5 are filtered, 6 on pass again. */
static const struct step ack_filter[] = {
	D(0, 0), D(1, 1000), D(2, 2000),
	A(40, 1000, FWD, ""),
	A(41, 1000, FWD, ""), A(42, 1000, FWD, ""),
	A(43, 1000, DROP, ""), A(44, 1000, DROP, ""), A(45, 1000, DROP, ""),
	A(46, 1000, FWD, ""), A(47, 1000, FWD, ""),
	A(60, 3000, FWD, ""),
	A(61, 3000, FWD, ""),		/* a new run starts over */
	AW(62, 3000, 3000, FWD, ""),	/* a window update is not a dupack */
	END_,
};

/* With SACK the dupacks passed below the threshold lose their blocks; the one at it keeps them. */
static const struct step ack_filter_sack[] = {
	D(0, 0), D(1, 1000), D(2, 2000),
	A(40, 1000, FWD, ""),
	AS(41, 1000, FWD, true, "", 1, { 2000, 3000 }),
	AS(42, 1000, FWD, true, "", 1, { 2000, 4000 }),
	AS(43, 1000, DROP, false, "", 1, { 2000, 5000 }),
	AS(44, 1000, DROP, false, "", 1, { 2000, 6000 }),
	AS(45, 1000, DROP, false, "", 1, { 2000, 7000 }),
	AS(46, 1000, FWD, false, "", 1, { 2000, 8000 }),
	END_,
};

/* dupack_thresh 3 is the sender's own: the filter is transparent. */
static const struct step transparent[] = {
	D(0, 0), D(1, 1000),
	A(40, 1000, FWD, ""),
	A(41, 1000, FWD, ""), A(42, 1000, FWD, ""), A(43, 1000, FWD, ""), A(44, 1000, FWD, ""),
	END_,
};

/* Data filter: already-acknowledged retransmissions are dropped; every second one of a segment re-ACKs. */
static const struct step data_filter[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000),
	A(40, 3000, FWD, ""),
	D_(50, 0, DROP, ""),
	D_(51, 0, DROP, "ack 3000"),
	D_(52, 0, DROP, ""),
	D_(53, 0, DROP, "ack 3000"),
	D_(54, 1000, DROP, ""),		/* another segment: counting starts over */
	D_(55, 3000, FWD, ""),		/* retransmitted but not acknowledged: forward */
	D_(56, 4000, FWD, ""),		/* new */
	END_,
};

/* sack_flows = aside (the default): a SACK flow passes untouched, blocks and dupacks and all. */
static const struct step sack_aside[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	AS(41, 1000, FWD, false, "", 1, { 2000, 3000 }),
	AS(42, 1000, FWD, false, "", 1, { 2000, 4000 }),
	AS(43, 1000, FWD, false, "", 1, { 2000, 5000 }),
	AS(44, 1000, FWD, false, "", 1, { 2000, 6000 }),
	A(50, 4000, FWD, ""),
	D_(51, 0, FWD, ""),		/* even an acknowledged retransmission */
	END_,
};

/*
 * aside_losses 2: two runs reach the threshold with no reordering hidden
 * in between; from the second's dupack_thresh-th dupack on, the flow is
 * left alone (its third run's dupacks 3-5 pass).
 */
static const struct step loss_runs[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	D(7, 7000), D(8, 8000), D(9, 9000),
	A(40, 1000, FWD, ""),
	A(41, 1000, FWD, ""), A(42, 1000, FWD, ""),
	A(43, 1000, DROP, ""), A(44, 1000, DROP, ""), A(45, 1000, DROP, ""),
	A(46, 1000, FWD, ""),		/* run 1 reaches the threshold: a loss */
	A(60, 3000, FWD, ""),
	A(61, 3000, FWD, ""), A(62, 3000, FWD, ""),
	A(63, 3000, DROP, ""), A(64, 3000, DROP, ""), A(65, 3000, DROP, ""),
	A(66, 3000, FWD, ""),		/* run 2: the second loss, none hidden: aside */
	A(67, 3000, FWD, ""),
	A(80, 5000, FWD, ""),
	A(81, 5000, FWD, ""), A(82, 5000, FWD, ""), A(83, 5000, FWD, ""), A(84, 5000, FWD, ""),
	END_,
};

/*
 * A run ended by a new ACK between 3 and dupack_thresh - 1 dupacks with no
 * retransmission (reordering hidden) offsets a loss: two losses then leave
 * the flow filtered.
 */
static const struct step reordering_kept[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	D(7, 7000), D(8, 8000), D(9, 9000),
	A(40, 1000, FWD, ""),
	A(41, 1000, FWD, ""), A(42, 1000, FWD, ""), A(43, 1000, DROP, ""),
	A(44, 2000, FWD, ""),		/* the late segment arrived: reordering, hidden */
	A(45, 2000, FWD, ""), A(46, 2000, FWD, ""),
	A(47, 2000, DROP, ""), A(48, 2000, DROP, ""), A(49, 2000, DROP, ""),
	A(50, 2000, FWD, ""),		/* a loss */
	A(60, 3000, FWD, ""),
	A(61, 3000, FWD, ""), A(62, 3000, FWD, ""),
	A(63, 3000, DROP, ""), A(64, 3000, DROP, ""), A(65, 3000, DROP, ""),
	A(66, 3000, FWD, ""),		/* a second loss: the filter stays */
	A(80, 5000, FWD, ""),
	A(81, 5000, FWD, ""), A(82, 5000, FWD, ""), A(83, 5000, DROP, ""),
	END_,
};

/*
 * A run the filter keeps below the threshold and a retransmission of the
 * hole ends (the sender timed out: too few segments in flight) is a loss,
 * not reordering; with the second loss the flow is left alone.
 */
static const struct step timeout_loss[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	D(7, 7000), D(8, 8000), D(9, 9000),
	A(40, 1000, FWD, ""),
	A(41, 1000, FWD, ""), A(42, 1000, FWD, ""), A(43, 1000, DROP, ""), A(44, 1000, DROP, ""),
	D_(300, 1000, FWD, ""),		/* the sender's timeout resends the hole */
	A(340, 3000, FWD, ""),		/* a loss, not reordering */
	A(341, 3000, FWD, ""), A(342, 3000, FWD, ""),
	A(343, 3000, DROP, ""), A(344, 3000, DROP, ""), A(345, 3000, DROP, ""),
	A(346, 3000, FWD, ""),		/* the second loss: aside */
	A(347, 3000, FWD, ""),
	A(360, 5000, FWD, ""),
	A(361, 5000, FWD, ""), A(362, 5000, FWD, ""), A(363, 5000, FWD, ""),
	END_,
};

/* The same losses with aside_losses = 0: the third run is filtered as the first two. */
static const struct step loss_runs_paper[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000), D(6, 6000),
	D(7, 7000), D(8, 8000), D(9, 9000),
	A(40, 1000, FWD, ""),
	A(41, 1000, FWD, ""), A(42, 1000, FWD, ""),
	A(43, 1000, DROP, ""), A(44, 1000, DROP, ""), A(45, 1000, DROP, ""),
	A(46, 1000, FWD, ""),
	A(60, 3000, FWD, ""),
	A(61, 3000, FWD, ""), A(62, 3000, FWD, ""),
	A(63, 3000, DROP, ""), A(64, 3000, DROP, ""), A(65, 3000, DROP, ""),
	A(66, 3000, FWD, ""), A(67, 3000, FWD, ""),
	A(80, 5000, FWD, ""),
	A(81, 5000, FWD, ""), A(82, 5000, FWD, ""), A(83, 5000, DROP, ""), A(84, 5000, DROP, ""),
	A(85, 5000, DROP, ""),
	END_,
};

struct pc_knobs {
	uint32_t thresh;
	enum pep_sack_flows sack_flows;
	uint32_t aside_losses;
};

static const struct pc_knobs DEFAULTS = { 6, SACK_FLOWS_ASIDE, 2 };
static const struct pc_knobs PAPER = { 6, SACK_FLOWS_ACT, 0 };

static void run_case(const char *name, const struct step *steps, bool sack, struct pc_knobs knobs,
		     const char *counters)
{
	struct harness h;

	h_init(&h, &filter_pc, 4, sack, 1000000);
	h.cfg.dupack_thresh = knobs.thresh;
	h.cfg.sack_flows = knobs.sack_flows;
	h.cfg.aside_losses = knobs.aside_losses;
	h_handshake(&h);
	h_run(&h, name, steps);
	if (counters) {
		char want[256];

		snprintf(want, sizeof(want),
			 "dropped=%llu forwarded=%llu data_dropped=%llu acks=%llu seen=%llu aside=%llu",
			 (unsigned long long)h.flow->cnt.dupacks_dropped,
			 (unsigned long long)h.flow->cnt.dupacks_forwarded,
			 (unsigned long long)h.flow->cnt.data_dropped, (unsigned long long)h.flow->cnt.acks_generated,
			 (unsigned long long)h.flow->cnt.flows_seen,
			 (unsigned long long)h.flow->cnt.flows_stepped_aside);
		CHECK(strcmp(want, counters) == 0, "%s: counters %s, expected %s", name, want, counters);
		CHECK(h.total.flows_seen == h.flow->cnt.flows_seen &&
		      h.total.flows_stepped_aside == h.flow->cnt.flows_stepped_aside, "%s: totals", name);
	}
	/* a flow stepped aside for is passed untouched for good: the kernel may stop queueing it */
	CHECK((h.bypass_asked > 0) == (h.flow->cnt.flows_stepped_aside > 0), "%s: bypass asked for %u packets",
	      name, h.bypass_asked);
	CHECK(h.flow->cache.count == 0, "%s: the packet controller caches nothing", name);
	h_free(&h);
}

int main(void)
{
	struct pc_knobs t3 = DEFAULTS, no_aside = DEFAULTS;

	t3.thresh = 3;
	no_aside.aside_losses = 0;
	run_case("ack_filter", ack_filter, false, DEFAULTS,
		 "dropped=3 forwarded=5 data_dropped=0 acks=0 seen=1 aside=0");
	/* The paper's filter on a SACK flow: sack_flows = act. */
	run_case("ack_filter_sack", ack_filter_sack, true, PAPER,
		 "dropped=3 forwarded=3 data_dropped=0 acks=0 seen=1 aside=0");
	run_case("sack_aside", sack_aside, true, DEFAULTS,
		 "dropped=0 forwarded=0 data_dropped=0 acks=0 seen=1 aside=1");
	run_case("transparent", transparent, false, t3, "dropped=0 forwarded=4 data_dropped=0 acks=0 seen=1 aside=0");
	run_case("data_filter", data_filter, false, DEFAULTS,
		 "dropped=0 forwarded=0 data_dropped=5 acks=2 seen=1 aside=0");
	run_case("loss_runs", loss_runs, false, DEFAULTS,
		 "dropped=6 forwarded=6 data_dropped=0 acks=0 seen=1 aside=1");
	run_case("reordering_kept", reordering_kept, false, DEFAULTS,
		 "dropped=8 forwarded=10 data_dropped=0 acks=0 seen=1 aside=0");
	run_case("timeout_loss", timeout_loss, false, DEFAULTS,
		 "dropped=5 forwarded=5 data_dropped=0 acks=0 seen=1 aside=1");
	/* aside_losses = 0: the filter never leaves a flow (the paper). */
	run_case("loss_runs_paper", loss_runs_paper, false, no_aside,
		 "dropped=9 forwarded=9 data_dropped=0 acks=0 seen=1 aside=0");
	return tc_report("test_pc");
}
