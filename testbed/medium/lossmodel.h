/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fate of one transmission attempt on one radio link: the loss models
 * of testbed/airtcp/lossmodels.py, applied per 802.11 attempt instead of
 * per IP packet.  Pure: no I/O, no clock; the caller passes the attempt's
 * time on the air.
 *
 *   uniform            each attempt lost with probability p
 *   gilbert-elliott    per-attempt two-state chain; the attempt's fate is
 *                      decided in the state it finds, then the chain moves
 *                      (netem's gemodel, sch_netem.c loss_gilb_ell)
 *   exponential-bytes  Vaidya99's byte errors: an attempt of L bytes is
 *                      lost with 1 - exp(-L / mean_bytes), for each frame's
 *                      own length
 *   time-markov        good/bad states with holding *times* (exponential or
 *                      deterministic), the state at the attempt's instant;
 *                      the same timeline as airtcp-timeloss (timeloss.bpf.c)
 */
#ifndef AIRTCP_LOSSMODEL_H
#define AIRTCP_LOSSMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum lm_kind {
	LM_NONE,
	LM_UNIFORM,
	LM_GILBERT,
	LM_BYTES,
	LM_TIME,
};

struct lm_params {
	enum lm_kind kind;
	double p;			/* uniform */
	double p_g, p_b, p_gg, p_bb;	/* gilbert-elliott: loss per state, P(stay) */
	double mean_bytes;		/* exponential-bytes */
	uint64_t good_mean_ns;		/* time-markov: mean holding times */
	uint64_t bad_mean_ns;
	uint64_t first_good_ns;		/* deterministic: the first good period */
	bool deterministic;
	double loss_good, loss_bad;	/* time-markov: loss per state */
	uint64_t seed;
};

/* Channels idle for more than this many states are redrawn from the
 * stationary law (as timeloss.bpf.c's TL_CATCHUP).
 */
#define LM_CATCHUP 128

struct lm_state {
	uint64_t rng_loss;	/* drives loss decisions only */
	uint64_t rng_time;	/* drives holding times only: the timeline */
	bool bad;
	bool started;
	uint64_t start_ns;
	uint64_t next_switch_ns;
	uint64_t switches;
	uint64_t resyncs;
};

/* splitmix64: small, fast, and every seed gives a good sequence. */
static inline uint64_t lm_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double lm_uniform(uint64_t *x)
{
	return (double)(lm_next(x) >> 11) * 0x1.0p-53;
}

/* Start the channel at start_ns; salt tells links with one seed apart. */
void lm_init(struct lm_state *st, const struct lm_params *p, uint64_t start_ns, uint64_t salt);

/* Is an attempt of frame_bytes bytes on the air at now_ns (>= start) lost? */
bool lm_attempt_lost(struct lm_state *st, const struct lm_params *p, uint64_t now_ns, unsigned int frame_bytes);

/* Long-run fraction of attempts lost (frame_bytes for exponential-bytes;
 * for time-markov, attempts that arrive independently of the state).
 */
double lm_expected_loss(const struct lm_params *p, unsigned int frame_bytes);

/*
 * Parse "model=uniform,p=0.03" (keys as in lossmodels.py: p; p_g, p_b,
 * p_gg, p_bb; mean_bytes; good_mean, bad_mean, holding, loss_good,
 * loss_bad, seed, first_good; "model=none").  Times take a unit (us, ms,
 * s).  On error returns -1 with a message naming the key and the value.
 */
int lm_parse(const char *spec, struct lm_params *out, char *err, size_t errlen);

#endif /* AIRTCP_LOSSMODEL_H */
