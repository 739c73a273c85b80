/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The running daemon: the NFQUEUE socket, the flow table, the injector,
 * the control socket and the event loop that ties them together.
 */
#ifndef PEPD_DAEMON_H
#define PEPD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "evloop.h"
#include "filter.h"
#include "flow.h"
#include "inject.h"
#include "json.h"
#include "stats.h"

struct mnl_socket;
struct mnl_nlmsg_batch;

struct pepd {
	struct pep_config cfg;
	const struct pep_filter_ops *ops;
	struct flow_table ft;
	struct pep_stats stats;
	struct injector inj;
	enum pep_rules_backend rules_used;
	bool rules_installed;

	struct mnl_socket *nl;
	uint32_t portid;
	char *rxbuf;
	size_t rxlen;
	char *txbuf;
	struct mnl_nlmsg_batch *batch;

	uint32_t ifindex[PEP_MAX_IFACES];
	uint64_t ifindex_checked_ns;
	uint64_t foreign_packets;	/* queued but not through a wireless interface */
	uint32_t last_id;
	bool have_id;

	struct evloop loop;
	uint64_t started_ns;
	FILE *trace;
	uint8_t scratch[65536 + 64];
};

/* Set up everything (queue, rules, sockets); on error one line in err. */
int pepd_start(struct pepd *d, const struct pep_config *cfg, char *err, size_t errlen);

/* Run until SIGTERM/SIGINT; returns 0 on a clean stop. */
int pepd_run(struct pepd *d);

/* Undo pepd_start in reverse order (rules first, so traffic never waits on a dead queue). */
void pepd_stop(struct pepd *d);

/* Render statistics (human or JSON) of at most max_flows flows. */
void pepd_report(struct pepd *d, struct json_out *j, uint32_t max_flows);

/* The default control socket path for cfg. */
void pepd_ctl_path(const struct pep_config *cfg, char *path, size_t len);

uint64_t pepd_now_ns(void);

#endif
