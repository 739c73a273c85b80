/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libmnl's socket calls replaced for a test or fuzzer that drives lib/nfq.c
 * without a kernel: opening, binding and options succeed and there is no
 * file descriptor.  The including file defines mnl_socket_recvfrom and
 * mnl_socket_sendto, which carry what it feeds and captures.
 */
#ifndef PEPD_TESTS_MNL_STUB_H
#define PEPD_TESTS_MNL_STUB_H

#include <sys/types.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>

static int fake_socket;

struct mnl_socket *mnl_socket_open(int bus)
{
	(void)bus;
	return (struct mnl_socket *)&fake_socket;
}

int mnl_socket_bind(struct mnl_socket *s, unsigned int groups, pid_t pid)
{
	(void)s;
	(void)groups;
	(void)pid;
	return 0;
}

unsigned int mnl_socket_get_portid(const struct mnl_socket *s)
{
	(void)s;
	return 4242;
}

int mnl_socket_get_fd(const struct mnl_socket *s)
{
	(void)s;
	return -1;
}

int mnl_socket_setsockopt(const struct mnl_socket *s, int type, void *buf, socklen_t len)
{
	(void)s;
	(void)type;
	(void)buf;
	(void)len;
	return 0;
}

int mnl_socket_close(struct mnl_socket *s)
{
	(void)s;
	return 0;
}

#endif
