/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control socket (pepd and arqd): a Unix stream socket that answers one request line
 * per connection ("ping"; "stats", "stats json", optionally followed by the
 * largest number of flows to list) and closes.  Root only (mode 0600).
 */
#ifndef PEPD_CTL_H
#define PEPD_CTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

/* Render the daemon's statistics (human or JSON, as j says); max_flows for pepd's flow list. */
typedef void (*ctl_report_fn)(void *ctx, struct json_out *j, uint32_t max_flows);

/* prog names the daemon in errors ("another pepd is running there"). */
int ctl_listen(const char *path, const char *prog, char *err, size_t errlen);
void ctl_serve(int listen_fd, ctl_report_fn report, void *ctx);

/* Client side: send request, copy the answer to out; 0, or -1 with err (hint appended). */
int ctl_request(const char *path, const char *request, FILE *out, const char *hint, char *err, size_t errlen);

#endif
