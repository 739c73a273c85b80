/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The event loop shared by pepd and arqd: one thread, one epoll set with a
 * timerfd (the daemon's earliest deadline) and a signalfd (SIGTERM and
 * SIGINT stop the loop; SIGHUP is ignored), plus the daemon's own
 * descriptors, each with a callback (among them the control thread's
 * snapshot requests: the control socket itself is served elsewhere,
 * ctl.h).  After every round the daemon's tick runs its due timers.
 */
#ifndef AIRTCP_EVLOOP_H
#define AIRTCP_EVLOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#define EVLOOP_MAX_FDS 8

typedef void (*evloop_fn)(void *ctx, uint32_t events);

struct evloop {
	int ep_fd, timer_fd, sig_fd;
	bool stop;
	uint64_t armed;		/* the deadline the timer holds (0: none): re-armed only when it changes */
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

/* Signals (blocked in this thread and those it starts later), timer and epoll; on error one line in err. */
int evloop_open(struct evloop *l, char *err, size_t errlen);

/*
 * Timer and epoll only, for a thread whose signals another loop takes:
 * it stops when a callback sets l->stop (e.g. on an eventfd).
 */
int evloop_open_thread(struct evloop *l, char *err, size_t errlen);

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

/* Close everything; idempotent. */
void evloop_close(struct evloop *l);

#endif
