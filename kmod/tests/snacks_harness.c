// SPDX-License-Identifier: GPL-2.0-only
/*
 * Userspace harness for snacks_est.h (tests/unit/test_snacks_est.py):
 *
 *   s W W_ACKED T_US RTT_US T_AW_US B_PREV   sigma, then the new b_prev
 *   w RATE US                                snacks_window()
 *   r PKTS US                                snacks_rate()
 *   m A NUM DEN                              snacks_mul_div()
 *   l CWND CLAMP T_US DELIVERED NOW THEN     snacks_on_loss() over
 *                                            snacks_elapsed_us(NOW, THEN):
 *                                            phi ssthresh target
 */
#include <stdio.h>

#include "../snacks_est.h"

_Static_assert(SNACKS_ONE_PACKET == 1ULL << SNACKS_RATE_SHIFT,
	       "one packet of backlog in fixed point");

int main(void)
{
	unsigned long long w, wa, t, rtt, taw, b, now, then;
	char op;

	while (scanf(" %c", &op) == 1) {
		if (op == 's' && scanf("%llu %llu %llu %llu %llu %llu",
				       &w, &wa, &t, &rtt, &taw, &b) == 6) {
			u64 bp = b, sigma = snacks_sigma(w, wa, t, rtt, taw, &bp);

			printf("%llu %llu\n", (unsigned long long)sigma,
			       (unsigned long long)bp);
		} else if (op == 'w' && scanf("%llu %llu", &w, &t) == 2) {
			printf("%llu\n", (unsigned long long)snacks_window(w, t));
		} else if (op == 'r' && scanf("%llu %llu", &w, &t) == 2) {
			printf("%llu\n", (unsigned long long)snacks_rate(w, t));
		} else if (op == 'm' && scanf("%llu %llu %llu", &w, &t, &b) == 3) {
			printf("%llu\n",
			       (unsigned long long)snacks_mul_div(w, t, b));
		} else if (op == 'l' &&
			   scanf("%llu %llu %llu %llu %llu %llu", &w, &wa, &t,
				 &b, &now, &then) == 6) {
			struct snacks_loss l =
				snacks_on_loss(w, wa, t, b,
					       snacks_elapsed_us(now, then));

			printf("%llu %u %u\n", (unsigned long long)l.phi,
			       l.ssthresh, l.target);
		} else {
			fprintf(stderr, "bad command '%c'\n", op);
			return 2;
		}
	}
	return 0;
}
