// SPDX-License-Identifier: GPL-2.0-only
/*
 * Userspace harness for ddack_dda.c, driven by
 * tests/unit/test_ddack_dda.py.  One flow; it keeps the count of held
 * ACKs as ddack_flow.c keeps its queue.  One command per line on stdin,
 * one line of result each; times in microseconds:
 *
 *   c DELAY THRESHOLD MAX_HELD SACK_MODE ADAPTIVE PACE   the knobs
 *   a ASIDE_UNFILLED          the knob aside_unfilled (0 until set)
 *   f ACK WIN                 the flow is created by this pure ACK
 *   F ACK WIN FLAGS           the same, FLAGS k if SACK was negotiated
 *                             (or "-"); prints the events: aside-sack or
 *                             "-"
 *   s NOW ACK WIN FLAGS RTT   a segment; FLAGS any of p (pure ACK),
 *                             e (FIN or RST), s (SACK), h (SACK block
 *                             above the ACK), n (new socket), k (SACK
 *                             negotiated), f (the namespace holds all it
 *                             may), or "-"
 *   t NOW                     the timer fires
 *   q                         the state
 *   x NOW LAST_SEEN TIMEOUT   may the garbage collector remove the flow?
 *
 * A segment prints "pass" or "hold", then what else was decided
 * (strip, discard, flush, evict, arm@T, cancel, the events dupack,
 * episode, immediate, limited, filled, sample=US, ignored, aside-sack,
 * aside-unfilled) and held=N;
 * the timer prints send=N, first, capped, rearm@T and held=N; q the
 * state's name; x "expired" or "kept".
 */
#include <stdio.h>
#include <string.h>

#include "../ddack_dda.h"

static const char *const state_names[DDACK_NR_STATES] = {
	[DDACK_IDLE] = "IDLE",
	[DDACK_IMMEDIATE] = "IMMEDIATE",
	[DDACK_HOLDING] = "HOLDING",
	[DDACK_RELEASED] = "RELEASED",
	[DDACK_CLOSED] = "CLOSED",
	[DDACK_ASIDE] = "ASIDE",
};

static struct ddack_dda dda;
static struct ddack_params params;
static u32 held, pace_us;

static void segment(long long now, unsigned int ack, unsigned int win,
		    const char *flags, unsigned int rtt)
{
	struct ddack_seg seg = {
		.now = now * 1000,
		.ack = ack,
		.win = win,
		.pure_ack = strchr(flags, 'p'),
		.ends_flow = strchr(flags, 'e'),
		.has_sack = strchr(flags, 's'),
		.sack_hole = strchr(flags, 'h'),
		.new_socket = strchr(flags, 'n'),
		.sack_ok = strchr(flags, 'k'),
		.may_hold = !strchr(flags, 'f'),
		.held = held,
		.rcv_rtt_us = rtt,
	};
	struct ddack_decision d = ddack_dda_segment(&dda, &params, &seg);

	printf("%s", d.verdict == DDACK_HOLD ? "hold" : "pass");
	if (d.strip)
		printf(" strip");
	if (d.drop != DDACK_KEEP_HELD) {
		printf(d.drop == DDACK_DISCARD_HELD ? " discard" : " flush");
		held = 0;
	}
	if (d.verdict == DDACK_HOLD)
		held++;
	if (d.evict) {
		printf(" evict");
		held--;
	}
	if (d.arm)
		printf(" arm@%lld", (long long)(dda.release_at / 1000));
	if (d.cancel)
		printf(" cancel");
	if (d.events & DDACK_EV_DUPACK)
		printf(" dupack");
	if (d.events & DDACK_EV_EPISODE)
		printf(" episode");
	if (d.events & DDACK_EV_IMMEDIATE)
		printf(" immediate");
	if (d.events & DDACK_EV_LIMITED)
		printf(" limited");
	if (d.events & DDACK_EV_FILLED)
		printf(" filled");
	if (d.events & DDACK_EV_ADAPT_SAMPLE)
		printf(" sample=%u", d.fill_us);
	if (d.events & DDACK_EV_ADAPT_IGNORED)
		printf(" ignored");
	if (d.events & DDACK_EV_ASIDE_SACK)
		printf(" aside-sack");
	if (d.events & DDACK_EV_ASIDE_UNFILLED)
		printf(" aside-unfilled");
	printf(" held=%u\n", held);
}

/* The flow's first pure ACK: the events of its start. */
static u32 start(unsigned int ack, unsigned int win, const char *flags)
{
	struct ddack_seg seg = {
		.ack = ack,
		.win = win,
		.pure_ack = true,
		.sack_ok = strchr(flags, 'k'),
	};

	held = 0;
	return ddack_dda_start(&dda, &params, &seg);
}

static void timer(long long now)
{
	struct ddack_release r = ddack_dda_timer(&dda, now * 1000, held,
						 pace_us);

	held -= r.send;
	printf("send=%u", r.send);
	if (r.first)
		printf(" first");
	if (r.capped)
		printf(" capped");
	if (r.rearm)
		printf(" rearm@%lld", (long long)(dda.release_at / 1000));
	printf(" held=%u\n", held);
}

int main(void)
{
	unsigned int a, b, c, d, e, f;
	long long now;
	char op, flags[16];

	while (scanf(" %c", &op) == 1) {
		if (op == 'c' &&
		    scanf("%u %u %u %u %u %u", &a, &b, &c, &d, &e, &f) == 6) {
			params = (struct ddack_params){
				.delay_us = a, .threshold = b, .max_held = c,
				.sack_mode = d, .adaptive = e,
			};
			pace_us = f;
		} else if (op == 'a' && scanf("%u", &a) == 1) {
			params.aside_unfilled = a;
		} else if (op == 'f' && scanf("%u %u", &a, &b) == 2) {
			start(a, b, "-");
		} else if (op == 'F' && scanf("%u %u %15s", &a, &b, flags) == 3) {
			e = start(a, b, flags);
			printf("%s\n", e & DDACK_EV_ASIDE_SACK ? "aside-sack" : "-");
		} else if (op == 's' && scanf("%lld %u %u %15s %u", &now, &a, &b,
					      flags, &c) == 5) {
			segment(now, a, b, flags, c);
		} else if (op == 't' && scanf("%lld", &now) == 1) {
			timer(now);
		} else if (op == 'q') {
			printf("%s\n", dda.state < DDACK_NR_STATES ?
			       state_names[dda.state] : "?");
		} else if (op == 'x' && scanf("%lld %u %u", &now, &a, &b) == 3) {
			printf("%s\n", ddack_dda_expired(&dda, now * 1000,
							 (s64)a * 1000,
							 (s64)b * 1000, held) ?
			       "expired" : "kept");
		} else {
			fprintf(stderr, "bad command '%c'\n", op);
			return 2;
		}
	}
	return 0;
}
