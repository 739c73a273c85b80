// SPDX-License-Identifier: GPL-2.0-only
/* lib/nfq.c: what a received netlink datagram must look like before libmnl walks it. */
#include <linux/netlink.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "nfq.h"

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

int main(void)
{
	datagrams();
	return tc_report("test_nfq");
}
