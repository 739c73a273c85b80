/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Adaptive d: pure arithmetic, no kernel state, so that it is unit-tested
 * in userspace with tables (tests/unit/test_ddack_estimator.py).
 *
 * The estimate follows a high percentile P of the hole-fill times seen at
 * the receiver, in O(1) memory: a stochastic-approximation quantile.  A
 * sample above the estimate moves it up by P units, one below moves it
 * down by (100 - P) units, so at rest P(sample > est) : P(sample < est) =
 * (100 - P) : P, i.e. the estimate sits at the P-th percentile.  The unit
 * is est / 16 (at least DDACK_EST_MIN_STEP_US), so the estimate moves in
 * relative steps: about 5.6 % up and 0.6 % down per sample for P = 90.
 *
 * d = clamp(est * margin / 100, d_min, d_max).
 */
#ifndef _DDACK_ESTIMATOR_H
#define _DDACK_ESTIMATOR_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "tests/kernel_types.h"
#endif

#define DDACK_EST_UNIT_SHIFT	4
#define DDACK_EST_MIN_STEP_US	100U
#define DDACK_EST_MAX_US	60000000U	/* one minute: beyond any d */

static inline u32 ddack_est_update(u32 est_us, u32 sample_us, u32 pct)
{
	u64 unit, step;

	if (sample_us > DDACK_EST_MAX_US)
		sample_us = DDACK_EST_MAX_US;
	if (est_us == 0)
		return sample_us;	/* the first sample is the estimate */
	if (sample_us == est_us)
		return est_us;

	unit = est_us >> DDACK_EST_UNIT_SHIFT;
	if (unit < DDACK_EST_MIN_STEP_US)
		unit = DDACK_EST_MIN_STEP_US;

	if (sample_us > est_us) {
		step = unit * pct / 100;
		/* Never overshoot the sample: one sample is not a trend. */
		if (step > (u64)(sample_us - est_us))
			step = sample_us - est_us;
		return est_us + (u32)step;
	}
	step = unit * (100 - pct) / 100;
	if (step > (u64)(est_us - sample_us))
		step = est_us - sample_us;
	return est_us - (u32)step;
}

static inline u32 ddack_est_delay(u32 est_us, u32 margin_pct, u32 min_us,
				  u32 max_us)
{
	u64 d = (u64)est_us * margin_pct / 100;

	if (d < min_us)
		d = min_us;
	if (d > max_us)
		d = max_us;
	return (u32)d;
}

#endif /* _DDACK_ESTIMATOR_H */
