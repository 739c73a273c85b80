// SPDX-License-Identifier: GPL-2.0-only
/*
 * Userspace harness for snacks_est.h (tests/unit/test_snacks_est.py):
 *
 *   s W W_ACKED T_US RTT_US T_AW_US B_PREV   sigma, then the new b_prev
 *   w RATE US                                snacks_window()
 */
#include <stdint.h>
#include <stdio.h>

typedef uint32_t u32;
typedef uint64_t u64;
#define div64_u64(a, b) ((a) / (b))

#include "../snacks_est.h"

_Static_assert(SNACKS_ONE_PACKET == 1ULL << SNACKS_RATE_SHIFT,
	       "one packet of backlog in fixed point");

int main(void)
{
	unsigned long long w, wa, t, rtt, taw, b;
	char op;

	while (scanf(" %c", &op) == 1) {
		if (op == 's' && scanf("%llu %llu %llu %llu %llu %llu",
				       &w, &wa, &t, &rtt, &taw, &b) == 6) {
			u64 bp = b, sigma = snacks_sigma(w, wa, t, rtt, taw, &bp);

			printf("%llu %llu\n", (unsigned long long)sigma,
			       (unsigned long long)bp);
		} else if (op == 'w' && scanf("%llu %llu", &w, &t) == 2) {
			printf("%llu\n", (unsigned long long)snacks_window(w, t));
		} else {
			fprintf(stderr, "bad command '%c'\n", op);
			return 2;
		}
	}
	return 0;
}
