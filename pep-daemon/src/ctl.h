/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control socket: a Unix stream socket that answers one request line
 * per connection ("ping"; "stats", "stats json", optionally followed by the
 * largest number of flows to list) and closes.  Root only (mode 0600).
 */
#ifndef PEPD_CTL_H
#define PEPD_CTL_H

#include <stddef.h>
#include <stdio.h>

struct pepd;

int ctl_listen(const char *path, char *err, size_t errlen);
void ctl_serve(int listen_fd, struct pepd *d);

/* Client side: send request, copy the answer to out; 0, or -1 with err. */
int ctl_request(const char *path, const char *request, FILE *out, char *err, size_t errlen);

#endif
