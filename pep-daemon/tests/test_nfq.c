// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/nfq.c: what a received netlink datagram must look like before libmnl
 * walks it, and how verdicts go back: in the order decided, runs of plain
 * accepts as one batch message, sent when flush_bound wait.  The netlink
 * socket is stubbed at libmnl's calls (as in fuzz/fuzz_nfq.c): what pepd
 * sends is captured.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>

#include "check.h"
#include "nfq.h"

/* ---------------------------------------------------------------- the socket, stubbed */

#include "mnl_stub.h"

static struct {
	uint8_t buf[1 << 20];
	size_t len;
	int sends;
} sent;

ssize_t mnl_socket_recvfrom(const struct mnl_socket *s, void *buf, size_t size)
{
	(void)s;
	(void)buf;
	(void)size;
	errno = EAGAIN;
	return -1;
}

ssize_t mnl_socket_sendto(const struct mnl_socket *s, const void *req, size_t size)
{
	(void)s;
	if (sent.len + size <= sizeof(sent.buf)) {
		memcpy(sent.buf + sent.len, req, size);
		sent.len += size;
	}
	sent.sends++;
	return (ssize_t)size;
}

/* A datagram of messages with these nlmsg_len values, each followed by its aligned body, cut to `cut` bytes. */
static size_t datagram(uint8_t *buf, size_t cap, const uint32_t *lens, int n, size_t cut)
{
	size_t off = 0;
	int i;

	memset(buf, 0, cap);
	for (i = 0; i < n; i++) {
		struct nlmsghdr h = { .nlmsg_len = lens[i], .nlmsg_type = 3 << 8 };
		size_t step = lens[i] >= sizeof(h) && lens[i] < 1024 ? NLMSG_ALIGN(lens[i]) : sizeof(h);

		memcpy(buf + off, &h, sizeof(h));
		off += step;
	}
	return cut ? cut : off;
}

static void datagrams(void)
{
	static const struct {
		uint32_t lens[3];
		int n;
		size_t cut;	/* 0: the whole datagram */
		bool valid;
		const char *why;
	} cases[] = {
		{ { 16 }, 1, 0, true, "one bare header" },
		{ { 20, 36 }, 2, 0, true, "two messages, aligned" },
		{ { 20, 18 }, 2, 40, true, "the last one's padding cut" },
		{ { 0 }, 1, 16, false, "a length of 0 (libmnl would stop, silently)" },
		{ { 15 }, 1, 16, false, "shorter than its header" },
		{ { 64 }, 1, 32, false, "longer than the datagram" },
		{ { 0xccf554ffu }, 1, 16, false, "2^31 or more: an int, to libmnl, and negative (fuzz_nfq)" },
		{ { 20, 0x80000000u }, 2, 0, false, "the second one lies" },
		{ { 16 }, 1, 24, false, "8 bytes after the last message: not a header" },
	};
	uint8_t buf[256] = { 0 };
	size_t i;

	CHECK(nfqueue_datagram_valid(buf, 0), "nothing: nothing to walk");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = datagram(buf, sizeof(buf), cases[i].lens, cases[i].n, cases[i].cut);

		CHECK(nfqueue_datagram_valid(buf, len) == cases[i].valid, "%s", cases[i].why);
	}
}

/* ---------------------------------------------------------------- verdicts */

/*
 * What was sent, one message a letter: A accept, D drop, M accept with bytes, B batch accept, R repeat;
 * then ":id", and "/mark" for a message that sets the packet's mark.
 */
static void sent_messages(char *out, size_t cap)
{
	size_t off = 0, used = 0;

	out[0] = '\0';
	while (off + sizeof(struct nlmsghdr) <= sent.len) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)(sent.buf + off);
		const struct nfqnl_msg_verdict_hdr *vh;
		const struct nlattr *a;
		bool payload = false, has_mark = false;
		uint32_t mark = 0;
		char kind;

		off += MNL_ALIGN(nlh->nlmsg_len);
		if ((nlh->nlmsg_type & 0xff) != NFQNL_MSG_VERDICT && (nlh->nlmsg_type & 0xff) != NFQNL_MSG_VERDICT_BATCH)
			continue;
		vh = NULL;
		mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
			if (mnl_attr_get_type(a) == NFQA_VERDICT_HDR)
				vh = mnl_attr_get_payload(a);
			if (mnl_attr_get_type(a) == NFQA_PAYLOAD)
				payload = true;
			if (mnl_attr_get_type(a) == NFQA_MARK) {
				has_mark = true;
				mark = ntohl(mnl_attr_get_u32(a));
			}
		}
		if (!vh)
			continue;
		if ((nlh->nlmsg_type & 0xff) == NFQNL_MSG_VERDICT_BATCH)
			kind = 'B';
		else if (ntohl(vh->verdict) == NF_DROP)
			kind = 'D';
		else if (ntohl(vh->verdict) == NF_REPEAT)
			kind = 'R';
		else
			kind = payload ? 'M' : 'A';
		used += (size_t)snprintf(out + used, cap - used, "%s%c:%u", used ? " " : "", kind, ntohl(vh->id));
		if (has_mark)
			used += (size_t)snprintf(out + used, cap - used, "/%#x", mark);
	}
}

static void verdicts(void)
{
	static const uint8_t bytes[60] = { 0x45 };
	static const struct {
		uint32_t flush_bound;
		/* per packet, ids from 1: a accept, d drop, m accept with new bytes, r repeat with mark 0x20000 */
		const char *decide;
		const char *want;	/* the messages sent */
		int sends;		/* and in how many sends, the round's end included */
		const char *why;
	} cases[] = {
		{ 64, "aaaa", "B:4", 1, "a run of accepts is one batch message, at the round's end" },
		{ 64, "aadaa", "B:2 D:3 B:5", 1, "a drop between runs: in the order decided" },
		{ 64, "maa", "M:1 B:3", 1, "new bytes are the packet's own message" },
		{ 64, "dd", "D:1 D:2", 1, "drops are never batched" },
		{ 2, "aaaaa", "B:2 B:4 B:5", 3, "flush_bound 2: sent every second verdict" },
		{ 1, "ada", "B:1 D:2 B:3", 3, "flush_bound 1: each at once" },
		{ 3, "adaa", "B:1 D:2 B:3 B:4", 2, "the bound counts every verdict, batched or not" },
		{ 64, "aara", "B:2 R:3/0x20000 B:4", 1, "a repeat with a mark: its own message, in order" },
		{ 2, "rr", "R:1/0x20000 R:2/0x20000", 1, "repeats count towards the bound" },
	};
	size_t i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nfqueue_params p = { .queue = 3, .maxlen = 64, .socket_buffer = 1 << 20,
					    .flush_bound = cases[i].flush_bound };
		struct nfqueue q;
		char err[128], got[256];

		nfqueue_init(&q);
		CHECK(nfqueue_open(&q, &p, err, sizeof(err)) == 0, "%s: open: %s", cases[i].why, err);
		sent.len = 0;
		sent.sends = 0;
		for (k = 0; cases[i].decide[k]; k++) {
			char c = cases[i].decide[k];

			if (c == 'r')
				nfqueue_verdict_mark(&q, (uint32_t)k + 1, NFQUEUE_REPEAT, 0x20000);
			else
				nfqueue_verdict(&q, (uint32_t)k + 1, c == 'd' ? NFQUEUE_DROP : NFQUEUE_ACCEPT,
						c == 'm' ? bytes : NULL, c == 'm' ? sizeof(bytes) : 0);
		}
		nfqueue_flush(&q);	/* the round's end */
		sent_messages(got, sizeof(got));
		CHECK(strcmp(got, cases[i].want) == 0 && sent.sends == cases[i].sends, "%s: sent \"%s\" in %d, expected \"%s\" in %d",
		      cases[i].why, got, sent.sends, cases[i].want, cases[i].sends);
		sent.len = 0;
		nfqueue_close(&q);
	}
}

int main(void)
{
	datagrams();
	verdicts();
	return tc_report("test_nfq");
}
