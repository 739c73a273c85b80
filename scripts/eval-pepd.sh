#!/usr/bin/env bash
# The pepd evaluation of pep-daemon/README.rst, "Results" (issue 4's
# acceptance points).  Results in results/pepd-*.json (and .png); 5
# interleaved runs of 20 s per case unless RUNS/DURATION say otherwise.
# STEPS selects among:
#
# lossy:   2 Mbit/s, 20 ms, 3 % uniform loss both ways: stock against snoop
#          (experiment pepd-acceptance), cubic and reno-classic;
# clean:   the same path without loss: what snoop costs, cubic;
# fast:    10 Mbit/s, 20 ms, 1 % loss: stock against snoop, cubic;
# bursty:  Huang/Ferng's correlated channel (good 100 ms / bad 5 ms, every
#          packet lost in bad), 512-byte segments: stock, snoop, snoop+2 and
#          snoop+auto (experiment pepd-snoopplus), cubic;
# zeng:    Zeng's delay-variation scenario: stock against pc (experiment
#          zeng-delay-variation), reno-classic and cubic.
set -euo pipefail
cd "$(dirname "$0")/.."
for step in ${STEPS:-lossy clean fast bursty zeng}; do
	args=()
	case $step in
	lossy) args=(--experiment pepd-acceptance --baseline stock/cubic) ;;
	clean) args=(--profile uniform-2m-20ms-0pct --scheme stock,snoop --sender cubic --baseline stock/cubic) ;;
	fast) args=(--profile uniform-10m-20ms-1pct --scheme stock,snoop --sender cubic --baseline stock/cubic) ;;
	bursty) args=(--experiment pepd-snoopplus --baseline snoop/cubic) ;;
	zeng) args=(--experiment zeng-delay-variation --baseline stock/reno-classic) ;;
	*) echo "eval-pepd: unknown step $step (lossy clean fast bursty zeng)" >&2; exit 2 ;;
	esac
	[[ $step == zeng ]] || args+=(--duration "${DURATION:-20s}")
	.venv/bin/airtcp run "${args[@]}" --runs "${RUNS:-5}" --out "results/pepd-$step.json"
done
