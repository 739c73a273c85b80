/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * SNACK-S bandwidth estimation (Cheng & Lin §IV.C): pure arithmetic, no
 * kernel state, unit-tested in userspace (tests/unit/test_snacks_est.py).
 *
 * Rates are packets per second in fixed point (SNACKS_RATE_SHIFT bits);
 * times are microseconds; windows are packets.  Per round trip of the
 * startup phase (eqs. 1-5):
 *
 *   lambda = W / t                       expected rate (t: min RTT)
 *   b      = (RTT - t) W / RTT           backlog seen at the bottleneck
 *   q      = max(0, b - b_prev)          backlog this round added
 *   mu     = max(0, lambda - (b + q) / t)
 *   r      = (W' - 1) / t_AW             measured: ACKed packets over the
 *                                        span of their arrivals
 *   s      = W / t_W,  delta = s / r,  mu^ = r / delta = r^2 / s
 *   rho    = min(1, t_W / RTT)
 *   sigma  = rho mu + (1 - rho) mu^      and W_t = sigma t (eq. 6)
 *
 * t_W, the time the sender took to send its W packets, is not visible to
 * a congestion-control module (it sees ACKs, not transmissions); in a
 * round of ACK-clocked sending the transmissions follow the previous
 * round's ACKs, so the module passes the ACK span t_AW for it.  After a
 * loss (eq. 7): phi = L / T, packets delivered between two loss events
 * over the time between them.
 */
#ifndef _SNACKS_EST_H
#define _SNACKS_EST_H

#ifdef __KERNEL__
#include <linux/math64.h>
#include <linux/types.h>
#endif

#define SNACKS_RATE_SHIFT	8
#define SNACKS_USEC		1000000ULL
#define SNACKS_ONE_PACKET	256ULL	/* 1 << SNACKS_RATE_SHIFT: b of one packet */

/* pkts * 1e6 / us, fixed point; 0 if the interval is empty. */
static inline u64 snacks_rate(u64 pkts, u64 us)
{
	if (!us)
		return 0;
	return div64_u64((pkts * SNACKS_USEC) << SNACKS_RATE_SHIFT, us);
}

/* Packets in flight at @rate over @us (rounded down). */
static inline u64 snacks_window(u64 rate, u64 us)
{
	return div64_u64(rate * us, SNACKS_USEC) >> SNACKS_RATE_SHIFT;
}

/*
 * sigma of eq. 5 for one round: @w the window at the round's start,
 * @w_acked the packets ACKed in it (W'), @t_us the minimum RTT, @rtt_us
 * the round's RTT, @t_aw_us the span of its ACK arrivals; @b_prev the
 * backlog of the previous round (packets, fixed point), updated.
 */
static inline u64 snacks_sigma(u32 w, u32 w_acked, u32 t_us, u32 rtt_us,
			       u32 t_aw_us, u64 *b_prev)
{
	u64 lambda, b, q, mu, r, s, mu_hat, drain, rho_num, rho_den;

	if (!w || !t_us)
		return 0;
	if (rtt_us < t_us)
		rtt_us = t_us;
	lambda = snacks_rate(w, t_us);
	b = div64_u64(((u64)w << SNACKS_RATE_SHIFT) * (rtt_us - t_us), rtt_us);
	q = b > *b_prev ? b - *b_prev : 0;
	*b_prev = b;
	/* (b + q) / t as a rate: packets (fixed point) per t. */
	drain = div64_u64((b + q) * SNACKS_USEC, t_us);
	mu = lambda > drain ? lambda - drain : 0;

	if (w_acked < 2 || !t_aw_us)
		return mu;	/* no span to measure: expected only */
	r = snacks_rate(w_acked - 1, t_aw_us);
	s = snacks_rate(w, t_aw_us);
	mu_hat = s ? div64_u64(r * r, s) : 0;
	rho_num = t_aw_us < rtt_us ? t_aw_us : rtt_us;
	rho_den = rtt_us;
	return div64_u64(mu * rho_num + mu_hat * (rho_den - rho_num), rho_den);
}

#endif /* _SNACKS_EST_H */
