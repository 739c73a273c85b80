/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The routes that steer traffic into arqd's TUN device: one table holding
 * a route per prefix via the device and one rule per address family
 * pointing lookups at it, so the main table is never edited.
 */
#ifndef ARQD_ROUTES_H
#define ARQD_ROUTES_H

#include <stdbool.h>
#include <stddef.h>

#include "arq_config.h"

struct arq_routes {
	bool rule_installed[2];	/* IPv4, IPv6 */
};

/* Route cfg's prefixes into the device tun_ifindex; on error one line in err (what is in place stays recorded). */
int routes_install(struct arq_routes *r, const struct arq_config *cfg, int tun_ifindex, char *err, size_t errlen);

/* Delete the rules routes_install added (the routes go with the device); idempotent. */
void routes_remove(struct arq_routes *r, const struct arq_config *cfg);

#endif
