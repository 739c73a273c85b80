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

static uint32_t thresh;

static void run_case(const char *name, const struct step *steps, bool sack, uint32_t t, const char *counters)
{
	struct harness h;

	h_init(&h, &filter_pc, 4, sack, 1000000);
	h.cfg.dupack_thresh = t;
	thresh = t;
	h_handshake(&h);
	h_run(&h, name, steps);
	if (counters) {
		char want[256];

		snprintf(want, sizeof(want), "dropped=%llu forwarded=%llu data_dropped=%llu acks=%llu",
			 (unsigned long long)h.flow->cnt.dupacks_dropped,
			 (unsigned long long)h.flow->cnt.dupacks_forwarded,
			 (unsigned long long)h.flow->cnt.data_dropped, (unsigned long long)h.flow->cnt.acks_generated);
		CHECK(strcmp(want, counters) == 0, "%s: counters %s, expected %s", name, want, counters);
	}
	CHECK(h.flow->cache.count == 0, "%s: the packet controller caches nothing", name);
	h_free(&h);
}

int main(void)
{
	run_case("ack_filter", ack_filter, false, 6, "dropped=3 forwarded=5 data_dropped=0 acks=0");
	run_case("ack_filter_sack", ack_filter_sack, true, 6, "dropped=3 forwarded=3 data_dropped=0 acks=0");
	run_case("transparent", transparent, false, 3, "dropped=0 forwarded=4 data_dropped=0 acks=0");
	run_case("data_filter", data_filter, false, 6, "dropped=0 forwarded=0 data_dropped=5 acks=2");
	(void)thresh;
	return tc_report("test_pc");
}
