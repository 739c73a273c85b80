// SPDX-License-Identifier: GPL-2.0-only
/* arqd's keys; the parser, flags, defaults and help are cfgparse.c's. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arq_config.h"

static const char *const feedback_names[] = { "ack", "status", NULL };
static const char *const delivery_names[] = { "immediate", "resequence", NULL };

#define F(field) CFG_FIELD(struct arq_config, field)
#define MS 1000000ULL
#define S_ 1000000000ULL

static const struct cfg_key keys[] = {
	{ .name = "link", .type = CFG_STRING, F(link), .def = "", .required = true, .example = "wlan0",
	  .section = "where",
	  .help = "the wireless interface: link frames leave and arrive here, EtherType 0x88b5" },
	{ .name = "tun", .type = CFG_STRING, F(tun), .def = "arq0",
	  .help = "name of the TUN device arqd creates: IP packets routed into it cross the link in frames, "
		  "frames from the peer come out of it" },
	{ .name = "peer_mac", .type = CFG_STRING, F(peer_mac), .def = "", .required = true,
	  .example = "02:00:0a:0a:02:02",
	  .help = "Ethernet address of the other end: frames go to it, and frames from any other address are "
		  "dropped unread (foreign_frames)" },
	{ .name = "routes", .type = CFG_STRING, F(routes), .def = "",
	  .help = "comma-separated prefixes (IPv4 or IPv6, e.g. 10.0.0.0/24, fd00::/64) routed into the TUN "
		  "device: the hosts behind the other end.  Installed in table `table` with a rule at "
		  "rule_priority, so the main table is untouched; they vanish with the device" },
	{ .name = "table", .type = CFG_UINT, F(table), .min = 1, .max = 0xfffffffeULL, .def = "2781",
	  .help = "routing table of the routes" },
	{ .name = "rule_priority", .type = CFG_UINT, F(rule_priority), .min = 1, .max = 32765, .def = "2781",
	  .help = "priority of the rule that sends lookups to that table (before main, 32766)" },
	{ .name = "control_socket", .type = CFG_STRING, F(control_socket), .def = "",
	  .help = "where arqd stats finds the daemon; empty: /run/arqd/arqd-LINK.sock" },

	{ .name = "feedback", .type = CFG_ENUM, F(feedback), .names = feedback_names, .def = "ack",
	  .section = "the protocol",
	  .help = "ack: one link ack per data frame (Vaidya99); status: cumulative ack and bitmap of received "
		  "frames every status_interval (Wong/Leung's RLP)" },
	{ .name = "delivery", .type = CFG_ENUM, F(delivery), .names = delivery_names, .def = "immediate",
	  .help = "immediate: each frame goes up on arrival, out of order (non-sequencing); resequence: in link "
		  "order" },
	{ .name = "window", .type = CFG_UINT, F(window), .min = 2, .max = 65536, .def = "32", .unit = "frames",
	  .help = "frames outstanding at the sender at most (queued or unacknowledged); not above rx_window.  "
		  "This also bounds how many of arqd's data frames wait in the qdisc below it: keep it below "
		  "the qdisc's limit" },
	{ .name = "max_rtx", .type = CFG_UINT, F(max_rtx), .min = 0, .max = 255, .def = "4",
	  .unit = "retransmissions",
	  .help = "N2: retransmissions of a frame before it is given up (best effort: the link goes on, TCP "
		  "recovers it)" },
	{ .name = "rto_initial", .type = CFG_DURATION, F(rto_initial_ns), .min = 1 * MS, .max = 60 * S_,
	  .def = "200ms", .help = "link retransmission timeout before the first round-trip sample" },
	{ .name = "rto_min", .type = CFG_DURATION, F(rto_min_ns), .min = 1 * MS, .max = 60 * S_, .def = "10ms",
	  .help = "lower bound of the link retransmission timeout (smoothed link round trip + 4 deviations)" },
	{ .name = "rto_max", .type = CFG_DURATION, F(rto_max_ns), .min = 1 * MS, .max = 60 * S_, .def = "2s",
	  .help = "upper bound of the link retransmission timeout, backoff included" },
	{ .name = "idle_repair", .type = CFG_BOOL, F(idle_repair), .def = "off",
	  .help = "while nothing else waits to be sent, a frame's timer is one smoothed link round trip plus "
		  "one deviation (no rto_min), backing off only while nothing is heard from the peer: repairs "
		  "the last frames of a burst and lost retransmissions sooner, in airtime the link would leave "
		  "unused" },
	{ .name = "timer_restart", .type = CFG_BOOL, F(timer_restart), .def = "off",
	  .help = "a frame's retransmission timeout runs from the later of its transmission and the last ack of "
		  "a frame not acknowledged before, restarted by every such ack as TCP's (RFC 6298 5.3): while "
		  "acks keep coming a lost frame is revealed by a later frame's ack, so a delay spike shorter "
		  "than the timeout (a busy CPU, a burst queued below arqd) retransmits nothing (the testbed's "
		  "arq schemes; on a clean 2 Mbit/s hop 2-4 expiries a run instead of 14-24).  off: from the "
		  "frame's own transmission (Vaidya99)" },
	{ .name = "ack_delay", .type = CFG_DURATION, F(ack_delay_ns), .min = 0, .max = 1 * S_, .def = "0ms",
	  .help = "feedback = ack: a frame that leaves nothing missing is acknowledged within this long, by the "
		  "receiver's cumulative ack carried in the next data frame going back (or in an ack frame of "
		  "its own if none leaves in time), one ack for all such frames; a duplicate or a frame that "
		  "leaves a hole is acknowledged at once.  Costs 4 bytes in every data frame (the TUN device's "
		  "MTU is 4 bytes smaller) and saves most ack frames; the peer's arqd must know carried acks.  "
		  "0ms: every frame acknowledged at once in an ack frame of its own (Vaidya99); where both "
		  "ends know carried acks, 10ms (the testbed's arq schemes: framing then takes 2 % of a clean "
		  "2 Mbit/s hop's bytes instead of 3 %)" },
	{ .name = "status_interval", .type = CFG_DURATION, F(status_interval_ns), .min = 1 * MS, .max = 10 * S_,
	  .def = "20ms", .help = "feedback = status: period of status frames while something is new or missing" },
	{ .name = "link_mtu", .type = CFG_UINT, F(link_mtu), .min = 0, .max = 65535, .def = "0", .unit = "bytes",
	  .help = "fragment packets into frames of at most this many bytes, link header included (Wong/Leung: "
		  "128 at 19.2 kbit/s); 0: one packet per frame" },
	{ .name = "tun_mtu", .type = CFG_UINT, F(tun_mtu), .min = 0, .max = 65535, .def = "0", .unit = "bytes",
	  .help = "MTU of the TUN device; 0: 1500 when fragmenting, else the link's MTU minus the 16-byte frame "
		  "header (20 bytes with ack_delay)" },
	{ .name = "tun_queue", .type = CFG_UINT, F(tun_queue), .min = 1, .max = 100000, .def = "16",
	  .unit = "packets",
	  .help = "transmit queue of the TUN device: where packets wait (and are dropped, as congestion) while "
		  "the window is full" },
	{ .name = "link_queue", .type = CFG_SIZE, F(link_queue), .min = 4096, .max = 1ULL << 30, .def = "32KiB",
	  .help = "data frames held by the kernel below arqd (the wireless qdisc) at most, as socket send "
		  "buffer: link acks and retransmissions only overtake what waits in arqd, so keep it near the "
		  "link's bandwidth-delay product (no effect under netem with a delay or rate, which releases "
		  "the buffer at once: window bounds the qdisc there)" },
	{ .name = "link_rate", .type = CFG_RATE, F(link_rate), .min = 0, .max = 1000000000000ULL, .def = "0bit",
	  .help = "pace frames (data, acks and status alike) at this rate, the radio's: frames then wait in "
		  "arqd, where acks and retransmissions go first, not in a FIFO below it (needed under netem, "
		  "which hides the device's queue); 0bit: no pacing, the device's queue and link_queue push "
		  "back" },
	{ .name = "link_overhead", .type = CFG_UINT, F(link_overhead), .min = 0, .max = 4096, .def = "0",
	  .unit = "bytes",
	  .help = "bytes per frame the pacer adds to frame and Ethernet header (netem's packet overhead, a PHY "
		  "preamble)" },
	{ .name = "pace_frames", .type = CFG_UINT, F(pace_frames), .min = 1, .max = 64, .def = "2",
	  .unit = "frames",
	  .help = "with link_rate: how far the paced link may run ahead of the clock, in frames of the largest "
		  "size the link carries; what waits below arqd, where a retransmission cannot overtake it.  "
		  "Fewer: quicker repairs; too few: the radio idles when arqd is scheduled late" },
	{ .name = "tx_buffer", .type = CFG_SIZE, F(tx_buffer), .min = 4096, .max = 1ULL << 32, .def = "4MiB",
	  .help = "payload bytes the sender holds at most" },
	{ .name = "rx_window", .type = CFG_UINT, F(rx_window), .min = 8, .max = 1u << 20, .def = "1024",
	  .unit = "frames", .help = "receive window: duplicates are recognised within it" },
	{ .name = "rx_buffer", .type = CFG_SIZE, F(rx_buffer), .min = 4096, .max = 1ULL << 32, .def = "4MiB",
	  .help = "bytes held for resequencing and reassembly at most" },
	{ .name = "reseq_timeout", .type = CFG_DURATION, F(reseq_timeout_ns), .min = 1 * MS, .max = 60 * S_,
	  .def = "500ms",
	  .help = "delivery = resequence: a hole older than this is given up and what waits behind it goes up" },
	{ .name = "reasm_slots", .type = CFG_UINT, F(reasm_slots), .min = 1, .max = 4096, .def = "64",
	  .unit = "packets", .help = "packets reassembled at once at most" },
	{ .name = "reasm_timeout", .type = CFG_DURATION, F(reasm_timeout_ns), .min = 1 * MS, .max = 60 * S_,
	  .def = "2s", .help = "an incomplete packet is dropped after this" },
};

const struct cfg_schema arqd_schema = {
	.prog = "arqd",
	.keys = keys,
	.nkeys = sizeof(keys) / sizeof(keys[0]),
	.size = sizeof(struct arq_config),
};

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
		return -1;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static int parse_prefix(const char *s, size_t n, struct arq_prefix *p)
{
	char buf[64], *slash, *end;
	unsigned long len;
	int maxlen;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	memset(p, 0, sizeof(*p));
	if (inet_pton(AF_INET, buf, p->addr) == 1) {
		p->family = AF_INET;
		maxlen = 32;
	} else if (inet_pton(AF_INET6, buf, p->addr) == 1) {
		p->family = AF_INET6;
		maxlen = 128;
	} else {
		return -1;
	}
	len = (unsigned long)maxlen;
	if (slash) {
		if (!isdigit((unsigned char)slash[1]))
			return -1;
		len = strtoul(slash + 1, &end, 10);
		if (*end || len > (unsigned long)maxlen)
			return -1;
	}
	p->len = (uint8_t)len;
	return 0;
}

int arq_config_check(struct arq_config *cfg, char *err, size_t errlen)
{
	const char *s = cfg->routes;

	if (cfg_check_required(&arqd_schema, cfg, err, errlen) < 0)
		return -1;
	if (strlen(cfg->link) >= CFG_IFNAMSIZ) {
		cfg_err(err, errlen, "link = %s: not an interface name (at most 15 characters)", cfg->link);
		return -1;
	}
	if (!cfg->tun[0] || strlen(cfg->tun) >= CFG_IFNAMSIZ || strchr(cfg->tun, '/')) {
		cfg_err(err, errlen, "tun = %s: not an interface name (1 to 15 characters)", cfg->tun);
		return -1;
	}
	if (parse_mac(cfg->peer_mac, cfg->peer) < 0 || (cfg->peer[0] & 1)) {
		cfg_err(err, errlen, "peer_mac = %s: expected the unicast Ethernet address of the other end, like "
			"02:00:0a:0a:02:02", cfg->peer_mac);
		return -1;
	}
	cfg->nprefix = 0;
	while (*s) {
		size_t n;

		while (*s == ',' || isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		n = strcspn(s, ", \t");
		if (cfg->nprefix == ARQ_MAX_ROUTES) {
			cfg_err(err, errlen, "routes = %s: at most %d prefixes", cfg->routes, ARQ_MAX_ROUTES);
			return -1;
		}
		if (parse_prefix(s, n, &cfg->prefix[cfg->nprefix]) < 0) {
			cfg_err(err, errlen, "routes = %s: %.*s is not a prefix like 10.0.0.0/24 or fd00::/64",
				cfg->routes, (int)n, s);
			return -1;
		}
		cfg->nprefix++;
		s += n;
	}
	if (cfg->window > cfg->rx_window) {
		cfg_err(err, errlen, "window = %u is larger than rx_window = %u", cfg->window, cfg->rx_window);
		return -1;
	}
	if (cfg->ack_delay_ns && cfg->feedback != ARQ_FEEDBACK_ACK) {
		cfg_err(err, errlen, "ack_delay = %gms needs feedback = ack (status frames acknowledge every "
			"status_interval)", (double)cfg->ack_delay_ns / 1e6);
		return -1;
	}
	if (cfg->rto_min_ns > cfg->rto_max_ns) {
		cfg_err(err, errlen, "rto_min = %gms is larger than rto_max = %gms", (double)cfg->rto_min_ns / 1e6,
			(double)cfg->rto_max_ns / 1e6);
		return -1;
	}
	if (cfg->link_mtu && cfg->link_mtu < 64) {
		cfg_err(err, errlen, "link_mtu = %u: at least 64 bytes (or 0: no fragmentation)", cfg->link_mtu);
		return -1;
	}
	if (cfg->tun_mtu && cfg->tun_mtu < 68) {
		cfg_err(err, errlen, "tun_mtu = %u: at least 68 bytes (IPv4's minimum) or 0 (automatic)", cfg->tun_mtu);
		return -1;
	}
	return 0;
}

void arq_ctl_path(const struct arq_config *cfg, char *path, size_t len)
{
	if (cfg->control_socket[0])
		snprintf(path, len, "%s", cfg->control_socket);
	else
		snprintf(path, len, "/run/arqd/arqd-%s.sock", cfg->link);
}
