/* SPDX-License-Identifier: GPL-2.0-only */
/* arqd's configuration: one table of keys (arq_config.c) for the shared engine (cfgparse.h). */
#ifndef ARQ_CONFIG_H
#define ARQ_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "arq_rx.h"
#include "cfgparse.h"

#define ARQ_MAX_ROUTES 8

enum arq_delivery { DELIVERY_IMMEDIATE, DELIVERY_RESEQUENCE };

struct arq_prefix {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint8_t len;
};

struct arq_config {
	char link[CFG_PATH_MAX];	/* the wireless interface */
	char tun[CFG_PATH_MAX];
	char peer_mac[CFG_PATH_MAX];
	char routes[CFG_PATH_MAX];
	uint32_t table;
	uint32_t rule_priority;
	char control_socket[CFG_PATH_MAX];

	int feedback;		/* enum arq_feedback */
	int delivery;		/* enum arq_delivery */
	uint32_t window;
	uint32_t max_rtx;
	uint64_t rto_initial_ns, rto_min_ns, rto_max_ns;
	bool idle_repair;
	bool timer_restart;
	uint64_t status_interval_ns;
	uint64_t ack_delay_ns;
	uint32_t link_mtu;
	uint32_t tun_mtu;
	uint32_t tun_queue;
	uint64_t link_queue;
	uint64_t link_rate;	/* bits/s; 0: no pacing */
	uint32_t link_overhead;
	uint32_t pace_frames;	/* largest frames allowed to wait below arqd when pacing */
	uint64_t tx_buffer;
	uint32_t rx_window;
	uint64_t rx_buffer;
	uint64_t reseq_timeout_ns;
	uint32_t reasm_slots;
	uint64_t reasm_timeout_ns;

	/* derived by arq_config_check */
	uint8_t peer[6];
	struct arq_prefix prefix[ARQ_MAX_ROUTES];
	uint32_t nprefix;
};

extern const struct cfg_schema arqd_schema;

/* Cross-key checks, and parse peer_mac and routes; -1 and one line in err. */
int arq_config_check(struct arq_config *cfg, char *err, size_t errlen);

/* The control socket path (control_socket, or /run/arqd/arqd-LINK.sock). */
void arq_ctl_path(const struct arq_config *cfg, char *path, size_t len);

#endif
