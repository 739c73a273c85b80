// SPDX-License-Identifier: GPL-2.0-only
/* Control requests: what a client may say, and the one-line error for everything else. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ctl.h"

static const struct {
	const char *line;
	int ok;
	enum ctl_verb verb;
	bool json;
	uint32_t limit;
	const char *err;
} cases[] = {
	{ "ping", 1, CTL_PING, false, CTL_DEFAULT_LIST_LIMIT, NULL },
	{ "ping\r", 1, CTL_PING, false, CTL_DEFAULT_LIST_LIMIT, NULL },
	{ "stats", 1, CTL_STATS, false, CTL_DEFAULT_LIST_LIMIT, NULL },
	{ "stats json", 1, CTL_STATS, true, CTL_DEFAULT_LIST_LIMIT, NULL },
	{ "stats json 256", 1, CTL_STATS, true, 256, NULL },
	{ "stats 0 json", 1, CTL_STATS, true, 0, NULL },
	{ "stats 4294967295", 1, CTL_STATS, false, CTL_MAX_LIST, NULL },	/* capped: bounded work */
	{ "stats 4294967296", 0, 0, 0, 0, "stats: '4294967296' is not json or a number of entries (once each)" },
	{ "stats 010", 0, 0, 0, 0, "stats: '010' is not json or a number of entries (once each)" },
	{ "stats json json", 0, 0, 0, 0, "stats: 'json' is not json or a number of entries (once each)" },
	{ "stats 5 6", 0, 0, 0, 0, "stats: '6' is not json or a number of entries (once each)" },
	{ "stats  json", 0, 0, 0, 0, "stats: words are separated by one space" },
	{ "stats ", 0, 0, 0, 0, "stats: words are separated by one space" },
	{ "statsjson", 0, 0, 0, 0, "unknown request 'statsjson' (expected: ping, or stats [json] [N])" },
	{ "pingx", 0, 0, 0, 0, "unknown request 'pingx' (expected: ping, or stats [json] [N])" },
	{ "", 0, 0, 0, 0, "unknown request '' (expected: ping, or stats [json] [N])" },
	{ "stats\x1b[2J", 0, 0, 0, 0, "byte 5 of the request is not printable ASCII" },
	{ "ping\n", 0, 0, 0, 0, "byte 4 of the request is not printable ASCII" },
};

static void requests(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* exactly the line's bytes, no NUL after them: ASan sees any read past them (strcspn did) */
		size_t len = strlen(cases[i].line);
		char *line = malloc(len ? len : 1), err[160] = "";
		struct ctl_request r;
		int got;

		memcpy(line, cases[i].line, len);
		got = ctl_parse_request(line, len, &r, err, sizeof(err));
		CHECK((got == 0) == (cases[i].ok == 1), "'%s': %d (%s)", cases[i].line, got, err);
		if (cases[i].ok && got == 0)
			CHECK(r.verb == cases[i].verb && r.json == cases[i].json && r.list_limit == cases[i].limit,
			      "'%s': verb %d json %d limit %u", cases[i].line, r.verb, r.json, r.list_limit);
		if (!cases[i].ok)
			CHECK(strcmp(err, cases[i].err) == 0, "'%s':\n  got:  %s\n  want: %s", cases[i].line, err,
			      cases[i].err);
		free(line);
	}
}

int main(void)
{
	requests();
	return tc_report("test_ctl");
}
