// SPDX-License-Identifier: GPL-2.0
/*
 * Loss models per 802.11 attempt (see lossmodel.h).
 */
#include "lossmodel.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t holding_ns(struct lm_state *st, const struct lm_params *p, bool bad)
{
	uint64_t mean = bad ? p->bad_mean_ns : p->good_mean_ns;

	if (p->deterministic)
		return mean;
	/* 1 - U lies in (0, 1]: the logarithm is finite. */
	return (uint64_t)(-(double)mean * log(1.0 - lm_uniform(&st->rng_time)));
}

void lm_init(struct lm_state *st, const struct lm_params *p, uint64_t start_ns, uint64_t salt)
{
	memset(st, 0, sizeof(*st));
	st->started = true;
	st->start_ns = start_ns;
	/* As timeloss.bpf.c: one seed gives both directions the same
	 * timeline (one radio channel fades for both); the loss draws differ.
	 */
	st->rng_time = p->seed * 2 + 1;
	st->rng_loss = (p->seed ^ 0x9E3779B97F4A7C15ULL ^ (salt * 0xD1B54A32D192ED03ULL)) | 1;
	if (p->kind == LM_TIME && !p->deterministic)
		st->next_switch_ns = start_ns + holding_ns(st, p, false);
}

static bool deterministic_bad(const struct lm_params *p, uint64_t since_start)
{
	uint64_t period = p->good_mean_ns + p->bad_mean_ns;

	if (since_start < p->first_good_ns || !period)
		return false;
	return (since_start - p->first_good_ns) % period < p->bad_mean_ns;
}

static void advance(struct lm_state *st, const struct lm_params *p, uint64_t now)
{
	double pi_bad;
	int i;

	if (p->deterministic) {
		bool bad = deterministic_bad(p, now - st->start_ns);

		st->switches += bad != st->bad;
		st->bad = bad;
		return;
	}
	for (i = 0; i < LM_CATCHUP; i++) {
		if (now < st->next_switch_ns)
			return;
		st->bad = !st->bad;
		st->next_switch_ns += holding_ns(st, p, st->bad);
		st->switches++;
	}
	if (now >= st->next_switch_ns) {
		/* Idle for many states: the state that far away is a draw from
		 * the stationary law, and the residual holding time is again
		 * exponential.
		 */
		pi_bad = (double)p->bad_mean_ns / (double)(p->good_mean_ns + p->bad_mean_ns);
		st->bad = lm_uniform(&st->rng_time) < pi_bad;
		st->next_switch_ns = now + holding_ns(st, p, st->bad);
		st->resyncs++;
	}
}

bool lm_attempt_lost(struct lm_state *st, const struct lm_params *p, uint64_t now_ns, unsigned int frame_bytes)
{
	double prob;
	bool lost;

	switch (p->kind) {
	case LM_UNIFORM:
		return p->p > 0 && lm_uniform(&st->rng_loss) < p->p;
	case LM_GILBERT:
		/* Decide in the state found, then move (sch_netem.c). */
		prob = st->bad ? p->p_b : p->p_g;
		lost = prob > 0 && lm_uniform(&st->rng_loss) < prob;
		if (lm_uniform(&st->rng_loss) >= (st->bad ? p->p_bb : p->p_gg)) {
			st->bad = !st->bad;
			st->switches++;
		}
		return lost;
	case LM_BYTES:
		prob = 1.0 - exp(-(double)frame_bytes / p->mean_bytes);
		return lm_uniform(&st->rng_loss) < prob;
	case LM_TIME:
		if (now_ns < st->start_ns)
			return false;
		advance(st, p, now_ns);
		prob = st->bad ? p->loss_bad : p->loss_good;
		return prob >= 1.0 || (prob > 0 && lm_uniform(&st->rng_loss) < prob);
	case LM_NONE:
	default:
		return false;
	}
}

double lm_expected_loss(const struct lm_params *p, unsigned int frame_bytes)
{
	double pi_b, gb, bg;

	switch (p->kind) {
	case LM_UNIFORM:
		return p->p;
	case LM_GILBERT:
		gb = 1.0 - p->p_gg;
		bg = 1.0 - p->p_bb;
		pi_b = gb + bg > 0 ? gb / (gb + bg) : 0.0;
		return (1.0 - pi_b) * p->p_g + pi_b * p->p_b;
	case LM_BYTES:
		return 1.0 - exp(-(double)frame_bytes / p->mean_bytes);
	case LM_TIME:
		pi_b = (double)p->bad_mean_ns / (double)(p->good_mean_ns + p->bad_mean_ns);
		return (1.0 - pi_b) * p->loss_good + pi_b * p->loss_bad;
	case LM_NONE:
	default:
		return 0.0;
	}
}

/* ---------------------------------------------------------------- parsing */

struct parse_ctx {
	char *err;
	size_t errlen;
};

static int fail(struct parse_ctx *c, const char *key, const char *value, const char *problem)
{
	snprintf(c->err, c->errlen, "%s = '%s': %s", key, value, problem);
	return -1;
}

static int parse_prob(struct parse_ctx *c, const char *key, const char *text, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end == text || *end || errno || !(v >= 0.0 && v <= 1.0))
		return fail(c, key, text, "expected a probability in [0, 1]");
	*out = v;
	return 0;
}

static int parse_time_ns(struct parse_ctx *c, const char *key, const char *text, uint64_t *out)
{
	char *end;
	double v, scale;

	errno = 0;
	v = strtod(text, &end);
	if (end == text || errno || !(v > 0.0))
		return fail(c, key, text, "expected a positive time with unit us, ms or s");
	if (!strcmp(end, "us"))
		scale = 1e3;
	else if (!strcmp(end, "ms"))
		scale = 1e6;
	else if (!strcmp(end, "s"))
		scale = 1e9;
	else
		return fail(c, key, text, "missing or unknown unit (us, ms, s)");
	if (v * scale > 1e18)
		return fail(c, key, text, "too long");
	*out = (uint64_t)(v * scale + 0.5);
	if (!*out)
		return fail(c, key, text, "shorter than a nanosecond");
	return 0;
}

static int parse_u64(struct parse_ctx *c, const char *key, const char *text, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*text < '0' || *text > '9')
		return fail(c, key, text, "expected a non-negative integer");
	errno = 0;
	v = strtoull(text, &end, 10);
	if (*end || errno)
		return fail(c, key, text, "expected a non-negative integer");
	*out = v;
	return 0;
}

/* Keys each model accepts (besides "model"), comma separated. */
static const struct {
	const char *name;
	enum lm_kind kind;
	const char *keys;
} models[] = {
	{ "none", LM_NONE, "" },
	{ "uniform", LM_UNIFORM, ",p," },
	{ "gilbert-elliott", LM_GILBERT, ",p_g,p_b,p_gg,p_bb," },
	{ "exponential-bytes", LM_BYTES, ",mean_bytes," },
	{ "time-markov", LM_TIME, ",good_mean,bad_mean,holding,loss_good,loss_bad,seed,first_good," },
};

#define LM_SPEC_MAX 512

int lm_parse(const char *spec, struct lm_params *out, char *err, size_t errlen)
{
	struct parse_ctx c = { err, errlen };
	char buf[LM_SPEC_MAX], *save = NULL, *item, needle[40];
	const char *keys = NULL;
	unsigned int seen = 0, i;
	struct lm_params p = { .kind = LM_NONE, .loss_bad = 1.0, .seed = 1 };
	bool have_first = false, have_model = false;

	if (strlen(spec) >= sizeof(buf))
		return fail(&c, "loss", "...", "specification too long");
	strcpy(buf, spec);
	/* The model first: it says which keys are allowed. */
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (!eq)
			return fail(&c, item, "", "expected KEY=VALUE");
		*eq = '\0';
		if (strcmp(item, "model"))
			continue;
		for (i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
			if (!strcmp(eq + 1, models[i].name)) {
				p.kind = models[i].kind;
				keys = models[i].keys;
			}
		}
		if (!keys)
			return fail(&c, "model", eq + 1,
				    "unknown; expected none, uniform, gilbert-elliott, exponential-bytes or time-markov");
		have_model = true;
	}
	if (!have_model)
		return fail(&c, "model", "", "missing");
	strcpy(buf, spec);
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		const char *key = item, *val = eq + 1;
		int rc = 0;

		*eq = '\0';
		if (!strcmp(key, "model"))
			continue;
		if (strlen(key) + 3 > sizeof(needle))
			return fail(&c, key, val, "unknown key");
		snprintf(needle, sizeof(needle), ",%s,", key);
		if (!strstr(keys, needle))
			return fail(&c, key, val, "not a key of this model");
		if (!strcmp(key, "p")) {
			rc = parse_prob(&c, key, val, &p.p);
			seen |= 32;
		} else if (!strcmp(key, "p_g")) {
			rc = parse_prob(&c, key, val, &p.p_g);
			seen |= 1;
		} else if (!strcmp(key, "p_b")) {
			rc = parse_prob(&c, key, val, &p.p_b);
			seen |= 2;
		} else if (!strcmp(key, "p_gg")) {
			rc = parse_prob(&c, key, val, &p.p_gg);
			seen |= 4;
		} else if (!strcmp(key, "p_bb")) {
			rc = parse_prob(&c, key, val, &p.p_bb);
			seen |= 8;
		} else if (!strcmp(key, "mean_bytes")) {
			uint64_t v;

			rc = parse_u64(&c, key, val, &v);
			if (!rc && !v)
				rc = fail(&c, key, val, "must be at least 1");
			p.mean_bytes = (double)v;
			seen |= 16;
		} else if (!strcmp(key, "good_mean")) {
			rc = parse_time_ns(&c, key, val, &p.good_mean_ns);
		} else if (!strcmp(key, "bad_mean")) {
			rc = parse_time_ns(&c, key, val, &p.bad_mean_ns);
		} else if (!strcmp(key, "first_good")) {
			rc = parse_time_ns(&c, key, val, &p.first_good_ns);
			have_first = true;
		} else if (!strcmp(key, "holding")) {
			if (!strcmp(val, "deterministic"))
				p.deterministic = true;
			else if (strcmp(val, "exponential"))
				rc = fail(&c, key, val, "expected exponential or deterministic");
		} else if (!strcmp(key, "loss_good")) {
			rc = parse_prob(&c, key, val, &p.loss_good);
		} else if (!strcmp(key, "loss_bad")) {
			rc = parse_prob(&c, key, val, &p.loss_bad);
		} else if (!strcmp(key, "seed")) {
			rc = parse_u64(&c, key, val, &p.seed);
		}
		if (rc)
			return rc;
	}
	if (p.kind == LM_UNIFORM && !(seen & 32))
		return fail(&c, "p", "", "missing (the uniform model needs it)");
	if (p.kind == LM_GILBERT && seen != 15)
		return fail(&c, "p_g/p_b/p_gg/p_bb", "", "missing (the gilbert-elliott model needs all four)");
	if (p.kind == LM_BYTES && !(seen & 16))
		return fail(&c, "mean_bytes", "", "missing");
	if (p.kind == LM_TIME) {
		if (!p.good_mean_ns)
			return fail(&c, "good_mean", "", "missing");
		if (!p.bad_mean_ns)
			return fail(&c, "bad_mean", "", "missing");
		if (!have_first)
			p.first_good_ns = p.good_mean_ns;
	}
	*out = p;
	return 0;
}
