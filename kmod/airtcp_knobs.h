/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Makes the knob list AIRTCP_KNOB_LIST (a file name, see airtcp_pernet.h)
 * into the entries of an array of struct airtcp_knob whose ints live in
 * the per-netns struct AIRTCP_KNOB_OWNER, in the manner of
 * trace/define_trace.h.  No include guard: a module defines the two
 * names, then includes this file between the braces of its array:
 *
 *	#define AIRTCP_KNOB_OWNER struct ddack_net
 *	#define AIRTCP_KNOB_LIST "ddack_knobs.h"
 *	static const struct airtcp_knob ddack_knobs[] = {
 *	(this file)
 *	};
 */
#define AIRTCP_SWITCH(name, sw, meaning) \
	AIRTCP_SWITCH_ENTRY(AIRTCP_KNOB_OWNER, name, sw),
#define AIRTCP_KNOB(name, fn, def, lo, hi, unit, meaning) \
	AIRTCP_KNOB_ENTRY(AIRTCP_KNOB_OWNER, name, fn, def, lo, hi),
#define AIRTCP_LIMIT(name, def, lo, hi, userns_hi, unit, meaning) \
	AIRTCP_LIMIT_ENTRY(AIRTCP_KNOB_OWNER, name, def, lo, hi, userns_hi),
#define AIRTCP_STATUS(name, fn, unit, meaning) \
	AIRTCP_STATUS_ENTRY(AIRTCP_KNOB_OWNER, name, fn),

#include AIRTCP_KNOB_LIST

#undef AIRTCP_SWITCH
#undef AIRTCP_KNOB
#undef AIRTCP_LIMIT
#undef AIRTCP_STATUS
#undef AIRTCP_KNOB_LIST
#undef AIRTCP_KNOB_OWNER
