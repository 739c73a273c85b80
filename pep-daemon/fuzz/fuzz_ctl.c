// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: control requests (ctl_parse_request), the one parser
 * of what a client of the control socket sends.  Any bytes: a request or
 * one line of error, never a crash.  A request keeps its promises (a known
 * verb, at most CTL_MAX_LIST entries) and, written back in its canonical
 * form, parses to itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"

#include "promise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_request req, again;
	char err[160], line[64];
	int n;

	if (size > CTL_REQUEST_MAX)
		return 0;	/* the server never hands the parser more */
	err[0] = '\0';
	if (ctl_parse_request((const char *)data, size, &req, err, sizeof(err)) < 0) {
		PROMISE(err[0] && !strchr(err, '\n'));
		return 0;
	}
	PROMISE(req.verb == CTL_PING || req.verb == CTL_STATS);
	PROMISE(req.list_limit <= CTL_MAX_LIST);
	if (req.verb == CTL_PING)
		n = snprintf(line, sizeof(line), "ping");
	else
		n = snprintf(line, sizeof(line), "stats%s %u", req.json ? " json" : "", req.list_limit);
	PROMISE(ctl_parse_request(line, (size_t)n, &again, err, sizeof(err)) == 0);
	PROMISE(again.verb == req.verb && (req.verb == CTL_PING || (again.json == req.json &&
								    again.list_limit == req.list_limit)));
	return 0;
}
