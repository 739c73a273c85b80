// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "evloop.h"

uint64_t evloop_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void evloop_init(struct evloop *l)
{
	memset(l, 0, sizeof(*l));
	l->ep_fd = l->timer_fd = l->sig_fd = -1;
}

static int add_raw(struct evloop *l, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(l->ep_fd, EPOLL_CTL_ADD, fd, &ev);
}

int evloop_open(struct evloop *l, char *err, size_t errlen)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	l->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	l->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	l->ep_fd = epoll_create1(EPOLL_CLOEXEC);
	if (l->sig_fd < 0 || l->timer_fd < 0 || l->ep_fd < 0 || add_raw(l, l->timer_fd, EPOLLIN) < 0 ||
	    add_raw(l, l->sig_fd, EPOLLIN) < 0) {
		snprintf(err, errlen, "event loop set-up: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int evloop_open_thread(struct evloop *l, char *err, size_t errlen)
{
	l->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	l->ep_fd = epoll_create1(EPOLL_CLOEXEC);
	if (l->timer_fd < 0 || l->ep_fd < 0 || add_raw(l, l->timer_fd, EPOLLIN) < 0) {
		snprintf(err, errlen, "event loop set-up: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int evloop_add(struct evloop *l, int fd, uint32_t events, evloop_fn fn, void *ctx)
{
	if (l->nh == EVLOOP_MAX_FDS) {
		errno = ENOSPC;
		return -1;
	}
	if (add_raw(l, fd, events) < 0)
		return -1;
	l->h[l->nh].fd = fd;
	l->h[l->nh].fn = fn;
	l->h[l->nh].ctx = ctx;
	l->nh++;
	return 0;
}

int evloop_watch(struct evloop *l, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(l->ep_fd, EPOLL_CTL_MOD, fd, &ev);
}

static void arm(struct evloop *l, uint64_t at)
{
	struct itimerspec its = { 0 };

	/* 0 disarms; a deadline already past fires at once */
	if (at) {
		its.it_value.tv_sec = (time_t)(at / 1000000000ULL);
		its.it_value.tv_nsec = (long)(at % 1000000000ULL);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(l->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

int evloop_run(struct evloop *l, uint64_t (*deadline)(void *ctx), void (*tick)(void *ctx), void *ctx,
	       const char *prog)
{
	struct epoll_event ev[8];
	int n, i, k;

	l->armed = 0;
	arm(l, 0);
	while (!l->stop) {
		uint64_t at = deadline(ctx);

		/* a syscall saved per round: under light load a round is one packet */
		if (at != l->armed) {
			arm(l, at);
			l->armed = at;
		}
		n = epoll_wait(l->ep_fd, ev, 8, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "%s: epoll_wait: %s\n", prog, strerror(errno));
			return -1;
		}
		for (i = 0; i < n; i++) {
			int fd = ev[i].data.fd;

			if (fd == l->timer_fd) {
				uint64_t ticks;

				l->armed = 0;	/* it fired: the same deadline must be armed again if still wanted */
				if (read(l->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
					continue;
			} else if (fd == l->sig_fd && fd >= 0) {
				struct signalfd_siginfo si;

				while (read(l->sig_fd, &si, sizeof(si)) == sizeof(si))
					if (si.ssi_signo != SIGHUP)
						l->stop = true;
			} else {
				for (k = 0; k < l->nh; k++)
					if (l->h[k].fd == fd)
						l->h[k].fn(l->h[k].ctx, ev[i].events);
			}
		}
		tick(ctx);
	}
	return 0;
}

void evloop_close(struct evloop *l)
{
	if (l->timer_fd >= 0)
		close(l->timer_fd);
	if (l->sig_fd >= 0)
		close(l->sig_fd);
	if (l->ep_fd >= 0)
		close(l->ep_fd);
	l->timer_fd = l->sig_fd = l->ep_fd = -1;
	l->nh = 0;
}
