// SPDX-License-Identifier: GPL-2.0-only
/*
 * Snoop+: copies per local retransmission, the false round Huang and
 * Ferng describe for c >= 3 (reproduced with the copy discount off, avoided
 * with it on), and the adaptive choice of c from the loss estimate.
 */
#include "filter_snoop.h"
#include "tcase.h"

/* c = 2: every local retransmission goes out three times. */
static const struct step copies2[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	A(42, 1000, DROP, "rtx 1000x3"),
	A(43, 1000, DROP, ""),
	A(84, 4000, FWD, ""),
	A(85, 4000, DROP, ""),		/* copy 2 arrives: a duplicate, its dupack is expected */
	A(86, 4000, DROP, ""),		/* copy 3 */
	END_,
};

/*
 * The paper's setting: RTX_THRESH 3, no SACK.  With c = 3 all four copies
 * arrive; the three duplicates draw three dupacks for the new ACK 6000, and
 * blind counting retransmits 6000, which is not lost (it is in flight).
 */
static const struct step false_round_c3[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000),
	A(40, 1000, FWD, ""),
	A(42, 1000, DROP, ""), A(43, 1000, DROP, ""),
	A(44, 1000, DROP, "rtx 1000x4"),	/* third dupack */
	D(45, 6000), D(46, 7000),
	A(85, 6000, FWD, ""),		/* the first copy arrived */
	A(86, 6000, DROP, ""), A(87, 6000, DROP, ""),
	A(88, 6000, DROP, "rtx 6000x4"),	/* the false round */
	END_,
};

/* The same trace with the copies' dupacks discounted: no false round. */
static const struct step no_false_round_c3[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000),
	A(40, 1000, FWD, ""),
	A(42, 1000, DROP, ""), A(43, 1000, DROP, ""),
	A(44, 1000, DROP, "rtx 1000x4"),
	D(45, 6000), D(46, 7000),
	A(85, 6000, FWD, ""),
	A(86, 6000, DROP, ""), A(87, 6000, DROP, ""), A(88, 6000, DROP, ""),
	A(92, 8000, FWD, ""),
	END_,
};

/* c = 2 stays below RTX_THRESH 3 even without the discount, as the paper says. */
static const struct step no_false_round_c2[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000), D(4, 4000), D(5, 5000),
	A(40, 1000, FWD, ""),
	A(42, 1000, DROP, ""), A(43, 1000, DROP, ""),
	A(44, 1000, DROP, "rtx 1000x3"),
	D(45, 6000), D(46, 7000),
	A(85, 6000, FWD, ""),
	A(86, 6000, DROP, ""), A(87, 6000, DROP, ""),
	A(92, 8000, FWD, ""),
	END_,
};

/* With SACK the duplicates carry DSACK blocks: never counted, and hidden from the sender. */
static const struct step dsack_copies[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "rtx 1000x4", 1, { 2000, 3000 }),
	AS(43, 1000, DROP, false, "", 1, { 2000, 4000 }),
	A(84, 4000, FWD, ""),
	AS(85, 4000, DROP, false, "", 1, { 1000, 2000 }),	/* DSACK: a duplicate of 1000 */
	AS(86, 4000, DROP, false, "", 1, { 1000, 2000 }),
	AS(87, 4000, DROP, false, "", 1, { 1000, 2000 }),
	END_,
};

/* The same loss on a SACK flow with copies_sack = false: the repair alone, its copies withheld. */
static const struct step sack_no_copies[] = {
	D(0, 0), D(1, 1000), D(2, 2000), D(3, 3000),
	A(40, 1000, FWD, ""),
	AS(42, 1000, DROP, false, "rtx 1000", 1, { 2000, 3000 }),
	AS(43, 1000, DROP, false, "", 1, { 2000, 4000 }),
	END_,
};

static struct {
	int copies;
	uint32_t thresh;
	bool discount, copies_sack;
} knobs;

static void tweak(struct pep_config *c)
{
	c->copies = knobs.copies;
	c->rtx_thresh = knobs.thresh;
	c->discount_copy_dupacks = knobs.discount;
	c->copies_sack = knobs.copies_sack;
}

static void run_case(const char *name, const struct step *steps, bool sack, int copies, uint32_t thresh,
		     bool discount, uint64_t want_copies)
{
	struct harness h;

	h_init(&h, &filter_snoopplus, 4, sack, 1000000);
	knobs.copies = copies;
	knobs.thresh = thresh;
	knobs.discount = discount;
	knobs.copies_sack = sack && want_copies;	/* a SACK case expecting copies: the paper's setting */
	tweak(&h.cfg);
	h_handshake(&h);
	h_run(&h, name, steps);
	CHECK(h.flow->cnt.copies_sent == want_copies, "%s: copies_sent %llu, expected %llu", name,
	      (unsigned long long)h.flow->cnt.copies_sent, (unsigned long long)want_copies);
	if (sack && !want_copies)
		CHECK(h.flow->cnt.copies_withheld_sack == (uint64_t)copies, "%s: copies_withheld_sack %llu, expected %d",
		      name, (unsigned long long)h.flow->cnt.copies_withheld_sack, copies);
	h_free(&h);
}

/* The estimator: uniform loss picks c = 1 below about 3 %, 2 above; bursts push c to 3. */
static void estimator(void)
{
	static const struct {
		const char *name;
		double p;		/* uniform loss probability, or */
		int burst;		/* lose runs of this length every `every` samples */
		int every;
		uint8_t want;
	} cases[] = {
		{ "no loss", 0.0, 0, 0, 0 },
		{ "uniform 2%", 0.02, 0, 0, 1 },
		{ "uniform 5%", 0.05, 0, 0, 2 },
		{ "uniform 20%", 0.20, 0, 0, 3 },
		{ "bursts of 4 every 50", 0.0, 4, 50, 3 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct loss_estimator e = { 0 };
		uint32_t rng = 12345;
		int n;

		for (n = 0; n < 5000; n++) {
			bool lost;

			if (cases[i].burst) {
				lost = n % cases[i].every < cases[i].burst;
			} else {
				rng = rng * 1103515245u + 12345u;	/* a fixed LCG: repeatable */
				lost = (double)(rng >> 8) / (double)(1u << 24) < cases[i].p;
			}
			loss_estimator_update(&e, lost, 200, 0.001);
		}
		CHECK(e.copies == cases[i].want, "%s: chose c = %u (p %.3f, p_bb %.3f), expected %u", cases[i].name,
		      e.copies, e.p, e.p_bb, cases[i].want);
	}
}

/* Copies are free while no queue stands: RTT above its minimum by less than their sending time. */
static void copies_are_free(void)
{
	static const struct {
		const char *name;
		bool measured;
		uint64_t min_ms, last_ms, rate;	/* rate: bytes/s */
		uint8_t copies;
		bool want;
	} cases[] = {
		/* 250 kB/s, 500-byte segments: 2 ms each; c = 2 needs 6 ms */
		{ "idle hop", true, 5, 5, 250000, 2, true },
		{ "5 ms of queue", true, 5, 10, 250000, 2, true },
		{ "6 ms of queue", true, 5, 11, 250000, 2, false },
		{ "a BDP queued", true, 5, 70, 250000, 2, false },
		{ "c = 3 needs 8 ms", true, 5, 12, 250000, 3, true },
		{ "not measured yet", false, 5, 5, 250000, 2, false },
		{ "no rate yet", true, 5, 5, 0, 2, false },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct snoop_state s = { 0 };
		bool got;

		s.rtt_valid = cases[i].measured;
		s.min_rtt_ns = cases[i].min_ms * 1000000ULL;
		s.last_rtt_ns = cases[i].last_ms * 1000000ULL;
		s.rate[0] = cases[i].rate;
		s.rate_n = cases[i].rate ? 1 : 0;
		got = snoop_copies_are_free(&s, 500, cases[i].copies);
		CHECK(got == cases[i].want, "copies_are_free %s: %d, expected %d", cases[i].name, got, cases[i].want);
	}
}

int main(void)
{
	copies_are_free();
	run_case("copies2", copies2, false, 2, 1, true, 2);
	run_case("false_round_c3", false_round_c3, false, 3, 3, false, 6);
	run_case("no_false_round_c3", no_false_round_c3, false, 3, 3, true, 3);
	run_case("no_false_round_c2", no_false_round_c2, false, 2, 3, false, 2);
	run_case("dsack_copies", dsack_copies, true, 3, 1, true, 3);
	run_case("sack_no_copies", sack_no_copies, true, 3, 1, true, 0);
	estimator();
	return tc_report("test_snoopplus");
}
