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
	/* where */
	{ "link", CFG_STRING, F(link), 0, 0, NULL, "",
	  "the wireless interface (required): link frames leave and arrive here, EtherType 0x88b5" },
	{ "tun", CFG_STRING, F(tun), 0, 0, NULL, "arq0",
	  "name of the TUN device arqd creates: IP packets routed into it cross the link in frames, frames from "
	  "the peer come out of it" },
	{ "peer_mac", CFG_STRING, F(peer_mac), 0, 0, NULL, "ff:ff:ff:ff:ff:ff",
	  "Ethernet address of the other end (broadcast reaches it on a point-to-point link)" },
	{ "routes", CFG_STRING, F(routes), 0, 0, NULL, "",
	  "comma-separated prefixes (IPv4 or IPv6) routed into the TUN device: the hosts behind the other end. "
	  "Installed in table `table` with a rule at rule_priority, so the main table is untouched; they vanish "
	  "with the device" },
	{ "table", CFG_UINT, F(table), 1, 0xfffffffeULL, NULL, "2781", "routing table of the routes" },
	{ "rule_priority", CFG_UINT, F(rule_priority), 1, 32765, NULL, "2781",
	  "priority of the rule that sends lookups to that table (before main, 32766)" },
	{ "control_socket", CFG_STRING, F(control_socket), 0, 0, NULL, "",
	  "path of the stats socket (default /run/arqd/arqd-LINK.sock)" },
	/* the protocol */
	{ "feedback", CFG_ENUM, F(feedback), 0, 0, feedback_names, "ack",
	  "ack: one link ack per data frame (Vaidya99); status: cumulative ack and bitmap of received frames every "
	  "status_interval (Wong/Leung's RLP)" },
	{ "delivery", CFG_ENUM, F(delivery), 0, 0, delivery_names, "immediate",
	  "immediate: each frame goes up on arrival, out of order (non-sequencing); resequence: in link order" },
	{ "window", CFG_UINT, F(window), 2, 65536, NULL, "32",
	  "frames outstanding at the sender at most (queued or unacknowledged); not above rx_window.  This also "
	  "bounds how many of arqd's data frames wait in the qdisc below it: keep it below the qdisc's limit" },
	{ "max_rtx", CFG_UINT, F(max_rtx), 0, 255, NULL, "4",
	  "N2: retransmissions of a frame before it is given up (best effort: the link goes on, TCP recovers it)" },
	{ "rto_initial", CFG_DURATION, F(rto_initial_ns), 1 * MS, 60 * S_, NULL, "200ms",
	  "link retransmission timeout before the first round-trip sample" },
	{ "rto_min", CFG_DURATION, F(rto_min_ns), 1 * MS, 60 * S_, NULL, "10ms",
	  "lower bound of the link retransmission timeout (smoothed link round trip + 4 deviations)" },
	{ "rto_max", CFG_DURATION, F(rto_max_ns), 1 * MS, 60 * S_, NULL, "2s",
	  "upper bound of the link retransmission timeout, backoff included" },
	{ "idle_repair", CFG_BOOL, F(idle_repair), 0, 0, NULL, "off",
	  "while nothing else waits to be sent, a frame's timer is one smoothed link round trip plus one "
	  "deviation (no rto_min), backing off only while nothing is heard from the peer: repairs the last "
	  "frames of a burst and lost retransmissions sooner, in airtime the link would leave unused" },
	{ "status_interval", CFG_DURATION, F(status_interval_ns), 1 * MS, 10 * S_, NULL, "20ms",
	  "feedback = status: period of status frames while something is new or missing" },
	{ "link_mtu", CFG_UINT, F(link_mtu), 0, 65535, NULL, "0",
	  "fragment packets into frames of at most this many bytes, link header included (Wong/Leung: 128); "
	  "0: one packet per frame" },
	{ "tun_mtu", CFG_UINT, F(tun_mtu), 0, 65535, NULL, "0",
	  "MTU of the TUN device; 0: 1500 when fragmenting, else the link's MTU minus the frame header" },
	{ "tun_queue", CFG_UINT, F(tun_queue), 1, 100000, NULL, "16",
	  "transmit queue of the TUN device, packets: where packets wait (and are dropped, as congestion) while "
	  "the window is full" },
	{ "link_queue", CFG_SIZE, F(link_queue), 4096, 1ULL << 30, NULL, "32KiB",
	  "data frames held by the kernel below arqd (the wireless qdisc) at most, as socket send buffer: "
	  "link acks and retransmissions only overtake what waits in arqd, so keep it near the link's "
	  "bandwidth-delay product (no effect under netem with a delay or rate, which releases the buffer "
	  "at once: window bounds the qdisc there)" },
	{ "link_rate", CFG_RATE, F(link_rate), 0, 1000000000000ULL, NULL, "0bit",
	  "pace frames (data, acks and status alike) at this rate, the radio's: frames then wait in arqd, where "
	  "acks and retransmissions go first, not in a FIFO below it (needed under netem, which hides the "
	  "device's queue); 0bit: no pacing, the device's queue and link_queue push back" },
	{ "link_overhead", CFG_UINT, F(link_overhead), 0, 4096, NULL, "0",
	  "bytes per frame the pacer adds to frame and Ethernet header (netem's packet overhead, a PHY preamble)" },
	{ "pace_frames", CFG_UINT, F(pace_frames), 1, 64, NULL, "2",
	  "with link_rate: how far the paced link may run ahead of the clock, in frames of the largest size the "
	  "link carries; what waits below arqd, where a retransmission cannot overtake it.  Fewer: quicker "
	  "repairs; too few: the radio idles when arqd is scheduled late" },
	{ "tx_buffer", CFG_SIZE, F(tx_buffer), 4096, 1ULL << 32, NULL, "4MiB", "payload bytes the sender holds at most" },
	{ "rx_window", CFG_UINT, F(rx_window), 8, 1u << 20, NULL, "1024",
	  "receive window, frames: duplicates are recognised within it" },
	{ "rx_buffer", CFG_SIZE, F(rx_buffer), 4096, 1ULL << 32, NULL, "4MiB",
	  "bytes held for resequencing and reassembly at most" },
	{ "reseq_timeout", CFG_DURATION, F(reseq_timeout_ns), 1 * MS, 60 * S_, NULL, "500ms",
	  "delivery = resequence: a hole older than this is given up and what waits behind it goes up" },
	{ "reasm_slots", CFG_UINT, F(reasm_slots), 1, 4096, NULL, "64", "packets reassembled at once at most" },
	{ "reasm_timeout", CFG_DURATION, F(reasm_timeout_ns), 1 * MS, 60 * S_, NULL, "2s",
	  "an incomplete packet is dropped after this" },
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

	if (!cfg->link[0]) {
		cfg_err(err, errlen, "link = : missing: name the wireless interface, e.g. link = wlan0");
		return -1;
	}
	if (strlen(cfg->link) >= CFG_IFNAMSIZ) {
		cfg_err(err, errlen, "link = %s: not an interface name (at most 15 characters)", cfg->link);
		return -1;
	}
	if (!cfg->tun[0] || strlen(cfg->tun) >= CFG_IFNAMSIZ || strchr(cfg->tun, '/')) {
		cfg_err(err, errlen, "tun = %s: not an interface name (1 to 15 characters)", cfg->tun);
		return -1;
	}
	if (parse_mac(cfg->peer_mac, cfg->peer) < 0) {
		cfg_err(err, errlen, "peer_mac = %s: expected an Ethernet address like 02:00:0a:0a:02:02",
			cfg->peer_mac);
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
