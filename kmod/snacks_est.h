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
 * round's ACKs, so the module passes the ACK span t_AW for it; then
 * mu^ = r^2 / s = r (W' - 1) / W.  After a loss (eqs. 7-9): phi = L / T,
 * packets delivered between two loss events over the time between them,
 * W_t = W / 2, and the window when the recovery ends max(W_t, phi t).
 *
 * Bounds: times are 64-bit microseconds (a 32-bit count wraps after 71.6
 * minutes, and a wrapped interval made phi huge); every rate is capped
 * at SNACKS_RATE_MAX, so that every product below fits in 64 bits; and
 * the window of eq. 9 is never larger than the window before the loss
 * (nor the socket's clamp): a measured delivery rate cannot exceed what
 * that window carried per round trip, so a larger phi t can only be an
 * error, and a loss must never grow a window.
 */
#ifndef _SNACKS_EST_H
#define _SNACKS_EST_H

#ifdef __KERNEL__
#include <linux/math64.h>
#include <linux/types.h>
#else
#include "tests/kernel_types.h"
#endif

#define SNACKS_RATE_SHIFT	8
#define SNACKS_USEC		1000000U
#define SNACKS_ONE_PACKET	256ULL	/* 1 << SNACKS_RATE_SHIFT: b of one packet */
/* 2^32 packets a second: beyond any link, and 2^40 in fixed point. */
#define SNACKS_RATE_MAX		(1ULL << (32 + SNACKS_RATE_SHIFT))
#define SNACKS_U64_MAX		(~0ULL)

/* floor(@a * @num / @den), @den > 0, for any @num < 2^32; saturates. */
static inline u64 snacks_mul_div(u64 a, u32 num, u32 den)
{
	u32 rem;
	u64 q = div_u64_rem(a, den, &rem), hi, lo;

	/* a = q den + rem, so a num / den = q num + rem num / den. */
	if (num && q > SNACKS_U64_MAX / num)
		return SNACKS_U64_MAX;
	hi = q * num;
	lo = div_u64((u64)rem * num, den);	/* rem num < 2^64 */
	return hi > SNACKS_U64_MAX - lo ? SNACKS_U64_MAX : hi + lo;
}

static inline u64 snacks_cap_rate(u64 rate)
{
	return rate < SNACKS_RATE_MAX ? rate : SNACKS_RATE_MAX;
}

/* Microseconds from @then to @now of one 64-bit clock (0 if backwards). */
static inline u64 snacks_elapsed_us(u64 now, u64 then)
{
	return now > then ? now - then : 0;
}

/* @pkts * 1e6 / @us, fixed point, capped; 0 if the interval is empty. */
static inline u64 snacks_rate(u32 pkts, u64 us)
{
	if (!us)
		return 0;
	/* At most 2^32 * 2^20 * 2^8 = 2^60: fits. */
	return snacks_cap_rate(div64_u64(((u64)pkts * SNACKS_USEC) <<
					 SNACKS_RATE_SHIFT, us));
}

/* Packets in flight at @rate over @us (rounded down); at most 2^44. */
static inline u64 snacks_window(u64 rate, u32 us)
{
	return snacks_mul_div(snacks_cap_rate(rate), us, SNACKS_USEC) >>
	       SNACKS_RATE_SHIFT;
}

/*
 * sigma of eq. 5 for one round: @w the window at the round's start,
 * @w_acked the packets ACKed in it (W'), @t_us the minimum RTT, @rtt_us
 * the round's RTT, @t_aw_us the span of its ACK arrivals; @b_prev the
 * backlog of the previous round (packets, fixed point), updated.
 */
static inline u64 snacks_sigma(u32 w, u32 w_acked, u32 t_us, u32 rtt_us,
			       u64 t_aw_us, u64 *b_prev)
{
	u64 lambda, b, q, mu, r, mu_hat, drain;
	u32 rho_num;

	if (!w || !t_us)
		return 0;
	if (rtt_us < t_us)
		rtt_us = t_us;
	lambda = snacks_rate(w, t_us);
	b = snacks_mul_div((u64)w << SNACKS_RATE_SHIFT, rtt_us - t_us, rtt_us);
	q = b > *b_prev ? b - *b_prev : 0;
	*b_prev = b;
	/* (b + q) / t as a rate; b + q < 2^41, times 10^6 fits. */
	drain = div64_u64((b + q) * SNACKS_USEC, t_us);
	mu = lambda > drain ? lambda - drain : 0;

	if (w_acked < 2 || !t_aw_us)
		return mu;	/* no span to measure: expected only */
	r = snacks_rate(w_acked - 1, t_aw_us);
	mu_hat = snacks_cap_rate(snacks_mul_div(r, w_acked - 1, w));
	rho_num = t_aw_us < rtt_us ? (u32)t_aw_us : rtt_us;
	return snacks_mul_div(mu, rho_num, rtt_us) +
	       snacks_mul_div(mu_hat, rtt_us - rho_num, rtt_us);
}

/* What a loss event decides (eqs. 7-9). */
struct snacks_loss {
	u64 phi;	/* eq. 7: the long-interval delivery rate */
	u32 ssthresh;	/* eq. 8: W_t = W / 2, at least 2 */
	u32 target;	/* eq. 9: the window once the recovery is over */
};

/*
 * A loss with the window at @cwnd (its clamp @clamp): @delivered packets
 * in the @elapsed_us since the previous loss event, @t_us the minimum RTT
 * (~0U: none yet).
 */
static inline struct snacks_loss snacks_on_loss(u32 cwnd, u32 clamp, u32 t_us,
						u32 delivered, u64 elapsed_us)
{
	struct snacks_loss out;
	u64 target = 0;
	u32 bound = cwnd < clamp ? cwnd : clamp;

	out.phi = snacks_rate(delivered, elapsed_us);
	out.ssthresh = cwnd >> 1 > 2 ? cwnd >> 1 : 2;
	if (t_us != ~0U)
		target = snacks_window(out.phi, t_us);
	if (target < out.ssthresh)
		target = out.ssthresh;
	out.target = target < bound ? (u32)target : bound;
	return out;
}

#endif /* _SNACKS_EST_H */
