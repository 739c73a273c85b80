// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loads unknown_opt.bpf.o (argv[1]) and attaches it to the cgroup v2
 * directory argv[2]; creates the file argv[3] once attached (a test reads
 * our stdout only at exit), keeps it attached until SIGTERM.
 */
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct bpf_program *prog;
	struct bpf_object *obj;
	FILE *ready;
	struct bpf_link *link;
	int cgroup;

	if (argc != 4) {
		fprintf(stderr, "usage: %s BPF_OBJECT CGROUP_DIR READY_FILE\n", argv[0]);
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "cannot load %s\n", argv[1]);
		return 1;
	}
	prog = bpf_object__find_program_by_name(obj, "unknown_opt");
	cgroup = open(argv[2], O_RDONLY | O_DIRECTORY);
	if (!prog || cgroup < 0) {
		fprintf(stderr, "no program, or cannot open %s\n", argv[2]);
		return 1;
	}
	link = bpf_program__attach_cgroup(prog, cgroup);
	if (!link) {
		fprintf(stderr, "cannot attach to %s\n", argv[2]);
		return 1;
	}
	ready = fopen(argv[3], "w");
	if (!ready || fclose(ready)) {
		perror(argv[3]);
		return 1;
	}
	while (!stop)
		pause();
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return 0;
}
