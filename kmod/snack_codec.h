/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * SNACK option codec: pure arithmetic on byte arrays, no kernel state.
 * snack_codec.c is linked into tcp_snack and, unchanged, into the
 * userspace harness and fuzzer (tests/snack_harness.c, snack_fuzz.c), so
 * the exact code the module runs is table-tested, round-tripped and fuzzed.
 *
 * Wire format, default (RFC 6994 shared experimental option):
 *
 *   254 | len | ExID (2) | unit (2) | hole1 off (2) | hole1 len (2) | vec
 *
 * len = 10 + N, N = 0..30 bytes of bit-vector.  All fields big-endian.
 * Blocks are counted from the ACK number in units of "unit" bytes (the
 * receiver's estimate of the sender's MSS, carried because the sender
 * cannot know it): block k = [ack + k * unit, ack + (k + 1) * unit).
 * Hole 1 is blocks [off, off + len).  Bit i of the vector (MSB of byte 0
 * first) stands for block off + len + i: 1 = missing, 0 = held by the
 * receiver.  A 0 is a positive statement (the whole block is held); a 1
 * only says "not held", which is also what pad bits past the receiver's
 * highest held block say.  Blocks past the vector are not described.
 * The receiver rounds in its own disfavour: a block partly held is
 * missing.
 *
 * SCPS-TP form (IANA kind 21, short form, for Wireshark and SCPS tools):
 *
 *   21 | 6 | hole1 off (2) | hole1 len (2)
 *
 * in units of the MSS the peer guesses; it carries no vector and no unit,
 * so it says nothing a sender could act on safely: the sender side of
 * tcp_snack ignores it (counted).
 */
#ifndef _SNACK_CODEC_H
#define _SNACK_CODEC_H

#include "airtcp_wire.h"

#define SNACK_KIND_EXP		254
#define SNACK_KIND_SCPS		21
/*
 * Experiment identifier: "SN".  Not (yet) registered in IANA's FCFS
 * "TCP Experimental Option Experiment Identifiers" registry; it differs
 * from the ones Linux knows (Fast Open 0xF989, SMC 0xE2D4C3D9) and from
 * the BPF selftests' 0xEB9F.
 */
#define SNACK_EXID		0x534e
#define SNACK_EXP_HDR		10
#define SNACK_SCPS_LEN		6
#define SNACK_OPT_SPACE		AIRTCP_OPT_SPACE
#define SNACK_MAX_VEC		(SNACK_OPT_SPACE - SNACK_EXP_HDR)
#define SNACK_MAX_SACK		4	/* blocks in one SACK option */
#define SNACK_MAX_RUNS		(SNACK_MAX_VEC * 8 / 2 + 1)
/* Rewriters' output buffers: realigning odd-length options may overshoot. */
#define SNACK_OUT_BUF		128

enum snack_mode {
	SNACK_MODE_EXP = 0,	/* kind 254 + ExID, with unit and vector */
	SNACK_MODE_SCPS = 1,	/* kind 21, 6 bytes, hole 1 only */
};

/* What the receiver gives up when the 40 bytes of options are short. */
enum snack_sack_policy {
	SNACK_SACK_KEEP = 0,	/* SACK blocks stay; SNACK only if it fits */
	SNACK_SACK_TRIM = 1,	/* drop trailing SACK blocks for the vector */
	SNACK_SACK_REPLACE = 2,	/* no SACK at all: SNACK is the signal */
};

/* A vector shorter than this (bytes) is worth a SACK block (TRIM). */
#define SNACK_TRIM_MIN_VEC	6

enum snack_err {
	SNACK_OK = 0,
	SNACK_E_NOTOURS = -1,	/* another experiment's kind 254 option */
	SNACK_E_MALFORMED = -2,	/* lengths or fields that cannot be */
	SNACK_E_NOSPACE = -3,	/* does not fit: the packet goes as it is */
	SNACK_E_SKIP = -4,	/* a SNACK already: hands off */
	SNACK_E_EMPTY = -5,	/* nothing to say */
	SNACK_E_UNKNOWN = -6,	/* an option that may sign the header: hands off */
};

/* The receiver's picture of its out-of-order queue. */
struct snack_picture {
	u16 unit;
	u16 hole_off;
	u16 hole_len;
	u8 vec_len;
	u8 mode;
	u8 vec[SNACK_MAX_VEC];
};

/*
 * Built from the held ranges in sequence order (the rbtree walk):
 * snack_build_init(), snack_build_add() per range, snack_build_finish().
 * Adjacent or overlapping ranges are merged first, so a block covered
 * by two skbs counts as held.
 */
struct snack_builder {
	struct snack_picture pic;
	u32 ack;
	u32 unit;
	u32 max_blocks;		/* hole 1 + vector bits we can describe */
	u32 run_start;		/* current merged run, relative to ack */
	u32 run_end;
	u32 last_held;		/* one past the highest held block */
	u8 have_run;
	u8 have_held;
	u8 full;		/* past what we can describe: stop */
};

void snack_build_init(struct snack_builder *b, u32 ack, u32 unit,
		      unsigned int max_vec);
int snack_build_add(struct snack_builder *b, u32 seq, u32 end);
int snack_build_finish(struct snack_builder *b, struct snack_picture *pic);

int snack_encode(u8 *out, unsigned int space, const struct snack_picture *pic);
int snack_decode(const u8 *opt, unsigned int len, struct snack_picture *pic);

/* A held run the picture positively reports: [start, end) sequences. */
struct snack_run {
	u32 start;
	u32 end;
};

unsigned int snack_runs(const struct snack_picture *pic, u32 ack,
			struct snack_run *runs, unsigned int max);

/*
 * Where things are in one TCP option list; offsets into it.  A list is
 * rewritten only if every option in it is one the codec knows (MSS,
 * window scale, SACK-permitted, SACK, timestamps, ours): any other may
 * authenticate the header - TCP-MD5 (19), TCP-AO (29), MPTCP (30, whose
 * DSS checksum and HMACs cover parts of it), or a kind or experiment this
 * code has never heard of - and moving or resizing anything would make
 * the peer drop the segment.
 */
struct snack_optinfo {
	u8 sack_off;	/* SACK option: offset, length (0: none) */
	u8 sack_len;
	u8 snack_off;	/* our option (either kind) */
	u8 snack_len;
	u8 unknown;	/* an option not known to be safe: never rewrite */
};

int snack_scan(const u8 *opt, unsigned int optlen, struct snack_optinfo *info);
unsigned int snack_sack_count(const u8 *opt, unsigned int len);

int snack_rx_rewrite(const u8 *opt, unsigned int optlen,
		     const struct snack_picture *pic, unsigned int policy,
		     u8 *out);
int snack_tx_rewrite(const u8 *opt, unsigned int optlen,
		     const struct snack_picture *pic, u32 ack, u32 una,
		     u32 nxt, u32 rot, u8 *out, int *clipped);

#endif /* _SNACK_CODEC_H */
