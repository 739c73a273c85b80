// SPDX-License-Identifier: GPL-2.0-only
/*
 * The smallest NFQUEUE consumer that gives packets back: binds queue N
 * (argv[1]), creates the file argv[2] once bound (a test reads our stdout
 * only at exit), and accepts every packet it is
 * handed, so that the hooks after the queueing one run from nf_reinject()
 * in this process's verdict call.  On SIGTERM it prints how many packets
 * it saw.  Used by tests/integration/test_snack.py (an nft "queue" rule in
 * OUTPUT below tcp_snack's receiver hook) and built there with
 * libnetfilter_queue.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop;
static unsigned long packets;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int accept_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg,
			 struct nfq_data *nfa, void *data)
{
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);

	(void)msg;
	(void)data;
	if (!ph)
		return -1;
	packets++;
	return nfq_set_verdict(qh, ntohl(ph->packet_id), NF_ACCEPT, 0, NULL);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct nfq_q_handle *qh;
	FILE *ready;
	struct nfq_handle *h;
	char buf[65536];
	int fd, n;

	if (argc != 3) {
		fprintf(stderr, "usage: %s QUEUE READY_FILE\n", argv[0]);
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	h = nfq_open();
	if (!h || nfq_bind_pf(h, AF_INET) < 0 || nfq_bind_pf(h, AF_INET6) < 0) {
		perror("nfq_open/nfq_bind_pf");
		return 1;
	}
	qh = nfq_create_queue(h, atoi(argv[1]), accept_packet, NULL);
	if (!qh || nfq_set_mode(qh, NFQNL_COPY_PACKET, 0xffff) < 0) {
		perror("nfq_create_queue/nfq_set_mode");
		return 1;
	}
	ready = fopen(argv[2], "w");
	if (!ready || fclose(ready)) {
		perror(argv[2]);
		return 1;
	}
	fd = nfq_fd(h);
	while (!stop) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR || errno == ENOBUFS)
				continue;
			perror("recv");
			return 1;
		}
		nfq_handle_packet(h, buf, n);
	}
	nfq_destroy_queue(qh);
	nfq_close(h);
	printf("packets %lu\n", packets);
	return 0;
}
