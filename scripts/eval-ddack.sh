#!/usr/bin/env bash
# The tcp_ddack evaluation of Documentation/tcp_ddack.rst, "Evaluation".
# Results in results/ddack-*.json (and .png); about 25 minutes per step in
# the VM on an idle 2-core machine.  STEPS selects among: late fig4-3 fig4-1 adaptive fig7a.
#
# late:    a stand-in for local recovery (3 % of packets arrive 60 ms late,
#          none lost; testbed/airtcp/plugins/late.py) on Vaidya99's path
#          with a 20 ms wireless hop: d = 0 vs 80 ms, and 80 ms with SACK
#          stripping, against reno-classic and cubic;
# adaptive: the same path, fixed d = 80 ms against adaptive d from 200 ms
#          (reno-classic), and SACK stripping again (cubic);
# fig4-P:  Vaidya99 Fig. 4 (no wireless errors, P % congestion loss of data
#          on the wired link): d = 0, 80 ms, 200 ms, and 80 ms with SACK
#          stripping, against reno-classic and cubic;
# fig7a:   Vaidya99 Fig. 7(a) at one point (20 ms wireless delay, byte
#          errors every 32 KiB on average): base TCP, local recovery by
#          pepd with every ACK passed (the stand-in link layer) under
#          d = 0 and d = 80 ms, and Snoop, against reno-classic and cubic.
# 5 interleaved runs of 20 s per case.
set -euo pipefail
cd "$(dirname "$0")/.."
eval=testbed/schemes/ddack-eval
for step in ${STEPS:-late fig4-3 fig4-1}; do
	senders=	# each scheme's own unless the step says
	case $step in
	late)
		profile=netem-profiles/vaidya-20ms-clean.toml
		schemes=$eval/late-d0.toml,$eval/late-d80.toml,$eval/late-strip80.toml
		baseline=late-d0/reno-classic ;;
	adaptive)
		profile=netem-profiles/vaidya-20ms-clean.toml
		schemes=$eval/late-d80.toml,$eval/late-strip80.toml,$eval/late-adaptive.toml
		baseline=late-d80/reno-classic ;;
	fig7a)
		profile=netem-profiles/vaidya99-exp32k-20ms.toml
		schemes=stock,$eval/snooprtx-d0.toml,$eval/snooprtx-d80.toml,snoop
		baseline=stock/reno-classic
		senders=reno-classic,cubic ;;
	fig4-*)
		profile=netem-profiles/vaidya-20ms-cong${step#fig4-}pct.toml
		schemes=$eval/d0.toml,ddack,$eval/d200.toml,ddack-strip
		baseline=d0/reno-classic ;;
	*) echo "eval-ddack: unknown step $step" >&2; exit 2 ;;
	esac
	.venv/bin/airtcp run --profile "$profile" --scheme "$schemes" --runs "${RUNS:-5}" \
		--duration "${DURATION:-20s}" --baseline "$baseline" ${senders:+--sender "$senders"} --out "results/ddack-$step.json"
done
