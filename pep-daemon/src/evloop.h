/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The event loop shared by pepd and arqd: one thread, one epoll set with a
 * timerfd (the daemon's earliest deadline), a signalfd (SIGTERM and SIGINT
 * stop the loop; SIGHUP is ignored) and the control socket (stats), plus
 * the daemon's own descriptors, each with a callback.  After every round
 * the daemon's tick runs its due timers.
 */
#ifndef PEPD_EVLOOP_H
#define PEPD_EVLOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfgparse.h"
#include "ctl.h"

#define EVLOOP_MAX_FDS 8

typedef void (*evloop_fn)(void *ctx, uint32_t events);

struct evloop {
	int ep_fd, timer_fd, sig_fd, ctl_fd;
	char ctl_path[CFG_PATH_MAX];
	bool stop;
	ctl_report_fn report;
	void *report_ctx;
	struct {
		int fd;
		evloop_fn fn;
		void *ctx;
	} h[EVLOOP_MAX_FDS];
	int nh;
};

uint64_t evloop_now_ns(void);

/* Mark every descriptor closed (so evloop_close is safe after any failure). */
void evloop_init(struct evloop *l);

/* Signals, timer, epoll and the control socket at ctl_path; on error one line in err. */
int evloop_open(struct evloop *l, const char *prog, const char *ctl_path, ctl_report_fn report, void *report_ctx,
		char *err, size_t errlen);

/* Watch fd for events (EPOLLIN, EPOLLOUT); fn(ctx, events) when ready. */
int evloop_add(struct evloop *l, int fd, uint32_t events, evloop_fn fn, void *ctx);

/* Change the events watched on fd (e.g. stop reading while a buffer is full). */
int evloop_watch(struct evloop *l, int fd, uint32_t events);

/*
 * Run until SIGTERM/SIGINT: before each wait the timer is armed at
 * deadline(ctx) (absolute CLOCK_MONOTONIC ns; 0: none), after each round
 * tick(ctx) runs.  Returns 0 on a clean stop, -1 if epoll failed.
 */
int evloop_run(struct evloop *l, uint64_t (*deadline)(void *ctx), void (*tick)(void *ctx), void *ctx,
	       const char *prog);

/* Close everything and remove the control socket; idempotent. */
void evloop_close(struct evloop *l);

#endif
