// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for snack_codec.c (clang -fsanitize=fuzzer,address,
 * undefined; see tests/unit/test_snack_codec.py).  The first input byte
 * picks what the rest is:
 *
 *   0: an option list the sender receives: scan, decode, runs, rewrite;
 *   1: an option list the receiver sends plus held ranges: rewrite;
 *   2: held ranges: build, encode, decode, and the round trip must hold.
 *
 * Every output is checked: at most 40 bytes, a multiple of 4, and a list
 * that snack_scan() accepts; SACK blocks written by the sender must lie
 * inside the runs the picture reported.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../snack_codec.h"

#define CHECK(x) do { if (!(x)) abort(); } while (0)

static u32 take32(const u8 **p, size_t *n)
{
	u32 v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		v <<= 8;
		if (*n) {
			v |= **p;
			(*p)++;
			(*n)--;
		}
	}
	return v;
}

static void check_list(const u8 *out, int len)
{
	struct snack_optinfo info;

	if (len < 0)
		return;
	CHECK(len <= SNACK_OPT_SPACE && len % 4 == 0);
	CHECK(snack_scan(out, len, &info) == SNACK_OK);
}

/* New SACK blocks (after the ACK's own) lie within [una, nxt]. */
static void check_blocks(const u8 *out, int len,
			 const struct snack_optinfo *orig, const u8 *opt,
			 u32 una, u32 nxt)
{
	struct snack_optinfo info;
	unsigned int have = orig->sack_len ? (orig->sack_len - 2) / 8 : 0;
	unsigned int i, n;

	CHECK(snack_scan(out, len, &info) == SNACK_OK);
	CHECK(info.sack_len && !info.snack_len);
	n = (info.sack_len - 2) / 8;
	for (i = 0; i < n; i++) {
		const u8 *b = out + info.sack_off + 2 + 8 * i;
		u32 s = airtcp_get32(b), e = airtcp_get32(b + 4);

		if (i < have) {
			CHECK(!memcmp(b, opt + orig->sack_off + 2 + 8 * i, 8));
			continue;
		}
		CHECK(!airtcp_before(s, una) && !airtcp_before(nxt, e));
		CHECK(airtcp_before(s, e));
	}
}

static void build(const u8 **p, size_t *n, struct snack_picture *pic,
		  int *ok, u32 *ack_out)
{
	struct snack_builder b;
	u32 ack = take32(p, n), unit = take32(p, n) % 70000;
	u32 maxvec = take32(p, n) % 40, seq = ack;

	snack_build_init(&b, ack, unit, maxvec);
	while (*n >= 4) {
		u32 gap = take32(p, n);
		u32 s = seq + (gap & 0xffff), e = s + (gap >> 16);

		seq = e;
		if (snack_build_add(&b, s, e))
			break;
	}
	*ok = snack_build_finish(&b, pic) == SNACK_OK;
	*ack_out = ack;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct snack_run runs[SNACK_MAX_RUNS];
	struct snack_picture pic, back;
	struct snack_optinfo info;
	u8 out[SNACK_OUT_BUF], opt[SNACK_OPT_SPACE];
	unsigned int nruns, i, j, optlen;
	u32 ack, una, nxt;
	int ret, ok, clipped;

	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		data++;
		size--;
		ack = take32(&data, &size);
		optlen = size > SNACK_OPT_SPACE ? SNACK_OPT_SPACE : size;
		memcpy(opt, data, optlen);
		if (snack_scan(opt, optlen, &info) || !info.snack_len)
			return 0;
		if (snack_decode(opt + info.snack_off, info.snack_len, &pic))
			return 0;
		nruns = snack_runs(&pic, ack, runs, SNACK_MAX_RUNS);
		for (i = 0; i < nruns; i++)
			CHECK(airtcp_before(runs[i].start, runs[i].end));
		una = ack - (pic.unit & 0xff);
		nxt = ack + (u32)pic.unit * pic.vec_len * 4;
		ret = snack_tx_rewrite(opt, optlen, &pic, ack, una, nxt,
				       ack, out, &clipped);
		check_list(out, ret);
		if (ret > 0)
			check_blocks(out, ret, &info, opt, una, nxt);
		break;
	case 1:
		data++;
		size--;
		optlen = size ? data[0] % (SNACK_OPT_SPACE + 1) : 0;
		if (size < 1 + optlen)
			return 0;
		memcpy(opt, data + 1, optlen);
		data += 1 + optlen;
		size -= 1 + optlen;
		build(&data, &size, &pic, &ok, &ack);
		if (!ok)
			return 0;
		pic.mode = ack & 1;
		ret = snack_rx_rewrite(opt, optlen, &pic, (ack >> 1) % 3, out);
		check_list(out, ret);
		break;
	default:
		data++;
		size--;
		build(&data, &size, &pic, &ok, &ack);
		if (!ok)
			return 0;
		pic.mode = SNACK_MODE_EXP;
		ret = snack_encode(out, SNACK_OPT_SPACE, &pic);
		CHECK(ret > 0 && ret % 4 == 0);
		for (i = 0; out[i] == AIRTCP_OPT_NOP; i++)
			;
		if (pic.unit * ((u64)pic.hole_len + 8 * pic.vec_len) >
		    0x7fffffffULL) {
			CHECK(snack_decode(out + i, ret - i, &back) ==
			      SNACK_E_MALFORMED);
			break;
		}
		CHECK(snack_decode(out + i, ret - i, &back) == SNACK_OK);
		CHECK(back.unit == pic.unit && back.hole_len == pic.hole_len &&
		      back.vec_len == pic.vec_len);
		CHECK(!memcmp(back.vec, pic.vec, pic.vec_len));
		/* Every reported run lies above hole 1 and below the end. */
		nruns = snack_runs(&back, ack, runs, SNACK_MAX_RUNS);
		for (j = 0; j < nruns; j++) {
			CHECK(runs[j].start - ack >= (u32)pic.hole_len * pic.unit);
			CHECK(airtcp_before(runs[j].start, runs[j].end));
		}
		break;
	}
	return 0;
}
