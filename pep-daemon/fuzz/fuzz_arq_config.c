// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: arqd's configuration, the file parser and then the
 * cross-key check with its own parsers (peer_mac, routes).  An error is one
 * line that says something; a configuration the check accepts keeps its
 * promises: a unicast peer, at most ARQ_MAX_ROUTES prefixes each no longer
 * than its family's address, window <= rx_window.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "arq_config.h"

#include "promise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arq_config cfg;
	char err[CFG_ERR_MAX];
	uint32_t i;

	cfg_defaults(&arqd_schema, &cfg);
	err[0] = '\0';
	if (cfg_load_text(&arqd_schema, &cfg, (const char *)data, size, "fuzz.conf", err, sizeof(err)) < 0) {
		PROMISE(err[0] && !strchr(err, '\n'));
		return 0;
	}
	err[0] = '\0';
	if (arq_config_check(&cfg, err, sizeof(err)) < 0) {
		PROMISE(err[0] && !strchr(err, '\n'));
		return 0;
	}
	PROMISE(!(cfg.peer[0] & 1));
	PROMISE(cfg.nprefix <= ARQ_MAX_ROUTES);
	for (i = 0; i < cfg.nprefix; i++)
		PROMISE((cfg.prefix[i].family == AF_INET && cfg.prefix[i].len <= 32) ||
			(cfg.prefix[i].family == AF_INET6 && cfg.prefix[i].len <= 128));
	PROMISE(cfg.window <= cfg.rx_window && cfg.rto_min_ns <= cfg.rto_max_ns);
	PROMISE(strlen(cfg.link) < CFG_IFNAMSIZ && cfg.tun[0] && strlen(cfg.tun) < CFG_IFNAMSIZ);
	return 0;
}
