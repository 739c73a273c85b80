// SPDX-License-Identifier: GPL-2.0-only
/* libFuzzer target: the configuration parser.  Errors are one line, never a crash. */
#include <stdint.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pep_config cfg;
	char err[PEP_ERR_MAX];

	config_defaults(&cfg);
	err[0] = '\0';
	if (config_load_text(&cfg, (const char *)data, size, "fuzz.conf", err, sizeof(err)) < 0) {
		if (!err[0] || strchr(err, '\n'))
			__builtin_trap();	/* an error must say something, on one line */
		return 0;
	}
	config_check(&cfg, err, sizeof(err));
	return 0;
}
