// SPDX-License-Identifier: GPL-2.0-only
/*
 * The SNACK option codec (wire format: snack_codec.h).  Pure C on byte
 * arrays: linked into tcp_snack and into the userspace harness and fuzzer.
 */
#include "snack_codec.h"

/* ---------------------------------------------------------- builder */

void snack_build_init(struct snack_builder *b, u32 ack, u32 unit,
		      unsigned int max_vec)
{
	memset(b, 0, sizeof(*b));
	b->ack = ack;
	b->unit = unit;
	if (max_vec > SNACK_MAX_VEC)
		max_vec = SNACK_MAX_VEC;
	b->pic.vec_len = max_vec;	/* capacity until finish() */
	memset(b->pic.vec, 0xff, sizeof(b->pic.vec));
}

/* Mark the held blocks of run [s, e) (bytes from ack). */
static void snack_build_flush(struct snack_builder *b)
{
	u32 u = b->unit, kb, ke, k, bit;

	if (!b->have_run)
		return;
	b->have_run = 0;
	kb = b->run_start / u + (b->run_start % u ? 1 : 0);
	ke = b->run_end / u;
	if (kb >= ke)
		return;		/* no whole block in this run */
	if (!b->have_held) {
		/* Held data at the ACK is not out of order: a wrong picture. */
		if (!kb || kb > 0xffff) {
			b->full = 1;
			return;
		}
		b->have_held = 1;
		b->pic.hole_off = 0;
		b->pic.hole_len = kb;
		b->max_blocks = kb + 8 * b->pic.vec_len;
		b->last_held = kb;
	}
	if (kb < b->pic.hole_len)
		kb = b->pic.hole_len;	/* unsorted input: never below hole 1 */
	if (kb >= b->max_blocks) {
		b->full = 1;
		return;
	}
	if (ke > b->max_blocks)
		ke = b->max_blocks;
	for (k = kb; k < ke; k++) {
		bit = k - b->pic.hole_len;
		b->pic.vec[bit / 8] &= ~(0x80 >> (bit % 8));
	}
	if (ke > b->last_held)
		b->last_held = ke;
}

/*
 * Add the held range [seq, end) of the out-of-order queue.  Returns 0 to
 * go on, 1 when further ranges cannot be described (stop the walk).
 */
int snack_build_add(struct snack_builder *b, u32 seq, u32 end)
{
	u32 s, e;

	if (b->full || !b->unit)
		return 1;
	if (!airtcp_before(b->ack, end))
		return 0;	/* all below the ACK: nothing missing there */
	if (airtcp_before(seq, b->ack))
		seq = b->ack;
	s = seq - b->ack;
	e = end - b->ack;
	if (e > 0x7fffffff)
		return 1;	/* beyond any window */
	if (b->have_run && s <= b->run_end) {
		if (e > b->run_end)
			b->run_end = e;
		return 0;
	}
	snack_build_flush(b);
	if (b->full)
		return 1;
	b->have_run = 1;
	b->run_start = s;
	b->run_end = e;
	return 0;
}

/* 0 and the picture, or SNACK_E_EMPTY if no whole block is held. */
int snack_build_finish(struct snack_builder *b, struct snack_picture *pic)
{
	u32 bits;

	snack_build_flush(b);
	if (!b->have_held || !b->unit || b->unit > 0xffff)
		return SNACK_E_EMPTY;
	*pic = b->pic;
	pic->unit = b->unit;
	bits = b->last_held - pic->hole_len;
	pic->vec_len = (bits + 7) / 8;
	/* Pad bits past the last held block stay 1: "not held". */
	memset(pic->vec + pic->vec_len, 0, SNACK_MAX_VEC - pic->vec_len);
	return SNACK_OK;
}

/* ----------------------------------------------------- encode/decode */

/* Bytes the option takes, NOP padding included, for a vector of n. */
static unsigned int snack_opt_space(const struct snack_picture *pic,
				    unsigned int n)
{
	if (pic->mode == SNACK_MODE_SCPS)
		return 8;
	return (SNACK_EXP_HDR + n + 3) & ~3U;
}

/*
 * Write the option into out[0..space), NOPs first so that it ends on a
 * 4-byte boundary.  The vector is cut to what fits (blocks past it are
 * then not described, which is always sound).  Returns the bytes written
 * (a multiple of 4) or SNACK_E_NOSPACE.
 */
int snack_encode(u8 *out, unsigned int space, const struct snack_picture *pic)
{
	unsigned int n = pic->vec_len, len, pad, i;

	if (pic->mode == SNACK_MODE_SCPS) {
		if (space < 8)
			return SNACK_E_NOSPACE;
		out[0] = AIRTCP_OPT_NOP;
		out[1] = AIRTCP_OPT_NOP;
		out[2] = SNACK_KIND_SCPS;
		out[3] = SNACK_SCPS_LEN;
		airtcp_put16(out + 4, pic->hole_off);
		airtcp_put16(out + 6, pic->hole_len);
		return 8;
	}
	if (n > SNACK_MAX_VEC)
		n = SNACK_MAX_VEC;
	while (n && snack_opt_space(pic, n) > space)
		n--;
	if (snack_opt_space(pic, n) > space)
		return SNACK_E_NOSPACE;
	len = SNACK_EXP_HDR + n;
	pad = snack_opt_space(pic, n) - len;
	for (i = 0; i < pad; i++)
		out[i] = AIRTCP_OPT_NOP;
	out += pad;
	out[0] = SNACK_KIND_EXP;
	out[1] = len;
	airtcp_put16(out + 2, SNACK_EXID);
	airtcp_put16(out + 4, pic->unit);
	airtcp_put16(out + 6, pic->hole_off);
	airtcp_put16(out + 8, pic->hole_len);
	for (i = 0; i < n; i++)
		out[SNACK_EXP_HDR + i] = pic->vec[i];
	return pad + len;
}

/*
 * Decode one option: opt[0] is the kind, len its length byte, already
 * checked by the caller to lie within the header.  Fails closed: a field
 * that cannot be right rejects the whole option.
 */
int snack_decode(const u8 *opt, unsigned int len, struct snack_picture *pic)
{
	u32 blocks;

	memset(pic, 0, sizeof(*pic));
	if (len < 2 || opt[1] != len)
		return SNACK_E_MALFORMED;
	if (opt[0] == SNACK_KIND_SCPS) {
		if (len != SNACK_SCPS_LEN)
			return SNACK_E_MALFORMED;
		pic->mode = SNACK_MODE_SCPS;
		pic->hole_off = airtcp_get16(opt + 2);
		pic->hole_len = airtcp_get16(opt + 4);
		return pic->hole_len ? SNACK_OK : SNACK_E_MALFORMED;
	}
	if (opt[0] != SNACK_KIND_EXP)
		return SNACK_E_NOTOURS;
	if (len < 4 || airtcp_get16(opt + 2) != SNACK_EXID)
		return SNACK_E_NOTOURS;
	if (len < SNACK_EXP_HDR || len > SNACK_OPT_SPACE)
		return SNACK_E_MALFORMED;
	pic->mode = SNACK_MODE_EXP;
	pic->unit = airtcp_get16(opt + 4);
	pic->hole_off = airtcp_get16(opt + 6);
	pic->hole_len = airtcp_get16(opt + 8);
	pic->vec_len = len - SNACK_EXP_HDR;
	memcpy(pic->vec, opt + SNACK_EXP_HDR, pic->vec_len);
	if (!pic->unit || !pic->hole_len)
		return SNACK_E_MALFORMED;
	/* The whole picture must lie within half the sequence space. */
	blocks = (u32)pic->hole_off + pic->hole_len + 8U * pic->vec_len;
	if ((u64)blocks * pic->unit > 0x7fffffffULL)
		return SNACK_E_MALFORMED;
	return SNACK_OK;
}

/* Bit i of the vector says block (hole 1 end + i) is held. */
static int snack_held(const struct snack_picture *pic, u32 i)
{
	return !(pic->vec[i / 8] & (0x80 >> (i % 8)));
}

/*
 * Iterate over the held runs, lowest first: *bit starts at 0; returns 1
 * and the next run, or 0 at the end.  No storage: a vector of 30 bytes
 * holds up to 120 runs, too many for a kernel stack.
 */
static int snack_next_run(const struct snack_picture *pic, u32 ack, u32 *bit,
			  struct snack_run *run)
{
	u32 base = (u32)pic->hole_off + pic->hole_len;
	u32 bits = 8U * pic->vec_len, i = *bit;

	if (pic->mode != SNACK_MODE_EXP || !pic->unit)
		return 0;
	while (i < bits && !snack_held(pic, i))
		i++;
	if (i >= bits) {
		*bit = bits;
		return 0;
	}
	run->start = ack + (base + i) * pic->unit;
	while (i < bits && snack_held(pic, i))
		i++;
	run->end = ack + (base + i) * pic->unit;
	*bit = i;
	return 1;
}

/*
 * Clip a run to the send window [una, nxt]: 1 if something is left.  A
 * sender never believes a SACK for data it has not sent or that is
 * acknowledged already (Linux checks again: tcp_is_sackblock_valid()).
 */
static int snack_clip(struct snack_run *run, u32 una, u32 nxt)
{
	if (airtcp_before(run->start, una))
		run->start = una;
	if (airtcp_before(nxt, run->end))
		run->end = nxt;
	return airtcp_before(run->start, run->end);
}

/* Runs into an array, for tests: at most @max, unclipped. */
unsigned int snack_runs(const struct snack_picture *pic, u32 ack,
			struct snack_run *runs, unsigned int max)
{
	unsigned int n = 0;
	u32 bit = 0;

	while (n < max && snack_next_run(pic, ack, &bit, &runs[n]))
		n++;
	return n;
}

/* --------------------------------------------------- option lists */

/*
 * Options the rewriters may move: none of them covers the header with a
 * signature or checksum of its own.  Everything else - TCP-MD5, TCP-AO,
 * MPTCP and every kind not listed - makes the list one we leave alone.
 */
static bool snack_known_kind(u8 kind)
{
	switch (kind) {
	case AIRTCP_OPT_MSS:
	case AIRTCP_OPT_WSCALE:
	case AIRTCP_OPT_SACK_PERM:
	case AIRTCP_OPT_SACK:
	case AIRTCP_OPT_TS:
		return true;
	default:
		return false;
	}
}

/* Walk an option list.  0, or SNACK_E_MALFORMED if a length lies. */
int snack_scan(const u8 *opt, unsigned int optlen, struct snack_optinfo *info)
{
	unsigned int pos = 0;
	struct airtcp_opt o;
	int more;

	memset(info, 0, sizeof(*info));
	if (optlen > SNACK_OPT_SPACE)
		return SNACK_E_MALFORMED;
	while ((more = airtcp_opt_next(opt, optlen, &pos, &o)) > 0) {
		if (o.kind == AIRTCP_OPT_SACK) {
			if (info->sack_len || (o.len - 2) % 8 ||
			    o.len > 2 + 8 * SNACK_MAX_SACK)
				return SNACK_E_MALFORMED;
			info->sack_off = o.off;
			info->sack_len = o.len;
		} else if (o.kind == SNACK_KIND_SCPS ||
			   (o.kind == SNACK_KIND_EXP && o.len >= 4 &&
			    airtcp_get16(opt + o.off + 2) == SNACK_EXID)) {
			if (info->snack_len)
				return SNACK_E_MALFORMED;	/* two of ours */
			info->snack_off = o.off;
			info->snack_len = o.len;
		} else if (!snack_known_kind(o.kind)) {
			info->unknown = 1;
		}
	}
	return more ? SNACK_E_MALFORMED : SNACK_OK;
}

/*
 * Copy every option except SACK, ours and padding, each on a 4-byte
 * boundary (NOPs first), to out (SNACK_OUT_BUF bytes).  Returns the bytes
 * written, which may exceed SNACK_OPT_SPACE: the callers check.  The list
 * has passed snack_scan().
 */
static unsigned int snack_copy_others(const u8 *opt, unsigned int optlen,
				      const struct snack_optinfo *info, u8 *out)
{
	unsigned int pos = 0, len = 0;
	struct airtcp_opt o;

	while (airtcp_opt_next(opt, optlen, &pos, &o) > 0) {
		if ((info->sack_len && o.off == info->sack_off) ||
		    (info->snack_len && o.off == info->snack_off))
			continue;
		while ((len + o.len) % 4)
			out[len++] = AIRTCP_OPT_NOP;
		memcpy(out + len, opt + o.off, o.len);
		len += o.len;
	}
	return len;
}

/* SACK blocks in an option list (0 if none or malformed). */
unsigned int snack_sack_count(const u8 *opt, unsigned int len)
{
	struct snack_optinfo info;

	if (snack_scan(opt, len, &info) || !info.sack_len)
		return 0;
	return (info.sack_len - 2) / 8;
}

static unsigned int snack_put_sack(u8 *out, const u8 *blocks,
				   unsigned int nblocks)
{
	if (!nblocks)
		return 0;
	out[0] = AIRTCP_OPT_NOP;
	out[1] = AIRTCP_OPT_NOP;
	out[2] = AIRTCP_OPT_SACK;
	out[3] = 2 + 8 * nblocks;
	memcpy(out + 4, blocks, 8 * nblocks);
	return 4 + 8 * nblocks;
}

/*
 * Receiver: the options of a pure ACK plus the SNACK picture, laid out
 * again under @policy.  Kept as they are: every option but SACK (TS above
 * all: PAWS and the sender's RTT depend on it).  SACK blocks are kept
 * first to last (a DSACK and the most recent block come first, RFC 2018
 * and 2883), so trimming drops the oldest.  Returns the new length (a
 * multiple of 4, <= 40) or a negative snack_err: the packet then leaves
 * unchanged.
 */
int snack_rx_rewrite(const u8 *opt, unsigned int optlen,
		     const struct snack_picture *pic, unsigned int policy,
		     u8 *out)
{
	struct snack_optinfo info;
	unsigned int o, nblocks, keep, need, room;
	int ret;

	ret = snack_scan(opt, optlen, &info);
	if (ret)
		return ret;
	if (info.unknown)
		return SNACK_E_UNKNOWN;
	if (info.snack_len)
		return SNACK_E_SKIP;
	nblocks = info.sack_len ? (info.sack_len - 2) / 8 : 0;
	o = snack_copy_others(opt, optlen, &info, out);
	if (o > SNACK_OPT_SPACE)
		return SNACK_E_NOSPACE;
	need = pic->vec_len < SNACK_TRIM_MIN_VEC ? pic->vec_len :
						   SNACK_TRIM_MIN_VEC;
	keep = nblocks;
	if (policy == SNACK_SACK_REPLACE) {
		keep = 0;
	} else if (policy == SNACK_SACK_TRIM) {
		while (keep) {
			room = SNACK_OPT_SPACE - o - (4 + 8 * keep);
			if (o + 4 + 8 * keep <= SNACK_OPT_SPACE &&
			    room >= snack_opt_space(pic, need))
				break;
			keep--;
		}
	}
	if (o + (keep ? 4 + 8 * keep : 0) > SNACK_OPT_SPACE)
		return SNACK_E_NOSPACE;
	o += snack_put_sack(out + o, opt + info.sack_off + 2, keep);
	ret = snack_encode(out + o, SNACK_OPT_SPACE - o, pic);
	if (ret < 0)
		return ret;
	return o + ret;
}

/*
 * Sender: which held runs become SACK blocks, at most @max of them.  The
 * highest run first (it was sent last, so RACK marks every hole below it
 * lost at once), then the lowest (hole 1's right edge), then the others
 * in turn, starting at @rot, so that successive ACKs tell the scoreboard
 * about every run.  Returns the number chosen (indices into runs).
 */
static unsigned int snack_pick(unsigned int nruns, unsigned int max, u32 rot,
			       unsigned int *pick)
{
	unsigned int n = 0, middle, i;

	if (!nruns || !max)
		return 0;
	pick[n++] = nruns - 1;
	if (nruns > 1 && n < max)
		pick[n++] = 0;
	middle = nruns > 2 ? nruns - 2 : 0;
	for (i = 0; i < middle && n < max; i++)
		pick[n++] = 1 + (rot + i) % middle;
	return n;
}

/*
 * Does @run repeat what the ACK's own SACK blocks say?  The receiver
 * computed both from one out-of-order queue, so its most recent block is
 * often exactly the highest run, or part of it when the receiver had
 * forgotten an older block next to it (it keeps 4) or trimmed a D-SACK's
 * enclosing block.  Written right after the first block, such a run makes
 * TCP read the first block as a D-SACK (RFC 2883: block 1 within block 2,
 * tcp_check_dsack()), count a duplicate never retransmitted and, once
 * those outnumber its retransmissions, ignore the connection's real
 * D-SACKs as dubious (tcp_dsack_seen()).  A run equal to any own block
 * adds nothing; one containing the first block widens it instead.
 */
static bool snack_run_listed(const u8 *blocks, unsigned int nblocks,
			     const struct snack_run *run)
{
	unsigned int i;

	for (i = 0; i < nblocks; i++)
		if (airtcp_get32(blocks + 8 * i) == run->start &&
		    airtcp_get32(blocks + 8 * i + 4) == run->end)
			return true;
	return false;
}

static bool snack_run_covers_first(const u8 *blocks, unsigned int nblocks,
				   const struct snack_run *run)
{
	return nblocks &&
	       !airtcp_before(airtcp_get32(blocks), run->start) &&
	       !airtcp_before(run->end, airtcp_get32(blocks + 4));
}

/* A run worth a SACK block of its own: both passes below must agree. */
static bool snack_run_adds(const u8 *blocks, unsigned int nblocks,
			   const struct snack_run *run)
{
	return !snack_run_listed(blocks, nblocks, run) &&
	       !snack_run_covers_first(blocks, nblocks, run);
}

/*
 * Sender: replace our option by SACK blocks.  The ACK's own SACK blocks
 * come first (the first one widened to a run that contains it), then the
 * picked runs while they fit (with TS: 3 blocks in all), each clipped to
 * the send window [una, nxt]; runs wholly outside it or repeating an own
 * block are not counted, and *clipped says whether any run was cut.
 * Returns the new option length (a multiple of 4) or < 0 (SNACK_E_EMPTY:
 * nothing to add, leave the segment alone).
 */
int snack_tx_rewrite(const u8 *opt, unsigned int optlen,
		     const struct snack_picture *pic, u32 ack, u32 una, u32 nxt,
		     u32 rot, u8 *out, int *clipped)
{
	u8 blocks[8 * SNACK_MAX_SACK];
	unsigned int pick[SNACK_MAX_SACK];
	struct snack_optinfo info;
	struct snack_run run, first = { 0, 0 };
	unsigned int o, own, have, max, n, i, valid = 0, idx;
	bool widen = false;
	const u8 *sacks;
	u32 bit = 0;
	int ret;

	*clipped = 0;
	ret = snack_scan(opt, optlen, &info);
	if (ret)
		return ret;
	if (info.unknown)
		return SNACK_E_UNKNOWN;
	if (!info.snack_len)
		return SNACK_E_EMPTY;
	sacks = opt + info.sack_off + 2;
	own = info.sack_len ? (info.sack_len - 2) / 8 : 0;
	while (snack_next_run(pic, ack, &bit, &run)) {
		struct snack_run whole = run;
		bool inside = snack_clip(&run, una, nxt);

		if (run.start != whole.start || run.end != whole.end)
			*clipped = 1;
		if (!inside)
			continue;
		if (snack_run_adds(sacks, own, &run)) {
			valid++;
		} else if (!snack_run_listed(sacks, own, &run)) {
			first = run;	/* it contains the first block */
			widen = true;
		}
	}
	if (!valid && !widen)
		return SNACK_E_EMPTY;
	o = snack_copy_others(opt, optlen, &info, out);
	if (o + 4 + 8 > SNACK_OPT_SPACE)
		return SNACK_E_NOSPACE;
	max = (SNACK_OPT_SPACE - o - 4) / 8;
	if (max > SNACK_MAX_SACK)
		max = SNACK_MAX_SACK;
	have = own < max ? own : max;
	if (have)
		memcpy(blocks, sacks, 8 * have);
	if (widen) {
		airtcp_put32(blocks, first.start);
		airtcp_put32(blocks + 4, first.end);
	}
	n = snack_pick(valid, max - have, rot, pick);
	/* Second pass: the picked valid runs, into their slots. */
	bit = 0;
	idx = 0;
	while (snack_next_run(pic, ack, &bit, &run)) {
		if (!snack_clip(&run, una, nxt) ||
		    !snack_run_adds(sacks, own, &run))
			continue;
		for (i = 0; i < n; i++) {
			if (pick[i] != idx)
				continue;
			airtcp_put32(blocks + 8 * (have + i), run.start);
			airtcp_put32(blocks + 8 * (have + i) + 4, run.end);
		}
		idx++;
	}
	o += snack_put_sack(out + o, blocks, have + n);
	return o;
}
