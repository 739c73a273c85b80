// SPDX-License-Identifier: GPL-2.0-only
/*
 * The queue rules pepd installs on start and removes on exit.
 *
 * The firewall decides first.  pepd's rules sit after every filter rule of
 * the forwarding path, so a packet reaches pepd only once the host's
 * firewall has accepted it, and what pepd passes on or sends in its place
 * (injected copies, repairs, ACKs from what it saw) is what the firewall
 * let through:
 *   nft       a base chain on the forward hook at the last priority there
 *             is (PEPD_NFT_PRIORITY, NF_IP_PRI_LAST): after fw4's, firewalld's,
 *             iptables-nft's and any other filter chain (a drop anywhere
 *             earlier is final; an accept only ends its own chain);
 *   iptables  the security table's FORWARD chain (priority 50, after the
 *             filter table's 0), appended: iptables has no later table.
 *
 * Both directions of TCP through the wireless interface(s) go to one queue
 * (so data and ACKs of a flow are seen in order), skipping packets that
 * carry pepd's mark, with bypass: while no program is bound to the queue
 * (pepd killed), the kernel accepts instead of dropping.  With several
 * queues (queues = N), every rule spreads over the same N queues by the
 * kernel's hash (iptables --queue-balance a:b, nft queue num a-b), which
 * hashes a packet's two addresses in sorted order (nfqueue_hash,
 * include/net/netfilter/nf_queue.h): both directions of a connection land
 * on the same queue, so one thread sees all of it.  Never the CPU fanout
 * (--queue-cpu-fanout, nft's fanout flag): it picks the queue by the CPU
 * a packet arrives on, and a connection's data and ACKs arrive on
 * different CPUs.  Everything lives
 * in one chain (iptables: security PEPD-Q<n>, jumped to from FORWARD) or
 * one table per family (nft: inet pepd_q<n>, bridge pepd_q<n>), named by
 * the queue: an instance's rules are its own, so removal is exact, a
 * restart first clears what a killed predecessor of the same queue left,
 * and `pepd cleanup` of one queue never touches another's.  An interface
 * belongs to one instance: a start refuses one that another queue's rules
 * already claim, since both would act on every one of its packets.
 *
 * A wireless interface that is a bridge port (OpenWrt's wlan0 in br-lan)
 * never appears in the forwarding path's rules: routed packets leave on the
 * bridge, and the port is chosen later, by the bridge.  So, with nft only:
 *   bridge forward  frames bridged to or from the port (LAN <-> wireless);
 *   bridge output   packets routed out of the bridge, towards the port:
 *                   after the whole IP path, firewall included;
 *   bridge input    frames from the port to the host: marked with pepd's
 *                   mark, then queued at the end of the inet forward hook
 *                   (the mark cleared) when routed on, so that the firewall
 *                   has decided before pepd sees them; cleared on input.
 *
 * Flows the filter passes untouched for good (bypass_mark): pepd hands
 * such a flow's packet back with NF_REPEAT and the bypass mark on it; the
 * chain's first rule saves the mark to the connection's conntrack mark,
 * the queue rules skip a connection that carries it and a packet that
 * does, and the chain's last rule clears it from the packet again.  A
 * packet without a connection (conntrack's invalid or untracked) cannot
 * be skipped that way and is queued by a rule of its own, so nothing that
 * pepd saw before is hidden from it by the bypass.  Routed interfaces
 * only (the bridge family has no conntrack), and only for a filter that
 * steps aside (pc): the others would switch conntrack on for nothing.
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
#include <limits.h>
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

/* ---------------------------------------------------------------- interfaces */

uint32_t rules_bypass_mark(const struct pep_config *cfg)
{
	char bridge[PEP_IFNAMSIZ];

	/* only a filter that steps aside asks for it: the others need no conntrack */
	if (cfg->rules == RULES_NONE || !cfg->bypass_mark || cfg->filter != FILTER_PC)
		return 0;
	for (uint32_t i = 0; i < cfg->nwireless; i++) {
		rules_bridge_of(cfg->wireless[i], bridge, sizeof(bridge));
		if (bridge[0])
			return 0;
	}
	return cfg->bypass_mark;
}

void rules_bridge_of(const char *name, char *bridge, size_t len)
{
	char link[PATH_MAX], path[PATH_MAX];
	const char *base;
	ssize_t n;

	bridge[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/net/%s/master", name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	snprintf(path, sizeof(path), "/sys/class/net/%s/bridge", base);
	if (access(path, F_OK) == 0)
		snprintf(bridge, len, "%s", base);
}

/* The wireless interfaces split into routed ones and bridge ports, as nft sets ("a", "b"). */
struct iface_sets {
	char routed[PEP_MAX_IFACES * (PEP_IFNAMSIZ + 4)];
	char ports[PEP_MAX_IFACES * (PEP_IFNAMSIZ + 4)];
	char bridges[PEP_MAX_IFACES * (PEP_IFNAMSIZ + 4)];
	char first_port[PEP_IFNAMSIZ], first_bridge[PEP_IFNAMSIZ];
};

static void set_add(char *set, size_t len, const char *name)
{
	size_t used = strlen(set);
	char quoted[PEP_IFNAMSIZ + 4];

	snprintf(quoted, sizeof(quoted), "\"%s\"", name);
	if (strstr(set, quoted))
		return;		/* two ports of one bridge: the bridge once */
	snprintf(set + used, len - used, "%s%s", used ? ", " : "", quoted);
}

static void iface_sets(const struct pep_config *cfg, struct iface_sets *s)
{
	char bridge[PEP_IFNAMSIZ];
	uint32_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < cfg->nwireless; i++) {
		rules_bridge_of(cfg->wireless[i], bridge, sizeof(bridge));
		if (!bridge[0]) {
			set_add(s->routed, sizeof(s->routed), cfg->wireless[i]);
			continue;
		}
		set_add(s->ports, sizeof(s->ports), cfg->wireless[i]);
		set_add(s->bridges, sizeof(s->bridges), bridge);
		if (!s->first_port[0]) {
			snprintf(s->first_port, sizeof(s->first_port), "%s", cfg->wireless[i]);
			snprintf(s->first_bridge, sizeof(s->first_bridge), "%s", bridge);
		}
	}
}

/* ---------------------------------------------------------------- nft */

/* NF_IP_PRI_LAST: after every other chain on the hook */
#define PEPD_NFT_PRIORITY "2147483647"

static void nft_table(const struct pep_config *cfg, char *name, size_t len)
{
	snprintf(name, len, "pepd_q%" PRIu32, cfg->queue);
}

/* The queue(s) a rule sends to, as nft writes them: "0", or "0-3" spread by the symmetric hash. */
static void nft_queues(const struct pep_config *cfg, uint32_t nqueues, char *spec, size_t len)
{
	if (nqueues > 1)
		snprintf(spec, len, "%" PRIu32 "-%" PRIu32, cfg->queue, cfg->queue + nqueues - 1);
	else
		snprintf(spec, len, "%" PRIu32, cfg->queue);
}

static void nft_queue_rule(struct text *t, const struct pep_config *cfg, const char *queues, const char *match,
			   const char *set)
{
	add(t, "\t\t%s { %s } meta l4proto tcp meta mark & 0x%" PRIx32 " == 0 counter queue num %s bypass\n",
	    match, set, cfg->mark, queues);
}

/* A routed interface's queue rule, with the bypass (see the top of the file) when bypass is set. */
static void nft_routed_rule(struct text *t, const struct pep_config *cfg, const char *queues, const char *match,
			    const char *set, uint32_t bypass)
{
	if (!bypass) {
		nft_queue_rule(t, cfg, queues, match, set);
		return;
	}
	add(t, "\t\t%s { %s } meta l4proto tcp meta mark & 0x%" PRIx32 " == 0 ct state { invalid, untracked } counter "
	    "queue num %s bypass\n", match, set, cfg->mark | bypass, queues);
	add(t, "\t\t%s { %s } meta l4proto tcp meta mark & 0x%" PRIx32 " == 0 ct mark & 0x%" PRIx32 " == 0 counter "
	    "queue num %s bypass\n", match, set, cfg->mark | bypass, bypass, queues);
}

static void nft_chain(struct text *t, const char *name, const char *hook)
{
	add(t, "\tchain %s {\n\t\ttype filter hook %s priority " PEPD_NFT_PRIORITY "; policy accept;\n", name, hook);
}

/* Each family on its own: a kernel without nft's bridge family must not keep the inet table. */
static void nft_remove(const struct pep_config *cfg)
{
	static const char *const families[] = { "inet", "bridge" };
	char *argv[] = { "nft", "-f", "-", NULL };
	char table[32], text[160];
	struct cmd_result r;

	nft_table(cfg, table, sizeof(table));
	for (size_t i = 0; i < 2; i++) {
		/* "add" then "delete": no error when there is none */
		snprintf(text, sizeof(text), "add table %s %s\ndelete table %s %s\n", families[i], table, families[i],
			 table);
		run_cmd(argv, text, &r);
		cmd_result_free(&r);
	}
}

static int nft_install(const struct pep_config *cfg, uint32_t nqueues, uint32_t bypass, char *err, size_t errlen)
{
	char *argv[] = { "nft", "-f", "-", NULL };
	struct iface_sets ifs;
	struct cmd_result r;
	struct text t = { .len = 0 };
	uint32_t mark = cfg->mark, clear = ~cfg->mark;
	char table[32], queues[16];
	int ret;

	nft_table(cfg, table, sizeof(table));
	nft_queues(cfg, nqueues, queues, sizeof(queues));
	iface_sets(cfg, &ifs);
	nft_remove(cfg);	/* what a killed pepd of this queue left */
	/* "add" then "delete" again, in the same transaction: a table created meanwhile cannot stay */
	add(&t, "add table inet %s\ndelete table inet %s\n", table, table);
	if (ifs.ports[0])
		add(&t, "add table bridge %s\ndelete table bridge %s\n", table, table);
	add(&t, "table inet %s {\n", table);
	nft_chain(&t, "forward", "forward");
	if (bypass)
		add(&t, "\t\tmeta mark & 0x%" PRIx32 " == 0x%" PRIx32 " ct mark set ct mark | 0x%" PRIx32 "\n", bypass,
		    bypass, bypass);
	if (ifs.routed[0]) {
		nft_routed_rule(&t, cfg, queues, "oifname", ifs.routed, bypass);
		nft_routed_rule(&t, cfg, queues, "iifname", ifs.routed, bypass);
	}
	if (ifs.ports[0])	/* from a bridge port, routed on: marked by the bridge's input chain below */
		add(&t, "\t\tiifname { %s } meta l4proto tcp meta mark & 0x%" PRIx32 " == 0x%" PRIx32
			" meta mark set meta mark & 0x%" PRIx32 " counter queue num %s bypass\n",
		    ifs.bridges, mark, mark, clear, queues);
	if (bypass)
		add(&t, "\t\tmeta mark & 0x%" PRIx32 " == 0x%" PRIx32 " meta mark set meta mark & 0x%" PRIx32 "\n", bypass,
		    bypass, ~bypass);
	add(&t, "\t}\n");
	if (ifs.ports[0]) {
		nft_chain(&t, "input", "input");
		add(&t, "\t\tiifname { %s } meta mark & 0x%" PRIx32 " == 0x%" PRIx32 " meta mark set meta mark & 0x%"
			PRIx32 "\n", ifs.bridges, mark, mark, clear);
		add(&t, "\t}\n");
	}
	add(&t, "}\n");
	if (ifs.ports[0]) {
		add(&t, "table bridge %s {\n", table);
		nft_chain(&t, "forward", "forward");
		nft_queue_rule(&t, cfg, queues, "oifname", ifs.ports);
		nft_queue_rule(&t, cfg, queues, "iifname", ifs.ports);
		add(&t, "\t}\n");
		nft_chain(&t, "output", "output");
		nft_queue_rule(&t, cfg, queues, "oifname", ifs.ports);
		add(&t, "\t}\n");
		nft_chain(&t, "input", "input");
		add(&t, "\t\tiifname { %s } meta l4proto tcp meta mark & 0x%" PRIx32 " == 0 meta mark set meta mark | 0x%"
			PRIx32 "\n", ifs.ports, mark, mark);
		add(&t, "\t}\n}\n");
	}
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

static int nft_counter(const struct pep_config *cfg, uint64_t *packets)
{
	static const char *const families[] = { "inet", "bridge" };
	char table[32];
	uint64_t sum = 0;
	int ok = 0;

	nft_table(cfg, table, sizeof(table));
	for (size_t i = 0; i < 2; i++) {
		char *argv[] = { "nft", "list", "table", (char *)families[i], table, NULL };
		struct cmd_result r;
		const char *s;

		if (run_cmd(argv, NULL, &r) == 0 && r.out) {
			ok = 1;
			for (s = r.out; (s = strstr(s, "counter packets ")); ) {
				s += strlen("counter packets ");
				sum += strtoull(s, NULL, 10);
			}
		}
		cmd_result_free(&r);
	}
	if (!ok)
		return -1;
	*packets = sum;
	return 0;
}

/*
 * Another queue's nft rules that name one of cfg's interfaces: 1 (and one
 * line in err), 0 when none, -1 when nft cannot tell (not installed).
 */
static int nft_claimed(const struct pep_config *cfg, char *err, size_t errlen)
{
	char *list_argv[] = { "nft", "list", "tables", NULL };
	char mine[32], *line, *saveptr = NULL;
	struct cmd_result r;
	int found = 0;

	nft_table(cfg, mine, sizeof(mine));
	if (run_cmd(list_argv, NULL, &r) < 0 || !r.out) {
		cmd_result_free(&r);
		return -1;
	}
	for (line = strtok_r(r.out, "\n", &saveptr); line && !found; line = strtok_r(NULL, "\n", &saveptr)) {
		char family[16], name[64];
		char *argv[] = { "nft", "list", "table", family, name, NULL };
		struct cmd_result t;

		if (sscanf(line, "table %15s %63s", family, name) != 2 || strncmp(name, "pepd_q", 6) != 0 ||
		    strcmp(name, mine) == 0)
			continue;
		if (run_cmd(argv, NULL, &t) == 0 && t.out) {
			for (uint32_t i = 0; i < cfg->nwireless && !found; i++) {
				char quoted[PEP_IFNAMSIZ + 4];

				snprintf(quoted, sizeof(quoted), "\"%s\"", cfg->wireless[i]);
				if (strstr(t.out, quoted)) {
					snprintf(err, errlen, "wireless = %s: already queued to pepd queue %s (nft table %s %s)",
						 cfg->wireless[i], name + 6, family, name);
					found = 1;
				}
			}
		}
		cmd_result_free(&t);
	}
	cmd_result_free(&r);
	return found;
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

/*
 * The tables pepd's chain may be in: security (where it goes), and mangle
 * (where pepd put it before it queued after the filter table: a start or
 * cleanup after an upgrade removes what an old pepd left there).
 */
static const char *const ipt_tables[] = { "security", "mangle" };

/* Remove our chain and every jump to it from one table, as found in the current ruleset. */
static int ipt_remove_table(const struct pep_config *cfg, const struct ipt_tools *tools, const char *table)
{
	char chain[32], jump[48], header[48], start[16];
	char *save_argv[] = { (char *)tools->save, "-t", (char *)table, NULL };
	char *restore_argv[] = { (char *)tools->restore, "--noflush", "-w", NULL };
	struct cmd_result r;
	struct text t = { .len = 0 };
	bool exists;
	char *line, *saveptr = NULL;
	int ret;

	chain_name(cfg, chain, sizeof(chain));
	snprintf(jump, sizeof(jump), "-j %s", chain);
	snprintf(header, sizeof(header), ":%s ", chain);
	snprintf(start, sizeof(start), "*%s\n", table);
	if (run_cmd(save_argv, NULL, &r) < 0 || !r.out) {
		cmd_result_free(&r);
		return -1;
	}
	exists = strstr(r.out, header) != NULL;
	add(&t, "%s", start);
	for (line = strtok_r(r.out, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr)) {
		size_t ll = strlen(line), jl = strlen(jump);

		if (strncmp(line, "-A FORWARD ", 11) == 0 && ll >= jl && strcmp(line + ll - jl, jump) == 0)
			add(&t, "-D %s\n", line + 3);
	}
	cmd_result_free(&r);
	if (exists)
		add(&t, "-F %s\n-X %s\n", chain, chain);
	add(&t, "COMMIT\n");
	if (!exists && t.len == strlen(start) + strlen("COMMIT\n"))
		return 0;	/* nothing of ours there */
	ret = run_cmd(restore_argv, t.buf, &r);
	cmd_result_free(&r);
	return ret;
}

static void ipt_remove_family(const struct pep_config *cfg, const struct ipt_tools *tools)
{
	for (size_t i = 0; i < sizeof(ipt_tables) / sizeof(ipt_tables[0]); i++)
		ipt_remove_table(cfg, tools, ipt_tables[i]);
}

/* A wireless interface's queue rule one way (dev: -i or -o), with the bypass (see the top of the file) when set. */
static void ipt_queue_rules(struct text *t, const struct pep_config *cfg, const char *chain, const char *dev,
			    const char *ifname, const char *queues, uint32_t bypass)
{
	if (!bypass) {
		add(t, "-A %s %s %s -p tcp -m mark ! --mark 0x%" PRIx32 "/0x%" PRIx32 " -j NFQUEUE %s --queue-bypass\n",
		    chain, dev, ifname, cfg->mark, cfg->mark, queues);
		return;
	}
	/* neither pepd's mark nor the bypass mark on the packet; no bypass mark on its connection */
	add(t, "-A %s %s %s -p tcp -m mark --mark 0x0/0x%" PRIx32 " -m conntrack --ctstate INVALID,UNTRACKED -j NFQUEUE "
	    "%s --queue-bypass\n", chain, dev, ifname, cfg->mark | bypass, queues);
	add(t, "-A %s %s %s -p tcp -m mark --mark 0x0/0x%" PRIx32 " -m connmark --mark 0x0/0x%" PRIx32 " -j NFQUEUE %s "
	    "--queue-bypass\n", chain, dev, ifname, cfg->mark | bypass, bypass, queues);
}

static int ipt_install_family(const struct pep_config *cfg, uint32_t nqueues, uint32_t bypass,
			      const struct ipt_tools *tools, const char *what, char *err, size_t errlen)
{
	char chain[32], queues[48];
	char *restore_argv[] = { (char *)tools->restore, "--noflush", "-w", NULL };
	struct cmd_result r;
	struct text t = { .len = 0 };
	uint32_t i;
	int ret;

	chain_name(cfg, chain, sizeof(chain));
	/* several queues: the address hash (never --queue-cpu-fanout: see the top of the file) */
	if (nqueues > 1)
		snprintf(queues, sizeof(queues), "--queue-balance %" PRIu32 ":%" PRIu32, cfg->queue,
			 cfg->queue + nqueues - 1);
	else
		snprintf(queues, sizeof(queues), "--queue-num %" PRIu32, cfg->queue);
	add(&t, "*security\n:%s - [0:0]\n", chain);
	if (bypass)
		add(&t, "-A %s -m mark --mark 0x%" PRIx32 "/0x%" PRIx32 " -j CONNMARK --or-mark 0x%" PRIx32 "\n", chain,
		    bypass, bypass, bypass);
	for (i = 0; i < cfg->nwireless; i++) {
		ipt_queue_rules(&t, cfg, chain, "-o", cfg->wireless[i], queues, bypass);
		ipt_queue_rules(&t, cfg, chain, "-i", cfg->wireless[i], queues, bypass);
	}
	if (bypass)
		add(&t, "-A %s -m mark --mark 0x%" PRIx32 "/0x%" PRIx32 " -j MARK --and-mark 0x%" PRIx32 "\n", chain,
		    bypass, bypass, ~bypass);
	/* appended: after the security table's own rules too (a drop there stays final) */
	add(&t, "-A FORWARD -j %s\nCOMMIT\n", chain);
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

static int ipt_install(const struct pep_config *cfg, uint32_t nqueues, uint32_t bypass, enum pep_rules_backend b,
		       char *err, size_t errlen)
{
	const struct ipt_tools *tools = ipt_tools(b);
	struct iface_sets ifs;

	iface_sets(cfg, &ifs);
	if (ifs.first_port[0]) {
		snprintf(err, errlen, "wireless = %s is a port of bridge %s: iptables cannot see which port a routed "
			 "packet leaves on; bridged mode needs nft's queue (rules = nft)", ifs.first_port, ifs.first_bridge);
		return -1;
	}
	ipt_remove_family(cfg, &tools[0]);
	ipt_remove_family(cfg, &tools[1]);
	if (ipt_install_family(cfg, nqueues, bypass, &tools[0], "IPv4", err, errlen) < 0)
		return -1;
	if (ipt_install_family(cfg, nqueues, bypass, &tools[1], "IPv6", err, errlen) < 0) {
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
		char *argv[] = { (char *)tools[fam].save, "-c", "-t", "security", NULL };
		struct cmd_result r;
		char *line, *saveptr = NULL;

		if (run_cmd(argv, NULL, &r) < 0 || !r.out) {
			cmd_result_free(&r);
			return -1;
		}
		/* lines look like "[123:4567] -A PEPD-Q0 -o wlan0 ... -j NFQUEUE ..."; only the queue rules count */
		for (line = strtok_r(r.out, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr)) {
			char *close = strchr(line, ']');

			if (line[0] == '[' && close && strncmp(close + 2, rule, strlen(rule)) == 0 && strstr(line, "-j NFQUEUE"))
				sum += strtoull(line + 1, NULL, 10);
		}
		cmd_result_free(&r);
	}
	*packets = sum;
	return 0;
}

/* Another queue's chain (PEPD-Q<n>, n not ours) naming one of cfg's interfaces: as nft_claimed. */
static int ipt_claimed(const struct pep_config *cfg, const struct ipt_tools *tools, char *err, size_t errlen)
{
	char mine[32];
	int found = 0, listed = 0;

	chain_name(cfg, mine, sizeof(mine));
	for (size_t k = 0; k < sizeof(ipt_tables) / sizeof(ipt_tables[0]) && !found; k++) {
		char *argv[] = { (char *)tools->save, "-t", (char *)ipt_tables[k], NULL };
		char *line, *saveptr = NULL;
		struct cmd_result r;

		if (run_cmd(argv, NULL, &r) < 0 || !r.out) {
			cmd_result_free(&r);
			continue;
		}
		listed = 1;
		for (line = strtok_r(r.out, "\n", &saveptr); line && !found; line = strtok_r(NULL, "\n", &saveptr)) {
			char chain[32];

			if (sscanf(line, "-A %31s ", chain) != 1 || strncmp(chain, "PEPD-Q", 6) != 0 ||
			    strcmp(chain, mine) == 0)
				continue;
			for (uint32_t i = 0; i < cfg->nwireless && !found; i++) {
				char o[PEP_IFNAMSIZ + 8], in[PEP_IFNAMSIZ + 8];

				snprintf(o, sizeof(o), " -o %s ", cfg->wireless[i]);
				snprintf(in, sizeof(in), " -i %s ", cfg->wireless[i]);
				if (strstr(line, o) || strstr(line, in)) {
					snprintf(err, errlen, "wireless = %s: already queued to pepd queue %s (%s chain %s)",
						 cfg->wireless[i], chain + 6, tools->save, chain);
					found = 1;
				}
			}
		}
		cmd_result_free(&r);
	}
	return listed ? found : -1;
}

/* ---------------------------------------------------------------- interface */

static int check_exclusive(const struct pep_config *cfg, char *err, size_t errlen)
{
	char why[PEP_ERR_MAX];

	if (nft_claimed(cfg, why, sizeof(why)) > 0 || ipt_claimed(cfg, &ipt_nft[0], why, sizeof(why)) > 0 ||
	    ipt_claimed(cfg, &ipt_nft[1], why, sizeof(why)) > 0 || ipt_claimed(cfg, &ipt_legacy[0], why, sizeof(why)) > 0 ||
	    ipt_claimed(cfg, &ipt_legacy[1], why, sizeof(why)) > 0) {
		snprintf(err, errlen, "%s; an interface belongs to one pepd (stop that one, or remove what a dead one "
			 "left with pepd cleanup --queue N)", why);
		return -1;
	}
	return 0;
}

int rules_install(const struct pep_config *cfg, uint32_t nqueues, uint32_t bypass, enum pep_rules_backend *used,
		  char *err, size_t errlen)
{
	static const enum pep_rules_backend order[] = { RULES_NFT, RULES_IPTABLES_NFT, RULES_IPTABLES_LEGACY };
	char why[3][PEP_ERR_MAX];
	size_t i;

	if (cfg->rules == RULES_NONE) {
		*used = RULES_NONE;
		return 0;
	}
	if (check_exclusive(cfg, err, errlen) < 0)
		return -1;
	for (i = 0; i < 3; i++) {
		enum pep_rules_backend b = order[i];
		int ret;

		if (cfg->rules != RULES_AUTO && cfg->rules != b)
			continue;
		why[i][0] = '\0';
		if (b == RULES_NFT)
			ret = nft_install(cfg, nqueues, bypass, why[i], sizeof(why[i]));
		else
			ret = ipt_install(cfg, nqueues, bypass, b, why[i], sizeof(why[i]));
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

int rules_queue_bound(uint32_t queue, uint32_t *portid)
{
	FILE *f = fopen("/proc/net/netfilter/nfnetlink_queue", "re");
	unsigned int num, peer;
	char line[256];
	int bound = 0;

	if (!f)
		return errno == ENOENT ? 0 : -1;	/* no queue module: nothing bound */
	/* "queue_num peer_portid queue_total copy_mode copy_range dropped user_dropped id_sequence 1" */
	while (!bound && fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %u", &num, &peer) == 2 && num == queue) {
			*portid = peer;
			bound = 1;
		}
	fclose(f);
	return bound;
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
