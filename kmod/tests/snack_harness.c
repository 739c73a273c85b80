// SPDX-License-Identifier: GPL-2.0-only
/*
 * Userspace harness for snack_codec.c, driven by
 * tests/unit/test_snack_codec.py.  One command per line on stdin, one
 * result line each on stdout; options and option lists are hex strings
 * ("-" for empty), results are hex or "err N" (a snack_err):
 *
 *   b ACK UNIT MAXVEC MODE N S1 E1 .. SN EN
 *        build from held ranges, encode into 40 bytes
 *   d ACK OPTHEX     decode one option; "unit off len vec|runs s-e ..."
 *   r POLICY ACK UNIT MODE OPTHEX N S1 E1 ..
 *        receiver: rewrite the option list with the built picture
 *   t ROT ACK UNA NXT OPTHEX
 *        sender: rewrite the option list, SNACK to SACK within [UNA, NXT];
 *        a trailing " clipped" if a run was cut to the window
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../snack_codec.h"

static unsigned int unhex(const char *s, u8 *out, unsigned int max)
{
	unsigned int n = 0, v;

	if (!strcmp(s, "-"))
		return 0;
	while (s[0] && s[1] && n < max && sscanf(s, "%2x", &v) == 1) {
		out[n++] = v;
		s += 2;
	}
	return n;
}

static void hex(const u8 *p, int n)
{
	int i;

	if (n < 0) {
		printf("err %d\n", n);
		return;
	}
	if (!n)
		printf("-");
	for (i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("\n");
}

static int build(struct snack_picture *pic, u32 ack, u32 unit, u32 maxvec,
		 u32 mode)
{
	struct snack_builder b;
	unsigned int n, s, e, stop = 0;

	snack_build_init(&b, ack, unit, maxvec);
	if (scanf("%u", &n) != 1)
		return -100;
	while (n--) {
		if (scanf("%u %u", &s, &e) != 2)
			return -100;
		if (!stop)
			stop = snack_build_add(&b, s, e);
	}
	if (snack_build_finish(&b, pic))
		return SNACK_E_EMPTY;
	pic->mode = mode;
	return 0;
}

int main(void)
{
	char op, text[256];
	unsigned int ack, unit, maxvec, mode, policy, rot, una, nxt;
	struct snack_picture pic;
	struct snack_run runs[SNACK_MAX_RUNS];
	u8 in[64], out[SNACK_OUT_BUF];
	unsigned int n, i;
	int ret;

	while (scanf(" %c", &op) == 1) {
		if (op == 'b' &&
		    scanf("%u %u %u %u", &ack, &unit, &maxvec, &mode) == 4) {
			ret = build(&pic, ack, unit, maxvec, mode);
			if (!ret)
				ret = snack_encode(out, SNACK_OPT_SPACE, &pic);
			hex(out, ret);
		} else if (op == 'd' && scanf("%u %255s", &ack, text) == 2) {
			n = unhex(text, in, sizeof(in));
			ret = n ? snack_decode(in, n, &pic) : SNACK_E_MALFORMED;
			if (ret) {
				printf("err %d\n", ret);
				continue;
			}
			printf("%u %u %u ", pic.unit, pic.hole_off, pic.hole_len);
			n = snack_runs(&pic, ack, runs, SNACK_MAX_RUNS);
			printf("runs");
			for (i = 0; i < n; i++)
				printf(" %u-%u", runs[i].start, runs[i].end);
			printf("\n");
		} else if (op == 'r' &&
			   scanf("%u %u %u %u %255s", &policy, &ack, &unit,
				 &mode, text) == 5) {
			n = unhex(text, in, sizeof(in));
			ret = build(&pic, ack, unit, SNACK_MAX_VEC, mode);
			if (!ret)
				ret = snack_rx_rewrite(in, n, &pic, policy, out);
			hex(out, ret);
		} else if (op == 't' &&
			   scanf("%u %u %u %u %255s", &rot, &ack, &una, &nxt,
				 text) == 5) {
			struct snack_optinfo info;
			int clipped = 0;

			n = unhex(text, in, sizeof(in));
			ret = snack_scan(in, n, &info);
			if (!ret && !info.snack_len)
				ret = SNACK_E_EMPTY;
			if (!ret)
				ret = snack_decode(in + info.snack_off,
						   info.snack_len, &pic);
			if (!ret)
				ret = snack_tx_rewrite(in, n, &pic, ack, una,
						       nxt, rot, out, &clipped);
			if (clipped && ret > 0) {
				for (i = 0; i < (unsigned int)ret; i++)
					printf("%02x", out[i]);
				printf(" clipped\n");
			} else {
				hex(out, ret);
			}
		} else {
			fprintf(stderr, "bad command '%c'\n", op);
			return 2;
		}
		fflush(stdout);
	}
	return 0;
}
