// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- requests */

/* a decimal number of at most 10 digits, no leading zero, at most UINT32_MAX */
static bool parse_count(const char *s, size_t len, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!len || len > 10 || (len > 1 && s[0] == '0'))
		return false;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

int ctl_parse_request(const char *line, size_t len, struct ctl_request *req, char *err, size_t errlen)
{
	bool have_json = false, have_count = false;
	size_t pos = 0;

	memset(req, 0, sizeof(*req));
	req->list_limit = CTL_DEFAULT_LIST_LIMIT;
	if (len && line[len - 1] == '\r')
		len--;
	/* printable ASCII only: what is wrong is echoed back in the error */
	for (pos = 0; pos < len; pos++) {
		if ((unsigned char)line[pos] < 0x20 || (unsigned char)line[pos] >= 0x7f) {
			snprintf(err, errlen, "byte %zu of the request is not printable ASCII", pos);
			return -1;
		}
	}
	if (len == 4 && memcmp(line, "ping", 4) == 0) {
		req->verb = CTL_PING;
		return 0;
	}
	if (len < 5 || memcmp(line, "stats", 5) != 0 || (len > 5 && line[5] != ' ')) {
		snprintf(err, errlen, "unknown request '%.*s' (expected: ping, or stats [json] [N])",
			 (int)(len > 32 ? 32 : len), line);
		return -1;
	}
	req->verb = CTL_STATS;
	pos = 5;
	while (pos < len) {
		const char *word, *space;
		size_t n;
		uint32_t count;

		if (line[pos] != ' ' || pos + 1 == len || line[pos + 1] == ' ') {
			snprintf(err, errlen, "stats: words are separated by one space");
			return -1;
		}
		word = line + ++pos;
		/* the line is not NUL-terminated: never strcspn (found by fuzz_ctl) */
		space = memchr(word, ' ', len - pos);
		n = space ? (size_t)(space - word) : len - pos;
		if (n == 4 && memcmp(word, "json", 4) == 0 && !have_json) {
			have_json = req->json = true;
		} else if (!have_count && parse_count(word, n, &count)) {
			have_count = true;
			req->list_limit = count > CTL_MAX_LIST ? CTL_MAX_LIST : count;
		} else {
			snprintf(err, errlen, "stats: '%.*s' is not json or a number of entries (once each)",
				 (int)(n > 32 ? 32 : n), word);
			return -1;
		}
		pos += n;
	}
	return 0;
}

/* ---------------------------------------------------------------- snapshots */

int ctl_snapshot_open(struct ctl_snapshot *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	atomic_init(&s->state, CTL_SNAP_IDLE);
	s->ask_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->ask_fd < 0 || s->done_fd < 0) {
		snprintf(err, errlen, "control socket: eventfd: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void ctl_snapshot_close(struct ctl_snapshot *s)
{
	if (s->ask_fd >= 0)
		close(s->ask_fd);
	if (s->done_fd >= 0)
		close(s->done_fd);
	s->ask_fd = s->done_fd = -1;
	jo_free(&s->out);
}

static void drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) == sizeof(v))
		;
}

static void kick(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the other side is woken anyway */
	}
}

void ctl_snapshot_serve(struct ctl_snapshot *s, void (*render)(void *ctx, struct ctl_snapshot *s), void *ctx)
{
	int asked = CTL_SNAP_ASKED;

	drain(s->ask_fd);
	/* the asker may have given up (a timeout): then nothing is rendered */
	if (!atomic_compare_exchange_strong_explicit(&s->state, &asked, CTL_SNAP_RENDERING, memory_order_acquire,
						     memory_order_relaxed))
		return;
	render(ctx, s);
	atomic_store_explicit(&s->state, CTL_SNAP_DONE, memory_order_release);
	kick(s->done_fd);
}

int ctl_snapshot_take(struct ctl_snapshot *s, const struct json_out *at, uint32_t list_limit, int stop_fd)
{
	uint64_t deadline = now_ns() + (uint64_t)CTL_SNAPSHOT_MS * 1000000ULL;
	bool stopping = false;

	drain(s->done_fd);
	jo_fragment(&s->out, at);
	s->list_limit = list_limit;
	atomic_store_explicit(&s->state, CTL_SNAP_ASKED, memory_order_release);
	kick(s->ask_fd);
	while (atomic_load_explicit(&s->state, memory_order_acquire) != CTL_SNAP_DONE) {
		struct pollfd p[2] = { { .fd = s->done_fd, .events = POLLIN }, { .fd = stop_fd, .events = POLLIN } };
		uint64_t now = now_ns();

		if (stopping || now >= deadline) {
			int asked = CTL_SNAP_ASKED;

			if (atomic_compare_exchange_strong(&s->state, &asked, CTL_SNAP_IDLE)) {
				jo_free(&s->out);
				return -1;
			}
			/* the owner has begun: it finishes soon (bounded work), whatever happens here */
			poll(p, 1, 10);
			drain(s->done_fd);
			continue;
		}
		if (poll(p, 2, (int)((deadline - now) / 1000000ULL) + 1) > 0 && (p[1].revents & POLLIN))
			stopping = true;	/* stop_fd stays readable: the server loop sees it too */
		drain(s->done_fd);
	}
	atomic_store_explicit(&s->state, CTL_SNAP_IDLE, memory_order_relaxed);
	return 0;
}

/* ---------------------------------------------------------------- creating the socket */

/*
 * The socket's directory: created 0700 if missing; if it exists, it must
 * be a real directory that only root or we can write to (or sticky, like
 * /tmp), or someone else could replace the socket under our feet.
 */
static int safe_directory(const char *path, char *err, size_t errlen)
{
	char copy[sizeof(((struct sockaddr_un *)0)->sun_path)], *dir;
	struct stat st;

	snprintf(copy, sizeof(copy), "%s", path);
	dir = dirname(copy);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "control_socket = %s: cannot create %s: %s", path, dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) < 0) {
		snprintf(err, errlen, "control_socket = %s: %s: %s", path, dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "control_socket = %s: %s is not a directory", path, dir);
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(err, errlen, "control_socket = %s: %s belongs to uid %u, not root", path, dir,
			 (unsigned int)st.st_uid);
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(err, errlen, "control_socket = %s: %s is writable by others (mode %o)", path, dir,
			 (unsigned int)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

static int make_listener(struct ctl_server *s, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof(sun.sun_path) || strlen(path) >= sizeof(s->path)) {
		snprintf(err, errlen, "control_socket = %s: path too long", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	if (safe_directory(path, err, errlen) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return -1;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "control_socket = %s: exists and is not a socket", path);
			close(fd);
			return -1;
		}
		/* a socket file left by a killed daemon: nothing listens on it any more */
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 || errno == EAGAIN) {
			snprintf(err, errlen, "control_socket = %s: another %s is running there", path, s->prog);
			close(fd);
			return -1;
		}
		unlink(path);
		close(fd);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0) {
			snprintf(err, errlen, "control socket: %s", strerror(errno));
			return -1;
		}
	}
	/* mode 0600 from the moment the file exists: nobody else can ever connect */
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (r < 0 || lstat(path, &st) < 0 || listen(fd, CTL_MAX_CONNS) < 0) {
		snprintf(err, errlen, "control_socket = %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	return fd;
}

/* ---------------------------------------------------------------- serving */

static void conn_close(struct ctl_server *s, struct ctl_conn *c)
{
	if (c->fd >= 0) {
		epoll_ctl(s->ep_fd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Send what is left of the answer; true when all of it went (or the client is gone). */
static bool conn_flush(struct ctl_conn *c)
{
	while (c->outoff < c->outlen) {
		ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0)
			return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
		c->outoff += (size_t)n;
	}
	return true;
}

static void conn_answer(struct ctl_server *s, struct ctl_conn *c, char *text, size_t len)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = c };

	free(c->out);
	c->out = text;
	c->outlen = len;
	c->outoff = 0;
	if (conn_flush(c))
		conn_close(s, c);
	else
		epoll_ctl(s->ep_fd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void conn_answer_text(struct ctl_server *s, struct ctl_conn *c, const char *text)
{
	char *copy = strdup(text);

	if (!copy) {
		conn_close(s, c);
		return;
	}
	conn_answer(s, c, copy, strlen(copy));
}

static void handle_request(struct ctl_server *s, struct ctl_conn *c, size_t len)
{
	struct ctl_request req;
	struct ctl_call call = { .req = &req, .stop_fd = s->stop_fd, .counters = &s->cnt };
	char err[160], line[200];
	struct json_out j;

	if (ctl_parse_request(c->in, len, &req, err, sizeof(err)) < 0) {
		s->cnt.bad_requests++;
		snprintf(line, sizeof(line), "error: %s\n", err);
		conn_answer_text(s, c, line);
		return;
	}
	s->cnt.requests++;
	if (req.verb == CTL_PING) {
		/* liveness, without asking any other thread */
		conn_answer_text(s, c, "pong\n");
		return;
	}
	jo_init(&j, !req.json);
	s->report(s->ctx, &j, &call);
	jo_finish(&j);
	if (j.failed || !j.buf) {
		jo_free(&j);
		conn_answer_text(s, c, "error: out of memory\n");
		return;
	}
	conn_answer(s, c, j.buf, j.len);	/* the buffer is the connection's now */
}

static void conn_read(struct ctl_server *s, struct ctl_conn *c)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, MSG_DONTWAIT);
		char *nl;

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			conn_close(s, c);
			return;
		}
		if (n == 0) {
			/* the client said all it had: that is its request */
			if (!c->inlen) {
				conn_close(s, c);
				return;
			}
			handle_request(s, c, c->inlen);
			return;
		}
		c->inlen += (size_t)n;
		nl = memchr(c->in, '\n', c->inlen);
		if (nl) {
			handle_request(s, c, (size_t)(nl - c->in));
			return;
		}
		if (c->inlen == sizeof(c->in)) {
			s->cnt.bad_requests++;
			conn_answer_text(s, c, "error: request line too long\n");
			return;
		}
	}
}

/* root, or the user the daemon runs as */
static bool peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof(cred))
		return false;
	return cred.uid == 0 || cred.uid == geteuid();
}

static void accept_all(struct ctl_server *s)
{
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), i;
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };

		if (fd < 0)
			return;
		if (!peer_allowed(fd)) {
			static const char msg[] = "error: permission denied\n";

			s->cnt.refused++;
			if (send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
				/* it is refused either way */
			}
			close(fd);
			continue;
		}
		for (i = 0; i < CTL_MAX_CONNS && s->conn[i].fd >= 0; i++)
			;
		if (i == CTL_MAX_CONNS) {
			s->cnt.busy++;
			close(fd);
			continue;
		}
		s->conn[i].fd = fd;
		s->conn[i].deadline_ns = now_ns() + (uint64_t)CTL_CLIENT_MS * 1000000ULL;
		ev.data.ptr = &s->conn[i];
		if (epoll_ctl(s->ep_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
			conn_close(s, &s->conn[i]);
	}
}

/* Connections past their time are closed; the wait until the next deadline (ms), -1: none. */
static int expire(struct ctl_server *s)
{
	uint64_t now = now_ns(), next = 0;
	int i;

	for (i = 0; i < CTL_MAX_CONNS; i++) {
		struct ctl_conn *c = &s->conn[i];

		if (c->fd < 0)
			continue;
		if (c->deadline_ns <= now) {
			s->cnt.timeouts++;
			conn_close(s, c);
		} else if (!next || c->deadline_ns < next) {
			next = c->deadline_ns;
		}
	}
	return next ? (int)((next - now) / 1000000ULL) + 1 : -1;
}

static void *serve(void *arg)
{
	struct ctl_server *s = arg;
	struct epoll_event ev[CTL_MAX_CONNS + 2];

	for (;;) {
		int n = epoll_wait(s->ep_fd, ev, CTL_MAX_CONNS + 2, expire(s)), i;

		if (n < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			struct ctl_conn *c = ev[i].data.ptr;

			if (c == NULL) {
				accept_all(s);
			} else if ((void *)c == (void *)s) {
				return NULL;	/* stop_fd */
			} else if (c->out) {
				if (conn_flush(c))
					conn_close(s, c);
			} else {
				conn_read(s, c);
			}
		}
	}
	return NULL;
}

void ctl_server_init(struct ctl_server *s)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->listen_fd = s->ep_fd = s->stop_fd = -1;
	for (i = 0; i < CTL_MAX_CONNS; i++)
		s->conn[i].fd = -1;
}

int ctl_server_open(struct ctl_server *s, const char *path, const char *prog, char *err, size_t errlen)
{
	s->prog = prog;
	s->listen_fd = make_listener(s, path, err, errlen);
	return s->listen_fd < 0 ? -1 : 0;
}

int ctl_server_start(struct ctl_server *s, ctl_report_fn report, void *ctx, char *err, size_t errlen)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t all, old;
	int r;

	s->report = report;
	s->ctx = ctx;
	s->ep_fd = epoll_create1(EPOLL_CLOEXEC);
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ev.data.ptr = NULL;
	if (s->ep_fd < 0 || s->stop_fd < 0 || epoll_ctl(s->ep_fd, EPOLL_CTL_ADD, s->listen_fd, &ev) < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return -1;
	}
	ev.data.ptr = s;
	if (epoll_ctl(s->ep_fd, EPOLL_CTL_ADD, s->stop_fd, &ev) < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return -1;
	}
	/* signals are the main thread's (its signalfd): the control thread takes none */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&s->thread, NULL, serve, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		snprintf(err, errlen, "control socket: thread: %s", strerror(r));
		return -1;
	}
	s->running = true;
	return 0;
}

void ctl_server_stop(struct ctl_server *s)
{
	struct stat st;
	int i;

	if (s->running) {
		kick(s->stop_fd);
		pthread_join(s->thread, NULL);
		s->running = false;
	}
	for (i = 0; i < CTL_MAX_CONNS; i++)
		if (s->conn[i].fd >= 0)
			conn_close(s, &s->conn[i]);
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		/* only our own socket file: a successor may have made its own there */
		if (lstat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
			unlink(s->path);
	}
	if (s->ep_fd >= 0)
		close(s->ep_fd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	s->listen_fd = s->ep_fd = s->stop_fd = -1;
}

void ctl_report_counters(struct json_out *j, const struct ctl_counters *cc)
{
	jo_obj_begin(j, "control_socket");
	jo_u64(j, "requests", cc->requests);
	jo_u64(j, "refused", cc->refused);
	jo_u64(j, "bad_requests", cc->bad_requests);
	jo_u64(j, "timeouts", cc->timeouts);
	jo_u64(j, "busy", cc->busy);
	jo_obj_end(j);
}

/* ---------------------------------------------------------------- client */

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

int ctl_request(const char *path, const char *request, FILE *out, const char *hint, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const struct timeval limit = { .tv_sec = 10 };
	char buf[8192];
	ssize_t n;
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		snprintf(err, errlen, "%s: %s (%s)", path, strerror(errno), errno == EACCES ? "root only" : hint);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
	write_all(fd, request, strlen(request));
	write_all(fd, "\n", 1);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, out);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "%s: no answer: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
