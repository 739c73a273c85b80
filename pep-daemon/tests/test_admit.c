// SPDX-License-Identifier: GPL-2.0-only
/*
 * Before any filter: which way a packet goes (routed, bridged, between two
 * wireless interfaces), how far its checksum can be trusted, whether it may
 * start a flow, when a flow's handshake is proven, and what makes room in
 * a full table.  Each a table.
 */
#include "admit.h"
#include "tcase.h"

static void where(void)
{
	/* wlan0 = 3 (routed), wlan1 = 5 in bridge br-lan = 9; eth0 = 2, eth1 = 4 (br-lan's wired port) */
	const struct pep_ifaces w = { .n = 2, .port = { 3, 5 }, .bridge = { 0, 9 } };
	static const struct {
		struct pep_devs d;
		enum admit_where want;
		const char *why;
	} cases[] = {
		{ { 2, 3, 0, 0 }, WHERE_TO_WIRELESS, "routed: eth0 -> wlan0" },
		{ { 3, 2, 0, 0 }, WHERE_FROM_WIRELESS, "routed: wlan0 -> eth0" },
		{ { 2, 4, 0, 0 }, WHERE_FOREIGN, "routed between wired interfaces" },
		{ { 0, 9, 0, 5 }, WHERE_TO_WIRELESS, "routed into the bridge, out of its port wlan1 (bridge output)" },
		{ { 9, 9, 4, 5 }, WHERE_TO_WIRELESS, "bridged: eth1 -> wlan1" },
		{ { 9, 9, 5, 4 }, WHERE_FROM_WIRELESS, "bridged: wlan1 -> eth1" },
		{ { 9, 2, 0, 0 }, WHERE_FROM_WIRELESS, "routed out of the bridge, from its marked port (no port reported)" },
		{ { 9, 2, 4, 0 }, WHERE_FOREIGN, "routed out of the bridge, from its wired port (br_netfilter reports it)" },
		{ { 9, 9, 4, 4 }, WHERE_FOREIGN, "bridged between wired ports" },
		{ { 0, 9, 0, 4 }, WHERE_FOREIGN, "routed into the bridge, out of its wired port" },
		{ { 3, 9, 0, 5 }, WHERE_BETWEEN, "wlan0 -> wlan1: no fixed host" },
		{ { 3, 3, 0, 0 }, WHERE_BETWEEN, "wlan0 -> wlan0 (hairpin)" },
		{ { 0, 0, 0, 0 }, WHERE_FOREIGN, "no devices at all" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum admit_where got = admit_where(&w, &cases[i].d);

		CHECK(got == cases[i].want, "%s: %d, expected %d", cases[i].why, got, cases[i].want);
	}
}

static void checksums(void)
{
	static const struct {
		int family;
		bool corrupt_tcp, corrupt_ip, not_ready, not_verified;
		uint8_t hook;
		enum admit_csum want;
		const char *why;
		bool headers_only;	/* only the first 64 bytes copied (headers_only) */
	} cases[] = {
		{ 4, false, false, false, false, 2, CSUM_TRUSTED, "the kernel verified it (forward hook)", false },
		{ 4, true, false, false, false, 2, CSUM_TRUSTED, "... and pepd takes its word there", false },
		{ 4, false, false, false, true, 2, CSUM_VERIFIED, "not verified: pepd checks, right", false },
		{ 4, true, false, false, true, 2, CSUM_BAD, "not verified: pepd checks, wrong", false },
		{ 6, true, false, false, true, 2, CSUM_BAD, "IPv6, wrong", false },
		{ 6, false, false, false, true, 1, CSUM_VERIFIED, "IPv6, bridge input hook, right", false },
		{ 4, true, false, false, false, 3, CSUM_BAD, "bridge output hook: no flag means nothing, pepd checks", false },
		{ 4, false, false, false, false, 3, CSUM_VERIFIED, "bridge output hook, right", false },
		{ 4, true, false, true, false, 2, CSUM_PARTIAL, "CHECKSUM_PARTIAL: the field is no checksum yet", false },
		{ 4, false, true, false, false, 2, CSUM_BAD, "IPv4 header checksum wrong (a bridge does not check it)", false },
		{ 4, false, true, true, false, 2, CSUM_BAD, "... whatever the TCP flags say", false },
		{ 4, true, false, false, false, 2, CSUM_TRUSTED, "headers only, the kernel verified it", true },
		{ 4, true, false, true, false, 2, CSUM_PARTIAL, "headers only, CHECKSUM_PARTIAL: the kernel's bytes", true },
		{ 4, false, false, false, true, 2, CSUM_UNVERIFIABLE, "headers only, not verified: pepd cannot", true },
		{ 4, false, false, false, false, 3, CSUM_UNVERIFIABLE, "headers only, bridge output hook", true },
		{ 4, false, true, false, false, 2, CSUM_BAD, "headers only: the IPv4 header is there to check", true },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tpkt t = { .family = cases[i].family, .from_fh = true, .seq = 1, .ack = 1, .flags = TCPF_ACK,
				  .len = 100 };
		uint8_t buf[512];
		uint32_t n = tc_build(&t, buf, sizeof(buf));
		struct pkt p;
		enum admit_csum got;

		if (cases[i].corrupt_tcp)
			buf[n - 1] ^= 0x10;	/* a payload bit */
		if (cases[i].corrupt_ip)
			buf[8] ^= 0x01;		/* the TTL */
		if (cases[i].headers_only) {
			bool short_copy;

			CHECK(pkt_parse_headers(buf, 64, n, &p, &short_copy) == PKT_OK && p.captured == 64 && p.len == n,
			      "%s: its headers parse", cases[i].why);
		} else {
			CHECK(pkt_parse(buf, n, &p) == PKT_OK, "%s: parses", cases[i].why);
		}
		got = admit_checksum(&p, cases[i].not_ready, cases[i].not_verified, cases[i].hook);
		CHECK(got == cases[i].want, "%s: %d, expected %d", cases[i].why, got, cases[i].want);
	}
}

static void flows(void)
{
	static const struct {
		uint8_t flags;
		uint32_t len;
		bool from_fh, adopt;
		enum admit_flow want;
		const char *why;
	} cases[] = {
		{ TCPF_SYN, 0, true, false, ADMIT_SYN, "a SYN from the fixed host" },
		{ TCPF_SYN, 0, false, false, ADMIT_SYN, "a SYN from the wireless host" },
		{ TCPF_SYN | TCPF_ACK, 0, false, false, ADMIT_SYN, "a SYN-ACK (the SYN was missed)" },
		{ TCPF_ACK, 1000, true, false, ADMIT_NOT_ADOPTED, "data of an unseen connection, adoption off" },
		{ TCPF_ACK, 1000, true, true, ADMIT_MIDSTREAM, "... adoption on" },
		{ TCPF_ACK, 1000, false, true, ADMIT_IGNORE, "uplink data never starts a flow" },
		{ TCPF_ACK, 0, true, true, ADMIT_IGNORE, "a lone ACK" },
		{ TCPF_ACK | TCPF_FIN, 0, true, true, ADMIT_IGNORE, "a FIN" },
		{ TCPF_RST, 0, true, true, ADMIT_IGNORE, "a RST" },
		{ TCPF_SYN | TCPF_RST, 0, true, true, ADMIT_IGNORE, "SYN and RST together" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tpkt t = { .family = 4, .from_fh = cases[i].from_fh, .seq = 1, .ack = 1, .flags = cases[i].flags,
				  .len = cases[i].len };
		uint8_t buf[2048];
		struct pkt p;
		enum admit_flow got;

		pkt_parse(buf, tc_build(&t, buf, sizeof(buf)), &p);
		got = admit_flow(&p, cases[i].from_fh ? DIR_TO_WIRELESS : DIR_FROM_WIRELESS, cases[i].adopt);
		CHECK(got == cases[i].want, "%s: %d, expected %d", cases[i].why, got, cases[i].want);
	}
}

/* A packet of a conversation: who sends it, its sequence and ack numbers, flags, payload. */
struct hs {
	bool from_fh;
	uint32_t seq, ack;
	uint8_t flags;
	uint32_t len;
};

static bool established_after(const struct hs *steps, unsigned int n, bool midstream)
{
	struct conn c = { .midstream = midstream };
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct tpkt t = { .family = 4, .from_fh = steps[i].from_fh, .seq = steps[i].seq, .ack = steps[i].ack,
				  .flags = steps[i].flags, .len = steps[i].len };
		uint8_t buf[2048];
		struct pkt p;

		pkt_parse(buf, tc_build(&t, buf, sizeof(buf)), &p);
		conn_observe(&c, &p, steps[i].from_fh ? DIR_TO_WIRELESS : DIR_FROM_WIRELESS);
	}
	return c.established;
}

/* The handshake proven: one side acknowledges what the other really sent. */
static void handshakes(void)
{
	const uint32_t X = 0xfffffff0u, Y = 5000;	/* the fixed host's ISN wraps */
	const struct hs down[] = { { true, X, 0, TCPF_SYN, 0 }, { false, Y, X + 1, TCPF_SYN | TCPF_ACK, 0 },
				   { true, X + 1, Y + 1, TCPF_ACK, 0 } };
	const struct hs down_data[] = { { true, X, 0, TCPF_SYN, 0 }, { false, Y, X + 1, TCPF_SYN | TCPF_ACK, 0 },
					{ true, X + 1, Y + 1, TCPF_ACK | TCPF_PSH, 500 } };
	const struct hs up[] = { { false, Y, 0, TCPF_SYN, 0 }, { true, X, Y + 1, TCPF_SYN | TCPF_ACK, 0 },
				 { false, Y + 1, X + 1, TCPF_ACK, 0 } };
	const struct hs forged_syns[] = { { true, X, 0, TCPF_SYN, 0 }, { false, Y, X + 1, TCPF_SYN | TCPF_ACK, 0 },
					  { true, X + 1, 12345, TCPF_ACK, 0 }, { true, X + 1, Y, TCPF_ACK, 0 },
					  { true, X + 1, Y + 2, TCPF_ACK, 0 } };
	const struct hs no_answer[] = { { true, X, 0, TCPF_SYN, 0 }, { true, X + 1, Y + 1, TCPF_ACK, 0 },
					{ true, X + 1, Y + 1, TCPF_ACK, 1000 } };
	const struct hs reset[] = { { true, X, 0, TCPF_SYN, 0 }, { false, 0, X + 1, TCPF_RST | TCPF_ACK, 0 } };
	const struct hs late_synack[] = { { true, X, 0, TCPF_SYN, 0 }, { true, X + 1, 1, TCPF_ACK, 1000 },
					  { false, Y, X + 1001, TCPF_ACK, 0 } };
	const struct hs adopted[] = { { true, 1000, 7, TCPF_ACK, 1000 }, { false, 7, 2000, TCPF_ACK, 0 } };
	const struct hs adopted_rst[] = { { true, 1000, 7, TCPF_ACK, 1000 }, { false, 7, 0, TCPF_RST, 0 } };
	const struct hs adopted_forged[] = { { true, 1000, 7, TCPF_ACK, 1000 }, { false, 7, 5000, TCPF_ACK, 0 },
					     { false, 7, 999, TCPF_ACK, 0 } };

	CHECK(established_after(down, 3, false), "a download's handshake: the third ACK proves it");
	CHECK(!established_after(down, 2, false), "... not before it");
	CHECK(established_after(down_data, 3, false), "... or its first data, when the third ACK is lost");
	CHECK(established_after(up, 3, false), "an upload's handshake (the wireless host opens)");
	CHECK(!established_after(up, 2, false), "... not before its third ACK");
	CHECK(!established_after(forged_syns, 5, false), "ACKs not acknowledging the SYN-ACK prove nothing");
	CHECK(!established_after(no_answer, 3, false), "no answer from the wireless host: nothing proven");
	CHECK(!established_after(reset, 2, false), "a reset proves nothing");
	CHECK(established_after(late_synack, 3, false), "the wireless host acknowledging data it got");
	CHECK(established_after(adopted, 2, true), "adopted mid-stream: the wireless host acknowledges its data");
	CHECK(!established_after(adopted, 1, true), "... not before");
	CHECK(!established_after(adopted_rst, 2, true), "a wireless host that resets a forged segment proves nothing");
	CHECK(!established_after(adopted_forged, 3, true), "acknowledging what was never sent, or before it");
}

static struct flow_key key(uint16_t port)
{
	struct flow_key k = { .family = 4, .fh_port = 5201, .wh_port = port };

	memcpy(k.fh, TC_FH4, 4);
	memcpy(k.wh, TC_WH4, 4);
	return k;
}

/* Two lists: a full table gives up its oldest embryonic flow, never an established one. */
static void embryonic_room(void)
{
	struct flow_table t;
	struct flow *f[4], *g;
	struct flow_key k;
	unsigned int n = 0;
	uint16_t i;

	CHECK(flow_table_init(&t, 4, 1, 1 << 20, 1 << 16) == 0, "init");
	for (i = 0; i < 4; i++) {
		k = key((uint16_t)(1000 + i));
		f[i] = flow_create(&t, &k, 100 + i);
	}
	CHECK(t.nyoung == 4 && flow_oldest_embryonic(&t) == f[0], "new flows are embryonic, oldest first");
	flow_establish(&t, f[0]);
	flow_establish(&t, f[2]);
	CHECK(t.nyoung == 2 && flow_oldest_embryonic(&t) == f[1], "established flows are not candidates");
	flow_touch(&t, f[1], 500);
	CHECK(flow_oldest_embryonic(&t) == f[3], "the least recently seen embryonic flow goes first");
	k = key(2000);
	CHECK(flow_create(&t, &k, 600) == NULL, "the table is full");
	g = flow_oldest_embryonic(&t);
	flow_destroy(&t, g);
	CHECK(flow_create(&t, &k, 600) != NULL && t.nflows == 4 && t.nyoung == 2, "its descriptor is the new flow's");
	flow_destroy(&t, f[1]);
	flow_destroy(&t, flow_oldest_embryonic(&t));
	CHECK(flow_oldest_embryonic(&t) == NULL && t.nyoung == 0, "no embryonic flow left: nothing to give up");
	flow_for_each(&t, g)
		n++;
	CHECK(n == 2 && t.nflows == 2, "iteration covers both lists: %u", n);
	flow_restart(&t, f[2]);
	CHECK(t.nyoung == 1 && flow_oldest_embryonic(&t) == f[2], "a new connection on a 4-tuple is embryonic again");
	/* idle expiry looks at both lists, oldest first */
	CHECK(flow_oldest_idle(&t, 1000, 100) == f[0], "the oldest idle flow, established (100) before embryonic");
	flow_destroy(&t, f[0]);
	CHECK(flow_oldest_idle(&t, 1000, 100) == f[2], "... then the embryonic one (102)");
	CHECK(flow_oldest_idle(&t, 1000, 950) == NULL, "nothing idle that long");
	flow_table_free(&t);
}

int main(void)
{
	where();
	checksums();
	flows();
	handshakes();
	embryonic_room();
	return tc_report("test_admit");
}
