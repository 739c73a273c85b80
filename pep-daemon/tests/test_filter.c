// SPDX-License-Identifier: GPL-2.0-only
/*
 * The filter registry against the configuration: every choice of the
 * filter key names a registered filter and every registered filter is a
 * choice, so `filter = NAME` always finds its ops table.
 */
#include "config.h"
#include "filter.h"
#include "json.h"
#include "tcase.h"

static const struct cfg_key *filter_key(void)
{
	size_t i;

	for (i = 0; i < pepd_schema.nkeys; i++)
		if (strcmp(pepd_schema.keys[i].name, "filter") == 0)
			return &pepd_schema.keys[i];
	return NULL;
}

static void choices_are_the_registry(void)
{
	const struct cfg_key *k = filter_key();
	size_t nchoices = 0, nfilters = 0, i;

	CHECK(k && k->type == CFG_ENUM, "the filter key is a choice");
	if (!k)
		return;
	for (i = 0; k->names[i]; i++, nchoices++) {
		const struct pep_filter_ops *ops = filter_find(k->names[i]);

		CHECK(ops && strcmp(ops->name, k->names[i]) == 0, "filter = %s has an ops table", k->names[i]);
		CHECK(strcmp(config_filter_name((enum pep_filter_kind)i), k->names[i]) == 0, "%s: enum and name agree",
		      k->names[i]);
	}
	for (nfilters = 0; pep_filters[nfilters]; nfilters++)
		CHECK(cfg_enum_name(&pepd_schema, "filter", (int)nfilters)[0] != '?', "filter %s is a choice",
		      pep_filters[nfilters]->name);
	CHECK(nchoices == nfilters, "%zu choices, %zu filters", nchoices, nfilters);
	CHECK(!filter_find("snooop") && !filter_find(""), "unknown names find nothing");
}

/* Every ops table has what the daemon calls unconditionally. */
static void ops_are_complete(void)
{
	size_t i;

	for (i = 0; pep_filters[i]; i++) {
		const struct pep_filter_ops *ops = pep_filters[i];

		CHECK(ops->name && ops->init && ops->packet && ops->timer, "%s: name, init, packet, timer", ops->name);
	}
}

/* Each filter's own settings in `pepd stats` come from its ops (report.c knows none of them). */
static void settings_are_the_filters(void)
{
	struct pep_config cfg;
	struct json_out j;

	config_defaults(&cfg);
	jo_init(&j, false);
	jo_obj_begin(&j, NULL);
	filter_find("snoop+")->report_settings(&cfg, &j);
	filter_find("pc")->report_settings(&cfg, &j);
	jo_obj_end(&j);
	CHECK(strcmp(jo_finish(&j), "{\"copies\":2,\"dupack_thresh\":6,\"sack_flows\":\"aside\",\"aside_losses\":2}\n") == 0, "settings: %s", j.buf);
	jo_free(&j);
	CHECK(!filter_find("snoop")->report_settings && !filter_find("passthrough")->report_settings,
	      "snoop and passthrough have no settings of their own in the header");
}

int main(void)
{
	choices_are_the_registry();
	ops_are_complete();
	settings_are_the_filters();
	return tc_report("test_filter");
}
