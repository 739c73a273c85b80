/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The few kernel types and helpers the modules' pure parts use, for their
 * userspace harnesses and fuzzers.  Included by those parts' headers when
 * __KERNEL__ is not defined, so a harness compiles the very same files.
 */
#ifndef _AIRTCP_TESTS_KERNEL_TYPES_H
#define _AIRTCP_TESTS_KERNEL_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#define BIT(nr) (1UL << (nr))
#define U16_MAX ((u16)~0U)

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div_u64_rem(u64 dividend, u32 divisor, u32 *remainder)
{
	*remainder = dividend % divisor;
	return dividend / divisor;
}

static inline s64 div_s64(s64 dividend, s32 divisor)
{
	return dividend / divisor;
}

#endif /* _AIRTCP_TESTS_KERNEL_TYPES_H */
