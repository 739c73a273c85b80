// SPDX-License-Identifier: GPL-2.0-only
/*
 * Userspace harness for ddack_estimator.h, driven by
 * tests/unit/test_ddack_estimator.py.  Reads commands on stdin, one per
 * line, and prints one result per line:
 *
 *   u EST SAMPLE PCT          ddack_est_update()
 *   d EST MARGIN MIN MAX      ddack_est_delay()
 *   s PCT N S1 .. SN          N updates from 0, prints every estimate
 */
#include <stdio.h>

#include "../ddack_estimator.h"

int main(void)
{
	char op;
	unsigned long long a, b, c, d, n;
	u32 est;

	while (scanf(" %c", &op) == 1) {
		if (op == 'u' && scanf("%llu %llu %llu", &a, &b, &c) == 3) {
			printf("%u\n", ddack_est_update(a, b, c));
		} else if (op == 'd' &&
			   scanf("%llu %llu %llu %llu", &a, &b, &c, &d) == 4) {
			printf("%u\n", ddack_est_delay(a, b, c, d));
		} else if (op == 's' && scanf("%llu %llu", &a, &n) == 2) {
			for (est = 0; n > 0 && scanf("%llu", &b) == 1; n--) {
				est = ddack_est_update(est, b, a);
				printf("%u\n", est);
			}
		} else {
			fprintf(stderr, "bad command '%c'\n", op);
			return 2;
		}
	}
	return 0;
}
