// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"

#define DEFAULT_FLOWS_LISTED 64

static int make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

int ctl_listen(const char *path, const char *prog, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "control_socket = %s: path too long", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	if (make_parent(path) < 0) {
		snprintf(err, errlen, "control_socket = %s: cannot create its directory: %s", path, strerror(errno));
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return -1;
	}
	/* a socket file left by a killed daemon: nothing listens on it any more */
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		snprintf(err, errlen, "control_socket = %s: another %s is running there", path, prog);
		close(fd);
		return -1;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || chmod(path, 0600) < 0 || listen(fd, 8) < 0) {
		snprintf(err, errlen, "control_socket = %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

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

void ctl_serve(int listen_fd, ctl_report_fn report, void *ctx)
{
	const struct timeval rcv = { .tv_sec = 0, .tv_usec = 200000 }, snd = { .tv_sec = 1, .tv_usec = 0 };
	char req[128];
	struct json_out j;
	size_t got = 0;
	unsigned long flows = DEFAULT_FLOWS_LISTED;
	bool json;
	char *arg;
	int fd;

	while ((fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		/* a stuck client may delay the data path by these at most */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof(rcv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof(snd));
		got = 0;
		while (got + 1 < sizeof(req)) {
			ssize_t n = read(fd, req + got, sizeof(req) - 1 - got);

			if (n <= 0)
				break;
			got += (size_t)n;
			if (memchr(req, '\n', got))
				break;
		}
		req[got] = '\0';
		req[strcspn(req, "\n")] = '\0';
		if (strcmp(req, "ping") == 0) {
			/* liveness without the cost of a report (which runs the rules tool for its counters) */
			write_all(fd, "pong\n", 5);
			close(fd);
			continue;
		}
		if (strncmp(req, "stats", 5) != 0) {
			static const char msg[] = "error: unknown request (expected: ping, or stats [json] [FLOWS])\n";

			write_all(fd, msg, sizeof(msg) - 1);
			close(fd);
			continue;
		}
		json = strstr(req, "json") != NULL;
		arg = strpbrk(req + 5, "0123456789");
		if (arg)
			flows = strtoul(arg, NULL, 10);
		jo_init(&j, !json);
		report(ctx, &j, flows > UINT32_MAX ? UINT32_MAX : (uint32_t)flows);
		const char *text = jo_finish(&j);

		write_all(fd, text, strlen(text));
		jo_free(&j);
		close(fd);
	}
}

int ctl_request(const char *path, const char *request, FILE *out, const char *hint, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
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
		snprintf(err, errlen, "%s: %s (%s)", path, strerror(errno), hint);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	write_all(fd, request, strlen(request));
	write_all(fd, "\n", 1);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, out);
	close(fd);
	return 0;
}
