// SPDX-License-Identifier: GPL-2.0-only
/*
 * The queue rules pepd installs on start and removes on exit.
 *
 * Both directions of TCP through the wireless interface(s) go to one queue
 * (so data and ACKs of a flow are seen in order), on the forwarding path
 * only, skipping packets that carry pepd's mark, with bypass: while no
 * program is bound to the queue (pepd killed), the kernel accepts instead
 * of dropping.  Everything lives in one chain (iptables: mangle PEPD-Q<n>,
 * jumped to from FORWARD) or one table (nft: inet pepd_q<n>), so removal
 * is exact and a restart first clears what a killed predecessor left.
 *
 * Each backend is driven through its own command-line tool (nft -f,
 * iptables-restore), a handful of processes at start and stop, none on the
 * data path.  auto tries nft, then iptables-nft, then iptables-legacy: a
 * kernel without nft's queue expression (like this project's host kernel)
 * refuses the nft rule and the next backend is tried.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rules.h"

#define CMD_OUT_MAX (1 << 20)

struct cmd_result {
	int status;		/* exit status, or -1 if it could not run */
	char *out;		/* stdout, NUL-terminated (may be NULL) */
	char err[512];		/* first line(s) of stderr */
};

static void cmd_result_free(struct cmd_result *r)
{
	free(r->out);
	r->out = NULL;
}

/* Run argv with input on stdin; capture stdout and stderr (no shell involved). */
static int run_cmd(char *const argv[], const char *input, struct cmd_result *r)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, errp[2] = { -1, -1 };
	size_t outlen = 0, outcap = 0, errlen = 0, inlen = input ? strlen(input) : 0, inoff = 0;
	int status;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->status = -1;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		snprintf(r->err, sizeof(r->err), "pipe: %s", strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(r->err, sizeof(r->err), "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(errp[1], 2);
		execvp(argv[0], argv);
		dprintf(2, "cannot run %s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(errp[1]);
	in[0] = out[1] = errp[1] = -1;
	if (inlen == 0) {
		close(in[1]);
		in[1] = -1;
	}
	for (;;) {
		struct pollfd pfd[3] = { { in[1], POLLOUT, 0 }, { out[0], POLLIN, 0 }, { errp[0], POLLIN, 0 } };
		char buf[4096];
		ssize_t n;

		if (in[1] < 0 && out[0] < 0 && errp[0] < 0)
			break;
		if (poll(pfd, 3, 10000) <= 0) {
			kill(pid, SIGKILL);
			snprintf(r->err, sizeof(r->err), "%s did not finish within 10 s", argv[0]);
			break;
		}
		if (in[1] >= 0 && pfd[0].revents) {
			n = write(in[1], input + inoff, inlen - inoff);
			if (n > 0)
				inoff += (size_t)n;
			if (n < 0 || inoff == inlen) {
				close(in[1]);
				in[1] = -1;
			}
		}
		if (out[0] >= 0 && pfd[1].revents) {
			n = read(out[0], buf, sizeof(buf));
			if (n <= 0) {
				close(out[0]);
				out[0] = -1;
			} else if (outlen + (size_t)n < CMD_OUT_MAX) {
				if (outlen + (size_t)n + 1 > outcap) {
					size_t ncap = outcap ? outcap * 2 : 8192;
					char *grown;

					while (ncap < outlen + (size_t)n + 1)
						ncap *= 2;
					grown = realloc(r->out, ncap);
					if (!grown)
						continue;
					r->out = grown;
					outcap = ncap;
				}
				memcpy(r->out + outlen, buf, (size_t)n);
				outlen += (size_t)n;
				r->out[outlen] = '\0';
			}
		}
		if (errp[0] >= 0 && pfd[2].revents) {
			n = read(errp[0], buf, sizeof(buf));
			if (n <= 0) {
				close(errp[0]);
				errp[0] = -1;
			} else if (errlen + 1 < sizeof(r->err)) {
				size_t take = (size_t)n < sizeof(r->err) - 1 - errlen ? (size_t)n : sizeof(r->err) - 1 - errlen;

				memcpy(r->err + errlen, buf, take);
				errlen += take;
				r->err[errlen] = '\0';
			}
		}
	}
	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		r->status = WEXITSTATUS(status);
out:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	/* one line: newlines of the tool's message become "; " */
	for (char *c = r->err; *c; c++)
		if (*c == '\n')
			*c = c[1] ? ';' : '\0';
	return r->status == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- text building */

struct text {
	char buf[8192];
	size_t len;
	bool overflow;
};

__attribute__((format(printf, 2, 3))) static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(t->buf) - t->len)
		t->overflow = true;
	else
		t->len += (size_t)n;
}

static void chain_name(const struct pep_config *cfg, char *name, size_t len)
{
	snprintf(name, len, "PEPD-Q%" PRIu32, cfg->queue);
}

/* ---------------------------------------------------------------- nft */

static void nft_table(const struct pep_config *cfg, char *name, size_t len)
{
	snprintf(name, len, "pepd_q%" PRIu32, cfg->queue);
}

static int nft_install(const struct pep_config *cfg, char *err, size_t errlen)
{
	char table[32], ifs[PEP_MAX_IFACES * (PEP_IFNAMSIZ + 4)] = "";
	char *argv[] = { "nft", "-f", "-", NULL };
	struct cmd_result r;
	struct text t = { .len = 0 };
	size_t used = 0;
	uint32_t i;
	int ret;

	nft_table(cfg, table, sizeof(table));
	for (i = 0; i < cfg->nwireless; i++)
		used += (size_t)snprintf(ifs + used, sizeof(ifs) - used, "%s\"%s\"", i ? ", " : "", cfg->wireless[i]);
	/* "add" then "delete" clears a table a killed pepd left, without failing when there is none */
	add(&t, "add table inet %s\ndelete table inet %s\n", table, table);
	add(&t, "table inet %s {\n\tchain forward {\n", table);
	add(&t, "\t\ttype filter hook forward priority mangle; policy accept;\n");
	add(&t, "\t\toifname { %s } meta l4proto tcp meta mark & 0x%" PRIx32
		" == 0 counter queue num %" PRIu32 " bypass\n", ifs, cfg->mark, cfg->queue);
	add(&t, "\t\tiifname { %s } meta l4proto tcp meta mark & 0x%" PRIx32
		" == 0 counter queue num %" PRIu32 " bypass\n", ifs, cfg->mark, cfg->queue);
	add(&t, "\t}\n}\n");
	if (t.overflow) {
		snprintf(err, errlen, "nft: rule text too long");
		return -1;
	}
	ret = run_cmd(argv, t.buf, &r);
	if (ret < 0)
		snprintf(err, errlen, "nft: %s", r.err[0] ? r.err : "failed");
	cmd_result_free(&r);
	return ret;
}

static void nft_remove(const struct pep_config *cfg)
{
	char table[32], text[128];
	char *argv[] = { "nft", "-f", "-", NULL };
	struct cmd_result r;

	nft_table(cfg, table, sizeof(table));
	snprintf(text, sizeof(text), "add table inet %s\ndelete table inet %s\n", table, table);
	run_cmd(argv, text, &r);
	cmd_result_free(&r);
}

static int nft_counter(const struct pep_config *cfg, uint64_t *packets)
{
	char table[32];
	char *argv[] = { "nft", "list", "table", "inet", table, NULL };
	struct cmd_result r;
	const char *s;
	uint64_t sum = 0;

	nft_table(cfg, table, sizeof(table));
	if (run_cmd(argv, NULL, &r) < 0 || !r.out) {
		cmd_result_free(&r);
		return -1;
	}
	for (s = r.out; (s = strstr(s, "counter packets ")); ) {
		s += strlen("counter packets ");
		sum += strtoull(s, NULL, 10);
	}
	cmd_result_free(&r);
	*packets = sum;
	return 0;
}

/* ---------------------------------------------------------------- iptables (both flavours) */

struct ipt_tools {
	const char *save, *restore;
};

static const struct ipt_tools ipt_nft[2] = {
	{ "iptables-nft-save", "iptables-nft-restore" }, { "ip6tables-nft-save", "ip6tables-nft-restore" },
};
static const struct ipt_tools ipt_legacy[2] = {
	{ "iptables-legacy-save", "iptables-legacy-restore" },
	{ "ip6tables-legacy-save", "ip6tables-legacy-restore" },
};

static const struct ipt_tools *ipt_tools(enum pep_rules_backend b)
{
	return b == RULES_IPTABLES_NFT ? ipt_nft : ipt_legacy;
}

/* Remove our chain and every jump to it, as found in the current ruleset. */
static int ipt_remove_family(const struct pep_config *cfg, const struct ipt_tools *tools)
{
	char chain[32], jump[48], header[48];
	char *save_argv[] = { (char *)tools->save, "-t", "mangle", NULL };
	char *restore_argv[] = { (char *)tools->restore, "--noflush", "-w", NULL };
	struct cmd_result r;
	struct text t = { .len = 0 };
	bool exists;
	char *line, *saveptr = NULL;
	int ret;

	chain_name(cfg, chain, sizeof(chain));
	snprintf(jump, sizeof(jump), "-j %s", chain);
	snprintf(header, sizeof(header), ":%s ", chain);
	if (run_cmd(save_argv, NULL, &r) < 0 || !r.out) {
		cmd_result_free(&r);
		return -1;
	}
	exists = strstr(r.out, header) != NULL;
	add(&t, "*mangle\n");
	for (line = strtok_r(r.out, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr)) {
		size_t ll = strlen(line), jl = strlen(jump);

		if (strncmp(line, "-A FORWARD ", 11) == 0 && ll >= jl && strcmp(line + ll - jl, jump) == 0)
			add(&t, "-D %s\n", line + 3);
	}
	cmd_result_free(&r);
	if (exists)
		add(&t, "-F %s\n-X %s\n", chain, chain);
	add(&t, "COMMIT\n");
	if (!exists && t.len == strlen("*mangle\nCOMMIT\n"))
		return 0;	/* nothing of ours there */
	ret = run_cmd(restore_argv, t.buf, &r);
	cmd_result_free(&r);
	return ret;
}

static int ipt_install_family(const struct pep_config *cfg, const struct ipt_tools *tools, const char *what,
			      char *err, size_t errlen)
{
	char chain[32];
	char *restore_argv[] = { (char *)tools->restore, "--noflush", "-w", NULL };
	struct cmd_result r;
	struct text t = { .len = 0 };
	uint32_t i;
	int ret;

	chain_name(cfg, chain, sizeof(chain));
	add(&t, "*mangle\n:%s - [0:0]\n", chain);
	for (i = 0; i < cfg->nwireless; i++) {
		add(&t, "-A %s -o %s -p tcp -m mark ! --mark 0x%" PRIx32 "/0x%" PRIx32
			" -j NFQUEUE --queue-num %" PRIu32 " --queue-bypass\n",
		    chain, cfg->wireless[i], cfg->mark, cfg->mark, cfg->queue);
		add(&t, "-A %s -i %s -p tcp -m mark ! --mark 0x%" PRIx32 "/0x%" PRIx32
			" -j NFQUEUE --queue-num %" PRIu32 " --queue-bypass\n",
		    chain, cfg->wireless[i], cfg->mark, cfg->mark, cfg->queue);
	}
	add(&t, "-I FORWARD 1 -j %s\nCOMMIT\n", chain);
	if (t.overflow) {
		snprintf(err, errlen, "%s: rule text too long", what);
		return -1;
	}
	ret = run_cmd(restore_argv, t.buf, &r);
	if (ret < 0)
		snprintf(err, errlen, "%s: %s", tools->restore, r.err[0] ? r.err : "failed");
	cmd_result_free(&r);
	return ret;
}

static int ipt_install(const struct pep_config *cfg, enum pep_rules_backend b, char *err, size_t errlen)
{
	const struct ipt_tools *tools = ipt_tools(b);

	ipt_remove_family(cfg, &tools[0]);
	ipt_remove_family(cfg, &tools[1]);
	if (ipt_install_family(cfg, &tools[0], "IPv4", err, errlen) < 0)
		return -1;
	if (ipt_install_family(cfg, &tools[1], "IPv6", err, errlen) < 0) {
		ipt_remove_family(cfg, &tools[0]);
		return -1;
	}
	return 0;
}

static int ipt_counter(const struct pep_config *cfg, enum pep_rules_backend b, uint64_t *packets)
{
	const struct ipt_tools *tools = ipt_tools(b);
	char chain[32], rule[48];
	uint64_t sum = 0;
	int fam;

	chain_name(cfg, chain, sizeof(chain));
	snprintf(rule, sizeof(rule), "-A %s ", chain);
	for (fam = 0; fam < 2; fam++) {
		char *argv[] = { (char *)tools[fam].save, "-c", "-t", "mangle", NULL };
		struct cmd_result r;
		char *line, *saveptr = NULL;

		if (run_cmd(argv, NULL, &r) < 0 || !r.out) {
			cmd_result_free(&r);
			return -1;
		}
		/* lines look like "[123:4567] -A PEPD-Q0 -o wlan0 ..." */
		for (line = strtok_r(r.out, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr)) {
			char *close = strchr(line, ']');

			if (line[0] == '[' && close && strncmp(close + 2, rule, strlen(rule)) == 0)
				sum += strtoull(line + 1, NULL, 10);
		}
		cmd_result_free(&r);
	}
	*packets = sum;
	return 0;
}

/* ---------------------------------------------------------------- interface */

int rules_install(const struct pep_config *cfg, enum pep_rules_backend *used, char *err, size_t errlen)
{
	static const enum pep_rules_backend order[] = { RULES_NFT, RULES_IPTABLES_NFT, RULES_IPTABLES_LEGACY };
	char why[3][PEP_ERR_MAX];
	size_t i;

	if (cfg->rules == RULES_NONE) {
		*used = RULES_NONE;
		return 0;
	}
	for (i = 0; i < 3; i++) {
		enum pep_rules_backend b = order[i];
		int ret;

		if (cfg->rules != RULES_AUTO && cfg->rules != b)
			continue;
		why[i][0] = '\0';
		if (b == RULES_NFT)
			ret = nft_install(cfg, why[i], sizeof(why[i]));
		else
			ret = ipt_install(cfg, b, why[i], sizeof(why[i]));
		if (ret == 0) {
			*used = b;
			return 0;
		}
		if (cfg->rules != RULES_AUTO) {
			snprintf(err, errlen, "rules = %s: %s", config_rules_name(b), why[i]);
			return -1;
		}
	}
	snprintf(err, errlen, "rules = auto: no backend could install the queue rules (nft: %s | iptables-nft: %s | "
		 "iptables-legacy: %s)", why[0], why[1], why[2]);
	return -1;
}

void rules_remove(const struct pep_config *cfg, enum pep_rules_backend used)
{
	switch (used) {
	case RULES_NFT:
		nft_remove(cfg);
		break;
	case RULES_IPTABLES_NFT:
	case RULES_IPTABLES_LEGACY:
		ipt_remove_family(cfg, &ipt_tools(used)[0]);
		ipt_remove_family(cfg, &ipt_tools(used)[1]);
		break;
	default:
		break;
	}
}

void rules_remove_all(const struct pep_config *cfg)
{
	if (cfg->rules == RULES_AUTO || cfg->rules == RULES_NFT)
		nft_remove(cfg);
	if (cfg->rules == RULES_AUTO || cfg->rules == RULES_IPTABLES_NFT)
		rules_remove(cfg, RULES_IPTABLES_NFT);
	if (cfg->rules == RULES_AUTO || cfg->rules == RULES_IPTABLES_LEGACY)
		rules_remove(cfg, RULES_IPTABLES_LEGACY);
}

int rules_queued_packets(const struct pep_config *cfg, enum pep_rules_backend used, uint64_t *packets)
{
	switch (used) {
	case RULES_NFT:
		return nft_counter(cfg, packets);
	case RULES_IPTABLES_NFT:
	case RULES_IPTABLES_LEGACY:
		return ipt_counter(cfg, used, packets);
	default:
		return -1;
	}
}
