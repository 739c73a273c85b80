// SPDX-License-Identifier: GPL-2.0
/*
 * The medium's pure parts, table-tested: airtime worked out by hand from
 * IEEE 802.11-2016 (the figures in the comments), retry-chain walks with
 * forced channel fates, the loss models against their long-run rates, the
 * loss specification parser and the netlink messages.  Prints
 * "N checks passed" and exits 0, or names each failure and exits 1.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "airtime.h"
#include "decide.h"
#include "hwsim_msg.h"
#include "lossmodel.h"

static unsigned int checks, failures;

#define CHECK(cond, ...)                                         \
	do {                                                     \
		checks++;                                        \
		if (!(cond)) {                                   \
			failures++;                              \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__);                     \
			printf("\n");                            \
		}                                                \
	} while (0)

#define US 1000ULL
#define F24 2412	/* channel 1 */
#define F5 5180		/* channel 36 */

/* ---------------------------------------------------------------- airtime */

static const struct {
	const char *what;
	uint32_t freq;
	int idx;
	uint32_t flags;
	uint32_t bytes;		/* MPDU with FCS */
	uint64_t ppdu_ns;
	uint32_t kbps;
} ppdu_cases[] = {
	/* 20 us preamble + SIGNAL, 58 symbols of 216 bits (12326 bits), 6 us signal extension */
	{ "54 Mbit/s OFDM, 1538 B", F24, 11, 0, 1538, 258 * US, 54000 },
	/* 134 bits in 2 symbols of 96 */
	{ "24 Mbit/s ACK", F24, 8, 0, 14, 34 * US, 24000 },
	/* 822 bits: 35 symbols of 24 bits, no extension at 5 GHz */
	{ "6 Mbit/s at 5 GHz, 100 B", F5, 0, 0, 100, 160 * US, 6000 },
	/* long preamble 192 us + 800 us */
	{ "1 Mbit/s DSSS, 100 B", F24, 0, 0, 100, 992 * US, 1000 },
	/* short preamble 96 us + ceil(12304 / 11) = 1119 us */
	{ "11 Mbit/s CCK short, 1538 B", F24, 3, HWSIM_RC_SHORT_PREAMBLE, 1538, 1215 * US, 11000 },
	{ "11 Mbit/s CCK long, 1538 B", F24, 3, 0, 1538, 1311 * US, 11000 },
	/* 1 Mbit/s has no short preamble */
	{ "1 Mbit/s asks short", F24, 0, HWSIM_RC_SHORT_PREAMBLE, 100, 992 * US, 1000 },
	/* 5.5 Mbit/s: ceil(8 * 100 / 5.5) = 146 us */
	{ "5.5 Mbit/s CCK short, 100 B", F24, 2, HWSIM_RC_SHORT_PREAMBLE, 100, (96 + 146) * US, 5500 },
	/* HT: 36 us preamble, 48 symbols of 260 bits, extension */
	{ "MCS7 HT20 long GI", F24, 7, HWSIM_RC_MCS, 1538, 234 * US, 65000 },
	/* 48 x 3.6 us = 172.8 us, rounded up to 176 */
	{ "MCS7 HT20 short GI", F24, 7, HWSIM_RC_MCS | HWSIM_RC_SHORT_GI, 1538, 218 * US, 72222 },
	/* two streams: 40 us preamble, 24 symbols of 520 bits */
	{ "MCS15 HT20", F24, 15, HWSIM_RC_MCS, 1538, 142 * US, 130000 },
	/* 23 symbols of 540 bits */
	{ "MCS7 HT40", F24, 7, HWSIM_RC_MCS | HWSIM_RC_40_MHZ_WIDTH, 1538, 134 * US, 135000 },
	/* MCS0: 475 symbols of 26 bits */
	{ "MCS0 HT20", F24, 0, HWSIM_RC_MCS, 1538, (36 + 1900 + 6) * US, 6500 },
};

static void test_ppdu(void)
{
	struct mac_timing t;
	struct phy_rate r;
	unsigned int i;

	for (i = 0; i < sizeof(ppdu_cases) / sizeof(ppdu_cases[0]); i++) {
		mac_timing_for(ppdu_cases[i].freq, &t);
		CHECK(!phy_rate_from_hwsim(ppdu_cases[i].freq, ppdu_cases[i].idx, ppdu_cases[i].flags, &r), "%s: rate",
		      ppdu_cases[i].what);
		CHECK(ppdu_ns(&t, &r, ppdu_cases[i].bytes) == ppdu_cases[i].ppdu_ns, "%s: %" PRIu64 " ns, want %" PRIu64,
		      ppdu_cases[i].what, ppdu_ns(&t, &r, ppdu_cases[i].bytes), ppdu_cases[i].ppdu_ns);
		CHECK(phy_rate_kbps(&r) == ppdu_cases[i].kbps, "%s: %u kbit/s, want %u", ppdu_cases[i].what,
		      phy_rate_kbps(&r), ppdu_cases[i].kbps);
	}
	/* hwsim has 12 rates at 2.4 GHz, 8 at 5 GHz; MCS up to 31 */
	CHECK(phy_rate_from_hwsim(F24, 12, 0, &r) == -1, "2.4 GHz idx 12");
	CHECK(phy_rate_from_hwsim(F5, 8, 0, &r) == -1, "5 GHz idx 8");
	CHECK(phy_rate_from_hwsim(F24, -1, 0, &r) == -1, "idx -1");
	CHECK(phy_rate_from_hwsim(F24, 32, HWSIM_RC_MCS, &r) == -1, "MCS 32");
	CHECK(!phy_rate_from_hwsim(F5, 0x17, HWSIM_RC_VHT_MCS, &r) && r.mcs == 15, "VHT 2SS MCS7 as HT MCS15");
	CHECK(phy_rate_from_hwsim(F5, 0x19, HWSIM_RC_VHT_MCS, &r) == -1, "VHT MCS9: no HT timing");
}

static void test_control_rate_and_rx_index(void)
{
	static const struct {
		int idx;
		uint32_t flags, ack_kbps;
		int rx_idx;
	} cases[] = {
		{ 11, 0, 24000, 11 },	/* 54 -> ACK at 24 */
		{ 8, 0, 24000, 8 },	/* 24 -> 24 */
		{ 7, 0, 12000, 7 },	/* 18 -> 12 */
		{ 5, 0, 6000, 5 },	/* 9 -> 6 */
		{ 3, 0, 11000, 3 },	/* 11 CCK -> 11 */
		{ 0, HWSIM_RC_MCS, 6000, 4 },	/* BPSK -> 6, received as 6 Mbit/s */
		{ 2, HWSIM_RC_MCS, 12000, 7 },	/* QPSK -> 12, as 18 */
		{ 7, HWSIM_RC_MCS, 24000, 11 },	/* 64-QAM -> 24, as 54 */
	};
	struct phy_rate r, ack;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		phy_rate_from_hwsim(F24, cases[i].idx, cases[i].flags, &r);
		ack = phy_control_rate(&r);
		CHECK(phy_rate_kbps(&ack) == cases[i].ack_kbps, "case %u: ACK at %u", i, phy_rate_kbps(&ack));
		CHECK(phy_rx_rate_index(F24, &r) == cases[i].rx_idx, "case %u: rx idx %d", i, phy_rx_rate_index(F24, &r));
	}
	phy_rate_from_hwsim(F5, 7, 0, &r);	/* 54 Mbit/s at 5 GHz is index 7 there */
	CHECK(phy_rx_rate_index(F5, &r) == 7, "5 GHz rx idx");
}

static void test_attempt(void)
{
	struct mac_timing t;
	struct phy_rate r;

	mac_timing_for(F24, &t);
	phy_rate_from_hwsim(F24, 11, 0, &r);
	/* AIFS 37 + backoff 7.5 slots 67.5 + 258 + SIFS 10 + ACK 34 = 406.5 us */
	CHECK(attempt_ns(&t, &r, 1538, 0, false, false) == 406500, "54 first: %" PRIu64,
	      attempt_ns(&t, &r, 1538, 0, false, false));
	/* CW 31: backoff 139.5 */
	CHECK(attempt_ns(&t, &r, 1538, 1, false, false) == 478500, "54 retry 1");
	/* CW capped at 1023 from retry 6 on: 4603.5 us of backoff */
	CHECK(attempt_ns(&t, &r, 1538, 6, false, false) == 4942500, "54 retry 6");
	CHECK(attempt_ns(&t, &r, 1538, 40, false, false) == 4942500, "retry 40 stays capped");
	/* no ACK: 37 + 67.5 + 258 */
	CHECK(attempt_ns(&t, &r, 1538, 0, true, false) == 362500, "54 no ack");
	/* RTS (20 B: 2 symbols, 34 us at 24) + SIFS + CTS 34 + SIFS adds 88 us */
	CHECK(attempt_ns(&t, &r, 1538, 0, false, true) == 494500, "54 with RTS/CTS: %" PRIu64,
	      attempt_ns(&t, &r, 1538, 0, false, true));
	/* IP-level ceiling of 54 Mbit/s: 1500 B each 406.5 us = 29.5 Mbit/s */
	CHECK(fabs(1500.0 * 8 / 406.5 - 29.52) < 0.01, "ceiling");
}

/* ---------------------------------------------------------------- retry walk */

static struct lm_params model(const char *spec)
{
	struct lm_params p;
	char err[256];

	if (lm_parse(spec, &p, err, sizeof(err))) {
		printf("FAIL bad spec in a test: %s: %s\n", spec, err);
		exit(1);
	}
	return p;
}

static struct frame_in chain(int idx0, int n0, int idx1, int n1, int idx2, int n2)
{
	struct frame_in in = { .freq_mhz = F24, .bytes = 1534 };

	in.rates[0] = (struct tx_rate_entry){ (int8_t)idx0, (uint8_t)n0 };
	in.rates[1] = (struct tx_rate_entry){ (int8_t)idx1, (uint8_t)n1 };
	in.rates[2] = (struct tx_rate_entry){ (int8_t)idx2, (uint8_t)n2 };
	in.rates[3] = (struct tx_rate_entry){ -1, 0 };
	return in;
}

static void check_reported(const char *what, const struct frame_fate *f, const int want[8])
{
	unsigned int i;

	for (i = 0; i < TX_MAX_RATES; i++)
		CHECK(f->reported[i].idx == want[2 * i] && f->reported[i].count == want[2 * i + 1],
		      "%s: rate %u reported (%d, %u), want (%d, %d)", what, i, f->reported[i].idx,
		      f->reported[i].count, want[2 * i], want[2 * i + 1]);
}

static void test_walk(void)
{
	struct lm_params clear = model("model=uniform,p=0"), opaque = model("model=uniform,p=1");
	struct lm_state st;
	struct frame_fate f;
	struct frame_in in;

	lm_init(&st, &clear, 0, 1);
	in = chain(11, 2, 10, 2, 4, 3);
	decide_frame(&in, 1000, 7, &st, &clear, true, &f);
	CHECK(f.delivered && f.attempts == 1 && f.attempts_lost == 0 && f.rx_rate_idx == 11, "clear: first attempt");
	CHECK(f.end_ns == 1000 + 406500 && f.airtime_ns == 406500, "clear: end %" PRIu64, f.end_ns);
	check_reported("clear", &f, (const int[]){ 11, 1, -1, 0, -1, 0, -1, 0 });

	lm_init(&st, &opaque, 0, 1);
	decide_frame(&in, 0, 0, &st, &opaque, true, &f);
	CHECK(!f.delivered && f.attempts == 7 && f.attempts_lost == 7, "opaque, no cap: the whole chain");
	check_reported("opaque", &f, (const int[]){ 11, 2, 10, 2, 4, 3, -1, 0 });

	decide_frame(&in, 0, 3, &st, &opaque, true, &f);
	CHECK(!f.delivered && f.attempts == 3, "cap 3 (two retries)");
	check_reported("cap 3", &f, (const int[]){ 11, 2, 10, 1, -1, 0, -1, 0 });

	decide_frame(&in, 0, 1, &st, &opaque, true, &f);
	CHECK(!f.delivered && f.attempts == 1, "cap 1 (no retry): IP loss");
	check_reported("cap 1", &f, (const int[]){ 11, 1, -1, 0, -1, 0, -1, 0 });

	/* Not running yet: the opaque model is not applied. */
	decide_frame(&in, 0, 7, &st, &opaque, false, &f);
	CHECK(f.delivered && f.attempts == 1, "channel not started: perfect");

	/* Nobody with that address: nobody acknowledges. */
	decide_frame(&in, 0, 7, NULL, &clear, true, &f);
	CHECK(!f.delivered && f.attempts == 7, "no receiver: every attempt fails");

	/* Group frames: one attempt, no ACK in the airtime. */
	in.no_ack = true;
	decide_frame(&in, 0, 7, &st, &opaque, true, &f);
	CHECK(!f.delivered && f.attempts == 1 && f.airtime_ns == 362500, "no-ack: one attempt");
	in.no_ack = false;

	/* A chain that starts with a rate hwsim does not have. */
	in = chain(12, 3, -1, 0, -1, 0);
	decide_frame(&in, 0, 7, &st, &clear, true, &f);
	CHECK(f.bad_chain && !f.delivered && f.attempts == 0 && f.end_ns == 0, "bad chain");
	in = chain(11, 0, 10, 2, -1, 0);
	decide_frame(&in, 0, 7, &st, &clear, true, &f);
	CHECK(f.bad_chain, "a count of 0 ends the chain");
}

/*
 * A fade of 1 ms every 2 ms after the first 1 ms: a frame that starts in
 * the fade at 1.0 ms loses attempts at 1.0, 1.4065 and 1.885 ms (bad)
 * and gets through at 2.5075 ms (good again): 406.5 + 478.5 + 622.5 us
 * before it, 910.5 us of its own.
 */
static void test_walk_through_a_fade(void)
{
	struct lm_params fade = model("model=time-markov,good_mean=1ms,bad_mean=1ms,holding=deterministic");
	struct lm_state st;
	struct frame_fate f;
	struct frame_in in = chain(11, 7, -1, 0, -1, 0);

	lm_init(&st, &fade, 0, 1);
	decide_frame(&in, 1000 * US, 7, &st, &fade, true, &f);
	CHECK(f.delivered && f.attempts == 4 && f.attempts_lost == 3, "fade: %u attempts, %u lost", f.attempts,
	      f.attempts_lost);
	CHECK(f.end_ns == 1000 * US + 406500 + 478500 + 622500 + 910500, "fade: end %" PRIu64, f.end_ns);
	check_reported("fade", &f, (const int[]){ 11, 4, -1, 0, -1, 0, -1, 0 });
	/* Two retries are not enough to outlast it. */
	lm_init(&st, &fade, 0, 1);
	decide_frame(&in, 1000 * US, 3, &st, &fade, true, &f);
	CHECK(!f.delivered && f.attempts == 3, "fade, cap 3: lost");
	/* Before first_good ends: good. */
	lm_init(&st, &fade, 0, 1);
	decide_frame(&in, 500 * US, 1, &st, &fade, true, &f);
	CHECK(f.delivered, "fade: first good period");
}

/* ---------------------------------------------------------------- loss models */

static double measured(const char *spec, unsigned int n, uint64_t spacing_ns, unsigned int bytes, uint64_t seed)
{
	struct lm_params p = model(spec);
	struct lm_state st;
	unsigned int i, lost = 0;

	p.seed = seed;
	lm_init(&st, &p, 0, 7);
	for (i = 0; i < n; i++)
		lost += lm_attempt_lost(&st, &p, (uint64_t)i * spacing_ns, bytes);
	return (double)lost / n;
}

static void test_long_run_rates(void)
{
	static const struct {
		const char *spec;
		double expected, tolerance;	/* about four standard deviations */
	} cases[] = {
		{ "model=uniform,p=0.03", 0.03, 0.0016 },
		{ "model=uniform,p=0", 0.0, 0.0 },
		{ "model=uniform,p=1", 1.0, 0.0 },
		/* Cheng/Lin: pi_B = 0.04 / 0.1, loss 0.6 * 0.001 + 0.4 * 0.005 = 0.0026 */
		{ "model=gilbert-elliott,p_g=0.001,p_b=0.005,p_gg=0.96,p_bb=0.94", 0.0026, 0.0006 },
		/* Fritchman 5 %, bursts of 2: beta 0.5, alpha 0.5 / 19 */
		{ "model=gilbert-elliott,p_g=0,p_b=1,p_gg=0.973684210526,p_bb=0.5", 0.05, 0.006 },
		/* 1534 + 4 bytes, errors 64 KiB apart: 1 - exp(-1538 / 65536) */
		{ "model=exponential-bytes,mean_bytes=65536", 0.023193, 0.0016 },
		/* Huang/Ferng: sampled every 1 ms, pi_B = 5 / 105 */
		{ "model=time-markov,good_mean=100ms,bad_mean=5ms", 0.047619, 0.01 },
		/* outage: down 300 ms every 5 s after the first 5 s: 195 s x 6 % of 200 s */
		{ "model=time-markov,good_mean=4700ms,bad_mean=300ms,holding=deterministic,first_good=5s", 0.0585,
		  0.0005 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double got = measured(cases[i].spec, 200000, 1000 * US, 1538, 1);
		struct lm_params p = model(cases[i].spec);

		CHECK(fabs(got - cases[i].expected) <= cases[i].tolerance, "%s: %.5f, want %.5f +- %.4f",
		      cases[i].spec, got, cases[i].expected, cases[i].tolerance);
		if (i != 7)
			CHECK(fabs(lm_expected_loss(&p, 1538) - cases[i].expected) < 1e-4, "%s: expected %.6f",
			      cases[i].spec, lm_expected_loss(&p, 1538));
	}
	/* Different seeds, different draws; the same seed, the same draws. */
	CHECK(measured("model=uniform,p=0.5", 1000, 1, 100, 1) != measured("model=uniform,p=0.5", 1000, 1, 100, 2),
	      "seeds differ");
	CHECK(measured("model=uniform,p=0.5", 1000, 1, 100, 3) == measured("model=uniform,p=0.5", 1000, 1, 100, 3),
	      "seed repeats");
}

static void test_gilbert_bursts(void)
{
	/* Fritchman with mean burst 4: runs of losses average 4 attempts. */
	struct lm_params p = model("model=gilbert-elliott,p_g=0,p_b=1,p_gg=0.99,p_bb=0.75");
	struct lm_state st;
	unsigned int i, runs = 0, losses = 0;
	bool prev = false;

	lm_init(&st, &p, 0, 3);
	for (i = 0; i < 400000; i++) {
		bool lost = lm_attempt_lost(&st, &p, i, 100);

		losses += lost;
		runs += lost && !prev;
		prev = lost;
	}
	CHECK(runs && fabs((double)losses / runs - 4.0) < 0.2, "mean burst %.3f", runs ? (double)losses / runs : 0);
}

static void test_time_markov_same_timeline(void)
{
	/* One seed: both directions fade together, draws differ (salt). */
	struct lm_params p = model("model=time-markov,good_mean=10ms,bad_mean=10ms,seed=9");
	struct lm_state down, up;
	unsigned int i, same = 0;

	lm_init(&down, &p, 0, 1);
	lm_init(&up, &p, 0, 2);
	for (i = 0; i < 10000; i++) {
		lm_attempt_lost(&down, &p, (uint64_t)i * 100 * US, 100);
		lm_attempt_lost(&up, &p, (uint64_t)i * 100 * US, 100);
		same += down.bad == up.bad;
	}
	CHECK(same == 10000, "same timeline: %u of 10000", same);
	/* Idle for hours: redrawn, not walked through millions of states. */
	lm_attempt_lost(&down, &p, 3600ULL * 1000000000ULL, 100);
	CHECK(down.resyncs == 1, "resync after idling");
}

static void test_parse_specs(void)
{
	static const struct {
		const char *spec;
		const char *error;	/* NULL: accepted */
	} cases[] = {
		{ "model=uniform,p=0.03", NULL },
		{ "model=none", NULL },
		{ "p=0.03,model=uniform", NULL },
		{ "model=time-markov,good_mean=100ms,bad_mean=5ms,holding=exponential,seed=4,loss_bad=0.9", NULL },
		{ "model=uniform", "p = '': missing (the uniform model needs it)" },
		{ "model=uniform,p=1.5", "p = '1.5': expected a probability in [0, 1]" },
		{ "model=uniform,p=0.1x", "p = '0.1x': expected a probability in [0, 1]" },
		{ "model=uniform,p_g=0.1", "p_g = '0.1': not a key of this model" },
		{ "model=bursty", "model = 'bursty': unknown; expected none, uniform, gilbert-elliott, "
				  "exponential-bytes or time-markov" },
		{ "p=0.1", "model = '': missing" },
		{ "model=uniform,p", "p = '': expected KEY=VALUE" },
		{ "model=gilbert-elliott,p_g=0,p_b=1,p_gg=0.9", "p_g/p_b/p_gg/p_bb = '': missing (the gilbert-elliott "
								"model needs all four)" },
		{ "model=time-markov,good_mean=100,bad_mean=5ms", "good_mean = '100': missing or unknown unit (us, ms, s)" },
		{ "model=time-markov,good_mean=100ms", "bad_mean = '': missing" },
		{ "model=time-markov,good_mean=1ms,bad_mean=1ms,holding=gamma",
		  "holding = 'gamma': expected exponential or deterministic" },
		{ "model=time-markov,good_mean=1ms,bad_mean=1ms,seed=-1", "seed = '-1': expected a non-negative integer" },
		{ "model=exponential-bytes,mean_bytes=0", "mean_bytes = '0': must be at least 1" },
	};
	struct lm_params p;
	char err[256];
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		err[0] = '\0';
		rc = lm_parse(cases[i].spec, &p, err, sizeof(err));
		if (!cases[i].error)
			CHECK(rc == 0, "%s: refused: %s", cases[i].spec, err);
		else
			CHECK(rc == -1 && !strcmp(err, cases[i].error), "%s: got '%s', want '%s'", cases[i].spec, err,
			      cases[i].error);
	}
	lm_parse("model=time-markov,good_mean=2ms,bad_mean=1ms", &p, err, sizeof(err));
	CHECK(p.first_good_ns == 2000 * US && p.loss_bad == 1.0 && p.loss_good == 0.0 && p.seed == 1, "defaults");
}

/* ---------------------------------------------------------------- messages */

#define FAMILY 0x1d

struct kernel_frame {
	bool no_transmitter, no_cookie, no_frame, no_flags, no_info, with_freq, with_info_flags;
	unsigned int frame_len, info_len;
};

/* HWSIM_CMD_FRAME as mac80211_hwsim_tx_frame_nl() builds it. */
static size_t kernel_frame(char *buf, size_t cap, const struct kernel_frame *k)
{
	static const uint8_t tx[6] = { 2, 0, 0x0a, 0x0a, 2, 1 };
	uint8_t frame[FRAME_MAX_BYTES + 8] = { 0x08, 0x02 }, info[16] = { 11, 2, 10, 2, 4, 3, 0xff, 0 };
	uint8_t info_flags[12] = { 11, 0x04, 0, 10, 0x08, 0, 4, 0, 0, 0xff, 0, 0 };
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	(void)cap;
	nlh->nlmsg_type = FAMILY;
	nlh->nlmsg_seq = 77;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = HWSIM_CMD_FRAME;
	memset(frame + 4, 0x42, 6);
	if (!k->no_transmitter)
		mnl_attr_put(nlh, HWSIM_ATTR_ADDR_TRANSMITTER, 6, tx);
	if (!k->no_frame)
		mnl_attr_put(nlh, HWSIM_ATTR_FRAME, k->frame_len, frame);
	if (!k->no_flags)
		mnl_attr_put_u32(nlh, HWSIM_ATTR_FLAGS, HWSIM_TX_CTL_REQ_TX_STATUS);
	if (k->with_freq)
		mnl_attr_put_u32(nlh, HWSIM_ATTR_FREQ, 2437);
	if (!k->no_info)
		mnl_attr_put(nlh, HWSIM_ATTR_TX_INFO, k->info_len, info);
	if (k->with_info_flags)
		mnl_attr_put(nlh, HWSIM_ATTR_TX_INFO_FLAGS, sizeof(info_flags), info_flags);
	if (!k->no_cookie)
		mnl_attr_put_u64(nlh, HWSIM_ATTR_COOKIE, 0x1122334455ULL);
	return nlh->nlmsg_len;
}

static void test_parse_messages(void)
{
	static const struct {
		const char *what;
		struct kernel_frame k;
		enum hwsim_reject want;
		bool answerable;
	} cases[] = {
		{ "a data frame", { .frame_len = 1534, .info_len = 8, .with_freq = true, .with_info_flags = true },
		  HWSIM_OK, true },
		{ "no frequency, no rate flags", { .frame_len = 100, .info_len = 8 }, HWSIM_OK, true },
		{ "an ACK-sized frame", { .frame_len = 10, .info_len = 8 }, HWSIM_OK, true },
		{ "frame shorter than its receiver address", { .frame_len = 9, .info_len = 8 },
		  HWSIM_REJECT_FRAME_LENGTH, true },
		{ "frame too long", { .frame_len = FRAME_MAX_BYTES + 1, .info_len = 8 }, HWSIM_REJECT_FRAME_LENGTH, true },
		{ "TX_INFO of 5 rates", { .frame_len = 100, .info_len = 10 }, HWSIM_REJECT_ATTR_LENGTH, false },
		{ "no transmitter", { .no_transmitter = true, .frame_len = 100, .info_len = 8 }, HWSIM_REJECT_MISSING,
		  false },
		{ "no cookie", { .no_cookie = true, .frame_len = 100, .info_len = 8 }, HWSIM_REJECT_MISSING, false },
		{ "no frame", { .no_frame = true, .info_len = 8 }, HWSIM_REJECT_MISSING, true },
		{ "no flags", { .no_flags = true, .frame_len = 100, .info_len = 8 }, HWSIM_REJECT_MISSING, true },
		{ "no rates", { .no_info = true, .frame_len = 100 }, HWSIM_REJECT_MISSING, true },
	};
	char buf[8192] __attribute__((aligned(8)));
	struct hwsim_msg msg;
	size_t len, used;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum hwsim_reject got;

		len = kernel_frame(buf, sizeof(buf), &cases[i].k);
		got = hwsim_parse(buf, len, FAMILY, &msg, &used);
		CHECK(got == cases[i].want, "%s: %s, want %s", cases[i].what, hwsim_reject_names[got],
		      hwsim_reject_names[cases[i].want]);
		CHECK(msg.has_cookie == cases[i].answerable, "%s: answerable %d", cases[i].what, msg.has_cookie);
		CHECK(used == MNL_ALIGN(len), "%s: used %zu of %zu", cases[i].what, used, len);
	}
	len = kernel_frame(buf, sizeof(buf), &cases[0].k);
	hwsim_parse(buf, len, FAMILY, &msg, &used);
	CHECK(msg.kind == HWSIM_MSG_FRAME && msg.frame.frame_len == 1534 && msg.frame.freq_mhz == 2437 &&
	      msg.frame.cookie == 0x1122334455ULL && msg.frame.flags == HWSIM_TX_CTL_REQ_TX_STATUS &&
	      msg.frame.transmitter[5] == 1 && msg.frame.frame[4] == 0x42, "fields");
	CHECK(msg.frame.rates[0].idx == 11 && msg.frame.rates[2].count == 3 && msg.frame.rates[3].idx == -1 &&
	      msg.frame.rate_flags[0] == 4 && msg.frame.rate_flags[1] == 8 && msg.frame.has_rate_flags, "rates");

	/* The length field lies: longer than the buffer, shorter than a header. */
	CHECK(hwsim_parse(buf, len - 1, FAMILY, &msg, &used) == HWSIM_REJECT_TRUNCATED, "nlmsg_len beyond buffer");
	((struct nlmsghdr *)buf)->nlmsg_len = 8;
	CHECK(hwsim_parse(buf, len, FAMILY, &msg, &used) == HWSIM_REJECT_TRUNCATED, "nlmsg_len below header");
	CHECK(hwsim_parse(buf, 3, FAMILY, &msg, &used) == HWSIM_REJECT_TRUNCATED && used == 0, "3 bytes");
	/* Headers only, no genl header. */
	((struct nlmsghdr *)buf)->nlmsg_len = 16;
	CHECK(hwsim_parse(buf, len, FAMILY, &msg, &used) == HWSIM_REJECT_TRUNCATED, "no genl header");
	/* Another family; another command. */
	len = kernel_frame(buf, sizeof(buf), &cases[1].k);
	CHECK(hwsim_parse(buf, len, FAMILY + 1, &msg, &used) == HWSIM_REJECT_FAMILY, "family");
	((struct genlmsghdr *)mnl_nlmsg_get_payload((struct nlmsghdr *)buf))->cmd = HWSIM_CMD_NEW_RADIO;
	CHECK(hwsim_parse(buf, len, FAMILY, &msg, &used) == HWSIM_REJECT_COMMAND, "command");
	/* An attribute that claims more than the message holds. */
	len = kernel_frame(buf, sizeof(buf), &cases[1].k);
	((struct nlattr *)(buf + MNL_NLMSG_HDRLEN + 4))->nla_len = 60000;
	CHECK(hwsim_parse(buf, len, FAMILY, &msg, &used) == HWSIM_REJECT_ATTRIBUTES, "attribute overrun");
}

static void test_round_trips(void)
{
	char buf[8192] __attribute__((aligned(8)));
	static const uint8_t rx[6] = { 2, 0, 0x0a, 0x0a, 2, 2 };
	static const uint8_t frame[24] = { 0x08, 0x01, 0, 0, 2, 0, 0x0a, 0x0a, 2, 1 };
	struct tx_rate_entry reported[TX_MAX_RATES] = { { 11, 2 }, { 10, 1 }, { -1, 0 }, { -1, 0 } };
	struct hwsim_frame_msg f = { .transmitter = { 2, 0, 0x0a, 0x0a, 2, 1 }, .cookie = 99,
				     .flags = HWSIM_TX_CTL_REQ_TX_STATUS, .rate_flags = { 4, 0, 0, 0 } };
	struct nlattr *tb[HWSIM_ATTR_PERM_ADDR + 1];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct nlattr *a;
	size_t len;

	len = hwsim_build_tx_info(buf, sizeof(buf), FAMILY, 5, &f, reported, true, -50);
	CHECK(len > 0 && nlh->nlmsg_type == FAMILY, "tx info built");
	memset(tb, 0, sizeof(tb));
	mnl_attr_for_each(a, nlh, MNL_ALIGN(sizeof(struct genlmsghdr)))
		if (mnl_attr_get_type(a) <= HWSIM_ATTR_PERM_ADDR)
			tb[mnl_attr_get_type(a)] = a;
	CHECK(tb[HWSIM_ATTR_FLAGS] && mnl_attr_get_u32(tb[HWSIM_ATTR_FLAGS]) ==
	      (HWSIM_TX_CTL_REQ_TX_STATUS | HWSIM_TX_STAT_ACK), "ACK flag");
	CHECK(tb[HWSIM_ATTR_COOKIE] && mnl_attr_get_u64(tb[HWSIM_ATTR_COOKIE]) == 99, "cookie back");
	CHECK(tb[HWSIM_ATTR_SIGNAL] && (int32_t)mnl_attr_get_u32(tb[HWSIM_ATTR_SIGNAL]) == -50, "signal");
	CHECK(tb[HWSIM_ATTR_TX_INFO] && !memcmp(mnl_attr_get_payload(tb[HWSIM_ATTR_TX_INFO]),
						"\x0b\x02\x0a\x01\xff\x00\xff\x00", 8), "reported rates");
	CHECK(tb[HWSIM_ATTR_ADDR_TRANSMITTER] && !memcmp(mnl_attr_get_payload(tb[HWSIM_ATTR_ADDR_TRANSMITTER]),
							   f.transmitter, 6), "transmitter");
	CHECK(!hwsim_build_tx_info(buf, 40, FAMILY, 5, &f, reported, true, -50), "too small a buffer: 0");

	len = hwsim_build_frame(buf, sizeof(buf), FAMILY, 6, rx, frame, sizeof(frame), 11, -50, 2412);
	memset(tb, 0, sizeof(tb));
	mnl_attr_for_each(a, nlh, MNL_ALIGN(sizeof(struct genlmsghdr)))
		if (mnl_attr_get_type(a) <= HWSIM_ATTR_PERM_ADDR)
			tb[mnl_attr_get_type(a)] = a;
	CHECK(len && tb[HWSIM_ATTR_FRAME] && mnl_attr_get_payload_len(tb[HWSIM_ATTR_FRAME]) == 24, "frame built");
	CHECK(tb[HWSIM_ATTR_RX_RATE] && mnl_attr_get_u32(tb[HWSIM_ATTR_RX_RATE]) == 11, "rx rate");
	CHECK(tb[HWSIM_ATTR_FREQ] && mnl_attr_get_u32(tb[HWSIM_ATTR_FREQ]) == 2412, "freq");
	CHECK(tb[HWSIM_ATTR_ADDR_RECEIVER] && !memcmp(mnl_attr_get_payload(tb[HWSIM_ATTR_ADDR_RECEIVER]), rx, 6),
	      "receiver");

	len = hwsim_build_new_radio(buf, sizeof(buf), FAMILY, 7, "airtcp-1-bs", rx);
	CHECK(len && ((struct genlmsghdr *)mnl_nlmsg_get_payload(nlh))->cmd == HWSIM_CMD_NEW_RADIO, "new radio");

	/* A family reply carries the id; anything else gives 0. */
	len = hwsim_build_getfamily(buf, sizeof(buf), 1);
	CHECK(hwsim_parse_family_reply(buf, len) == 0, "a request has no id");
	nlh->nlmsg_len = (uint32_t)len;
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, FAMILY);
	CHECK(hwsim_parse_family_reply(buf, nlh->nlmsg_len) == FAMILY, "family id");
	CHECK(hwsim_parse_family_reply(buf, nlh->nlmsg_len - 1) == 0, "truncated family reply");
}

int main(void)
{
	test_ppdu();
	test_control_rate_and_rx_index();
	test_attempt();
	test_walk();
	test_walk_through_a_fade();
	test_long_run_rates();
	test_gilbert_bursts();
	test_time_markov_same_timeline();
	test_parse_specs();
	test_parse_messages();
	test_round_trips();
	if (failures) {
		printf("%u of %u checks failed\n", failures, checks);
		return 1;
	}
	printf("%u checks passed\n", checks);
	return 0;
}
