/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every fuzz target checks beyond "no crash": a broken promise names
 * itself, then traps, so that libFuzzer keeps the input that broke it.
 */
#ifndef AIRTCP_FUZZ_PROMISE_H
#define AIRTCP_FUZZ_PROMISE_H

#include <stdio.h>

#define PROMISE(x)                                                                 \
	do {                                                                       \
		if (!(x)) {                                                        \
			fprintf(stderr, "%s:%d: promise broken: %s\n", __FILE__, __LINE__, #x); \
			__builtin_trap();                                          \
		}                                                                  \
	} while (0)

#endif
