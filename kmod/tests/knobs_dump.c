// SPDX-License-Identifier: GPL-2.0-only
/*
 * Prints the modules' knob lists (ddack_knobs.h, snack_knobs.h) as JSON:
 * kmod/knobs.json (`make -C kmod knobs`), which the testbed's plugins read
 * and against which tests/unit/test_kmod_knobs.py checks the
 * documentation.  The compiler evaluates the lists' expressions
 * (SNACK_MAX_VEC ...), so the file says what the modules build.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../ddack_dda.h"
#include "../snack_codec.h"

/* Meanings are plain text: nothing JSON would need escaped. */
static const char *text(const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) {
			fprintf(stderr, "knobs_dump: cannot print %s\n", s);
			exit(1);
		}
	return s;
}

static int first;

static void knob(const char *name, const char *kind, int def, int min,
		 int max, int userns_max, const char *unit, const char *meaning)
{
	printf("%s\n      {\"name\": \"%s\", \"kind\": \"%s\", ",
	       first ? "" : ",", text(name), kind);
	if (min <= max)
		printf("\"default\": %d, \"min\": %d, \"max\": %d, ",
		       def, min, max);
	if (userns_max < max)
		printf("\"userns_max\": %d, ", userns_max);
	printf("\"unit\": \"%s\", \"meaning\": \"%s\"}", text(unit),
	       text(meaning));
	first = 0;
}

#define AIRTCP_SWITCH(name, sw, meaning) \
	knob(#name, "switch", 0, 0, 1, 1, "bool", meaning);
#define AIRTCP_KNOB(name, fn, def, lo, hi, unit, meaning) \
	knob(#name, "knob", def, lo, hi, hi, unit, meaning);
#define AIRTCP_LIMIT(name, def, lo, hi, userns_hi, unit, meaning) \
	knob(#name, "knob", def, lo, hi, userns_hi, unit, meaning);
#define AIRTCP_STATUS(name, fn, unit, meaning) \
	knob(#name, "status", 0, 1, 0, 0, unit, meaning);

int main(void)
{
	printf("{\n  \"tcp_ddack\": {\n    \"sysctl\": \"net.tcp_ddack\",\n");
	printf("    \"knobs\": [");
	first = 1;
#include "../ddack_knobs.h"
	printf("\n    ]\n  },\n  \"tcp_snack\": {\n");
	printf("    \"sysctl\": \"net.tcp_snack\",\n    \"knobs\": [");
	first = 1;
#include "../snack_knobs.h"
	printf("\n    ]\n  }\n}\n");
	return 0;
}
