/* SPDX-License-Identifier: GPL-2.0-only */
/* CHECK and the one-line summary shared by every C unit test (pepd's and arqd's). */
#ifndef AIRTCP_CHECK_H
#define AIRTCP_CHECK_H

#include <stdio.h>

static int tc_failures;
static int tc_checks;

#define CHECK(cond, ...)                                                           \
	do {                                                                       \
		tc_checks++;                                                       \
		if (!(cond)) {                                                     \
			tc_failures++;                                             \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                              \
			fputc('\n', stderr);                                       \
		}                                                                  \
	} while (0)

static inline int tc_report(const char *name)
{
	if (tc_failures) {
		fprintf(stderr, "%s: %d of %d checks FAILED\n", name, tc_failures, tc_checks);
		return 1;
	}
	printf("%s: %d checks passed\n", name, tc_checks);
	return 0;
}

#endif
