/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TCP sequence-number arithmetic: every comparison is modulo 2^32, as in
 * the kernel's before()/after(), so flows that wrap are handled.
 */
#ifndef AIRTCP_SEQ_H
#define AIRTCP_SEQ_H

#include <stdbool.h>
#include <stdint.h>

static inline bool seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool seq_after(uint32_t a, uint32_t b)
{
	return seq_before(b, a);
}

static inline bool seq_leq(uint32_t a, uint32_t b)
{
	return !seq_after(a, b);
}

static inline bool seq_geq(uint32_t a, uint32_t b)
{
	return !seq_before(a, b);
}

static inline uint32_t seq_max(uint32_t a, uint32_t b)
{
	return seq_after(a, b) ? a : b;
}

static inline uint32_t seq_min(uint32_t a, uint32_t b)
{
	return seq_before(a, b) ? a : b;
}

#endif
