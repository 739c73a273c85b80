"""The competing wired flow (experiment [competing]): two flows, one result."""

from __future__ import annotations

from pathlib import Path

from airtcp import result

from .conftest import airtcp, write_profile

WIRED_MBPS = 4.0


def test_two_flows_share_the_wired_link_and_both_are_recorded(tmp_path: Path) -> None:
    # The wired link is the bottleneck of both flows (4 < 11 Mbit/s), its
    # queue at router R (at S, drops would be local congestion signals,
    # not losses); a little loss on the wireless hop gives SNACK something to do.
    profile = write_profile(
        tmp_path,
        "twoflow",
        f"""
description = "two-flow test path"
[links.internet]
rate = "100mbit"
delay = "1ms"
[links.wired]
rate = "{WIRED_MBPS:g}mbit"
delay = "5ms"
queue = 21
[links.wireless]
rate = "11mbit"
delay = "5ms"
queue = 21
loss = "0.5%"
""",
    )
    experiment = tmp_path / "two-flows.toml"
    experiment.write_text(
        f'description = "two flows"\nprofile = "{profile}"\nduration = "6s"\n'
        'schemes = ["snack-eval/snack"]\nsenders = ["reno-sack"]\n'
        '[competing]\nsender = "reno-classic"\n'
    )
    out = tmp_path / "r.json"
    done = airtcp("run", "--experiment", str(experiment), "--out", str(out), "--backend", "native", "--no-plot")
    assert done.returncode == 0, done.stdout + done.stderr
    (case,) = result.load(out)["cases"]
    (run,) = case["runs"]
    assert run["error"] is None
    own, rival = run["transfer"], run["competing"]["transfer"]
    assert own["goodput_mbps"] > 0.3 and rival["goodput_mbps"] > 0.3, (own["goodput_mbps"], rival["goodput_mbps"])
    # Each figure is bytes over its own receiver's seconds, and the two windows are up to
    # start_offset_s apart: over 6 s the sum may pass the rate by several per cent (a fresh
    # make test gave 4.33).  Paths that did not share the link would give more than 8.
    total = own["goodput_mbps"] + rival["goodput_mbps"]
    assert total < WIRED_MBPS * 1.15, f"the wired link caps both: {total:.3f} Mbit/s"
    assert own["retransmits"] + rival["retransmits"] > 0, "two Reno flows overflow R's 21-packet queue"
    assert run["competing"]["raw"]["iperf3_client"]["end"]["sender_tcp_congestion"] == "reno"
    assert run["competing"]["start_offset_s"] < 1.0
    # S runs SACK for the transfer; BS refuses it (a listener with tcp_sack
    # = 0 ignores SACK-permitted in the SYN), so the competing flow is
    # classic Reno, never SACK (and so never acts on SNACK either).
    assert run["sysctls"]["s"]["net.ipv4.tcp_sack"] == "1"
    assert run["sysctls"]["bs"]["net.ipv4.tcp_sack"] == "0"
    assert run["competing"]["series"]["ss"], "the competing flow's own ss series"
    assert "competing wired flow" in done.stdout, done.stdout
    report = airtcp("report", str(out), "--no-plot")
    assert report.returncode == 0
    assert f"{rival['goodput_mbps']:.3f}" in report.stdout and f"{own['goodput_mbps']:.3f}" in report.stdout
