/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TCP wire arithmetic shared by the modules' pure parts (tcp_ddack's
 * option parse and state machine, the SNACK codec): sequence comparison,
 * big-endian fields at any alignment, and the one TCP option walker.  No
 * kernel state, so that it runs as it is in the userspace harnesses and
 * fuzzers of tests/.
 *
 * pep-daemon/ parses options in userspace for its own filters
 * (src/packet.c); it is a separate program and keeps its own walker.
 */
#ifndef _AIRTCP_WIRE_H
#define _AIRTCP_WIRE_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/string.h>
#include <linux/types.h>
#else
#include "tests/kernel_types.h"
#endif

/* Option kinds (RFC 9293, 7323, 2018, 2385, 5925, 8684). */
#define AIRTCP_OPT_EOL		0
#define AIRTCP_OPT_NOP		1
#define AIRTCP_OPT_MSS		2
#define AIRTCP_OPT_WSCALE	3
#define AIRTCP_OPT_SACK_PERM	4
#define AIRTCP_OPT_SACK		5
#define AIRTCP_OPT_TS		8
#define AIRTCP_OPT_MD5		19
#define AIRTCP_OPT_AO		29
#define AIRTCP_OPT_MPTCP	30

/* The most option bytes a TCP header carries (MAX_TCP_OPTION_SPACE). */
#define AIRTCP_OPT_SPACE	40

/* Sequence numbers modulo 2^32, as before() and after() in net/tcp.h. */
static inline bool airtcp_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static inline bool airtcp_after(u32 a, u32 b)
{
	return airtcp_before(b, a);
}

static inline u16 airtcp_get16(const u8 *p)
{
	return (u16)((p[0] << 8) | p[1]);
}

static inline void airtcp_put16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static inline u32 airtcp_get32(const u8 *p)
{
	return ((u32)p[0] << 24) | ((u32)p[1] << 16) | ((u32)p[2] << 8) | p[3];
}

static inline void airtcp_put32(u8 *p, u32 v)
{
	airtcp_put16(p, v >> 16);
	airtcp_put16(p + 2, v & 0xffff);
}

/* One option of a list: its kind, and where it is (length 2 or more). */
struct airtcp_opt {
	u8 kind;
	u8 off;
	u8 len;
};

/*
 * The next option of @opt[0..@optlen) (@optlen at most AIRTCP_OPT_SPACE)
 * at or after *@pos, NOPs skipped:
 * returns 1 with the option in @o and *@pos past it, 0 at the end of the
 * list (its last byte or EOL), or -1 when a length lies (a kind without
 * its length byte, a length below 2 or running past the list); the
 * callers then treat the whole list as one they do not understand.
 */
static inline int airtcp_opt_next(const u8 *opt, unsigned int optlen,
				  unsigned int *pos, struct airtcp_opt *o)
{
	unsigned int i = *pos;
	u8 len;

	while (i < optlen && opt[i] == AIRTCP_OPT_NOP)
		i++;
	if (i >= optlen || opt[i] == AIRTCP_OPT_EOL) {
		*pos = optlen;
		return 0;
	}
	if (i + 1 >= optlen)
		return -1;
	len = opt[i + 1];
	if (len < 2 || i + len > optlen)
		return -1;
	o->kind = opt[i];
	o->off = i;
	o->len = len;
	*pos = i + len;
	return 1;
}

#endif /* _AIRTCP_WIRE_H */
