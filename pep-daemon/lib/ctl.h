/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The control socket of a daemon: a Unix stream socket that answers one
 * request line per connection ("ping"; "stats", "stats json", optionally
 * followed by the largest number of entries to list, e.g. pepd's flows)
 * and closes.
 *
 * It is served by a thread of its own, never by the thread that handles
 * packets: every socket is non-blocking, a connection has CTL_CLIENT_MS in
 * all to send its line and take its answer, at most CTL_MAX_CONNS are open
 * at once, so no client, slow or stuck, holds up anything but itself.
 * State that a packet thread owns is never read by the control thread:
 * the control thread asks the owner for a snapshot (struct ctl_snapshot),
 * the owner renders it at its next turn of its event loop (bounded work:
 * at most CTL_MAX_LIST entries) and hands it over; no lock, no atomic on
 * the data path.  Several owners (one per packet thread) are several
 * snapshots, asked at once and joined by the control thread.
 *
 * Root only: the socket is created mode 0600 (umask while binding, so
 * there is no moment in which others may connect) in a directory that
 * only root (or the daemon's user) may write, and each client's
 * credentials (SO_PEERCRED) must be root's or the daemon's own user's.
 */
#ifndef AIRTCP_CTL_H
#define AIRTCP_CTL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "json.h"

/* entries listed when a request names no number, and at most */
#define CTL_DEFAULT_LIST_LIMIT 64
#define CTL_MAX_LIST 4096
/* a request line, newline included, at most */
#define CTL_REQUEST_MAX 128
#define CTL_MAX_CONNS 8
/* a connection's whole life (its request, its answer) at most */
#define CTL_CLIENT_MS 2000
/* how long the control thread waits for an owner's snapshot */
#define CTL_SNAPSHOT_MS 1000

/* ---------------------------------------------------------------- requests (pure) */

enum ctl_verb { CTL_PING, CTL_STATS };

struct ctl_request {
	enum ctl_verb verb;
	bool json;
	uint32_t list_limit;	/* CTL_DEFAULT_LIST_LIMIT unless named; at most CTL_MAX_LIST */
};

/*
 * One request line (without its newline; a trailing \r is allowed):
 * "ping", or "stats" followed by "json" and a decimal number, each at
 * most once, in any order, separated by single spaces.  0, or -1 and one
 * line in err naming what is wrong.
 */
int ctl_parse_request(const char *line, size_t len, struct ctl_request *req, char *err, size_t errlen);

/* ---------------------------------------------------------------- snapshots (owner <-> control thread) */

enum { CTL_SNAP_IDLE, CTL_SNAP_ASKED, CTL_SNAP_RENDERING, CTL_SNAP_DONE };

struct ctl_snapshot {
	int ask_fd, done_fd;	/* eventfds: the owner watches ask_fd, the asker waits on done_fd */
	atomic_int state;
	uint32_t list_limit;	/* set by the asker before ASKED */
	struct json_out out;	/* rendered by the owner, starting in the state the asker gave */
};

/* Two eventfds; -1 and one line in err (ctl_snapshot_close is then safe). */
int ctl_snapshot_open(struct ctl_snapshot *s, char *err, size_t errlen);
void ctl_snapshot_close(struct ctl_snapshot *s);

/*
 * The owner, when s->ask_fd is readable (from its event loop): if asked,
 * render(ctx, s) fills s->out (and whatever else the owner hands over),
 * then the asker is told.
 */
void ctl_snapshot_serve(struct ctl_snapshot *s, void (*render)(void *ctx, struct ctl_snapshot *s), void *ctx);

/*
 * The control thread: ask for a snapshot whose rendering starts in the
 * state of `at` (jo_fragment) and lists at most list_limit entries; wait
 * at most CTL_SNAPSHOT_MS, or until stop_fd is readable.  0: s->out holds
 * it (the caller splices it and calls jo_free); -1: no answer.
 */
int ctl_snapshot_take(struct ctl_snapshot *s, const struct json_out *at, uint32_t list_limit, int stop_fd);

/* ---------------------------------------------------------------- the server */

struct ctl_counters {
	uint64_t requests;	/* answered */
	uint64_t refused;	/* clients that are not root (or the daemon's user) */
	uint64_t bad_requests;	/* lines that are not a request */
	uint64_t timeouts;	/* connections closed at CTL_CLIENT_MS */
	uint64_t busy;		/* connections refused: CTL_MAX_CONNS open */
};

/* What the daemon answers to a stats request, from the control thread. */
struct ctl_call {
	const struct ctl_request *req;
	int stop_fd;			/* for ctl_snapshot_take */
	const struct ctl_counters *counters;
};

/* The server's counters as an object "control_socket" (from the control thread). */
void ctl_report_counters(struct json_out *j, const struct ctl_counters *cc);

/* Render the daemon's statistics into j (human or JSON, as j says). */
typedef void (*ctl_report_fn)(void *ctx, struct json_out *j, const struct ctl_call *call);

struct ctl_conn {
	int fd;
	uint64_t deadline_ns;
	char in[CTL_REQUEST_MAX];
	size_t inlen;
	char *out;
	size_t outlen, outoff;
};

struct ctl_server {
	int listen_fd, ep_fd, stop_fd;
	char path[108];
	dev_t dev;
	ino_t ino;		/* the socket file we made: unlinked at stop only if still ours */
	const char *prog;
	ctl_report_fn report;
	void *ctx;
	pthread_t thread;
	bool running;
	struct ctl_conn conn[CTL_MAX_CONNS];
	struct ctl_counters cnt;
};

/* Everything closed (so ctl_server_stop is safe after any failure). */
void ctl_server_init(struct ctl_server *s);

/*
 * Create the socket at path (its directory too, mode 0700, if missing);
 * -1 and one line in err, e.g. when another daemon answers there.  Call it
 * before other threads start: it sets the umask for a moment.  Clients
 * may connect from now on; they are answered once the thread runs.
 */
int ctl_server_open(struct ctl_server *s, const char *path, const char *prog, char *err, size_t errlen);

/* Start the thread that serves the socket; -1 and one line in err. */
int ctl_server_start(struct ctl_server *s, ctl_report_fn report, void *ctx, char *err, size_t errlen);

/* Stop the thread, close every connection, remove the socket; idempotent. */
void ctl_server_stop(struct ctl_server *s);

/* Client side: send request, copy the answer to out; 0, or -1 with err (hint appended). */
int ctl_request(const char *path, const char *request, FILE *out, const char *hint, char *err, size_t errlen);

#endif
