"""Calibration of the channel models against measurement (real netem/BPF).

Numbered UDP probes cross the wireless hop downwards; the receiver's record
gives the loss fraction and the runs of consecutive losses.

Bounds, all four standard deviations (a correct emulator fails one with
probability of order 1e-4):
* loss fraction over n probes: sigma^2 = V / n with V the model's asymptotic
  variance factor (Bernoulli p(1-p); Gilbert-Elliott adds the chain's
  autocovariance, 2 pi_G pi_B (P_B - P_G)^2 lambda / (1 - lambda); the
  time-driven channel sampled every T: pi_B pi_G (1 + 2 lambda / (1 - lambda)),
  lambda = exp(-(1/good + 1/bad) T));
* mean loss-burst length over k bursts: sigma = s / sqrt(k), s the sample
  standard deviation of the burst lengths.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import statistics
import time
from pathlib import Path

import pytest

from airtcp.dynamics import Dynamics
from airtcp.lossmodels import GilbertElliott, TimeMarkov, Uniform
from airtcp.profile import Profile, load_profile, parse_profile
from airtcp.topology import Topology

from .probes import Probe, send_probes


def _path(wireless: dict[str, object]) -> Profile:
    links = {"wired": {"rate": "100mbit", "delay": "1ms"}, "wireless": wireless}
    return parse_profile("cal", {"description": "calibration", "links": links}, "calibration")


def _check_rate(measured: float, expected: float, variance_factor: float, n: int) -> None:
    sigma = math.sqrt(variance_factor / n)
    assert abs(measured - expected) <= 4 * sigma, f"loss {measured:.4f}, model {expected:.4f}, 4 sigma {4 * sigma:.4f}"


def _check_burst(runs: list[int], expected: float) -> None:
    assert len(runs) >= 30, f"only {len(runs)} loss bursts"
    mean = statistics.fmean(runs)
    bound = 4 * statistics.stdev(runs) / math.sqrt(len(runs))
    assert abs(mean - expected) <= max(bound, 0.02), f"mean burst {mean:.3f}, model {expected:.3f}, bound {bound:.3f}"


def test_uniform_bursts() -> None:
    """The rate is calibrated in test_calibration; here the bursts: 1 / (1 - p)."""
    model = Uniform(0.1)
    with Topology(_path({"rate": "20mbit", "delay": "2ms", "queue": 1000, "loss": 0.1})) as topo:
        probe = send_probes(topo, "s", "wh", 6000, 0.0005, 200)
    _check_rate(probe.loss, model.loss_rate(), model.rate_variance_factor(), probe.count)
    _check_burst(probe.runs, model.mean_burst())


def test_gilbert_elliott_loss_and_bursts() -> None:
    """A bursty chain so that bursts are measurable; Cheng/Lin's mapping is
    the same code path (golden files check its arguments)."""
    model = GilbertElliott(p_g=0.01, p_b=0.6, p_gg=0.97, p_bb=0.8)
    loss = {"model": "gilbert-elliott", "p_g": 0.01, "p_b": 0.6, "p_gg": 0.97, "p_bb": 0.8}
    with Topology(_path({"rate": "20mbit", "delay": "2ms", "queue": 1000, "loss": loss})) as topo:
        probe = send_probes(topo, "s", "wh", 8000, 0.0005, 200)
    _check_rate(probe.loss, model.loss_rate(), model.rate_variance_factor(), probe.count)
    _check_burst(probe.runs, model.mean_burst())


def test_exponential_byte_errors() -> None:
    """Vaidya99's 16384-byte mean: 1000-byte packets lost with 1 - e^(-1000/16384)."""
    # Faster links and long queues: only the channel may lose probes.
    faster = [("links.wired.rate", "100mbit"), ("links.wireless.rate", "20mbit"), ("links.wireless.delay", "2ms"),
              ("links.wired.queue", 1000), ("links.wireless.queue", 1000)]  # fmt: skip
    profile = load_profile("vaidya99-exp16k-20ms", faster)
    model = profile.links["wireless"].down.loss
    assert model.loss_rate() == pytest.approx(1 - math.exp(-1000 / 16384))
    with Topology(profile) as topo:
        probe = send_probes(topo, "s", "wh", 6000, 0.001, 1000 - 28)
    _check_rate(probe.loss, model.loss_rate(), model.rate_variance_factor(), probe.count)
    _check_burst(probe.runs, model.mean_burst())


def _probe_scheduled(profile: Profile, count: int, spacing: float) -> tuple[Probe, int, list[dict[str, object]]]:
    """UDP probes S -> WH from the link dynamics' t0 on: the probe, t0 and the time-driven channels' counters."""
    with Topology(profile) as topo:
        dynamics = Dynamics(topo, horizon_s=30)
        t0 = dynamics.plan_t0()
        dynamics.start()
        probe = send_probes(topo, "s", "wh", count, spacing, 200, t0_ns=t0)
        channels = dynamics.stats()
        dynamics.stop()
    return probe, t0, channels


def test_time_driven_channel() -> None:
    """Huang/Ferng's channel (good 100 ms, bad 10 ms, exponential) by time.

    The expectations use the probes' actual spacing (a loaded machine sends
    late): with q = 1/good + 1/bad and gaps d_i, P(next lost | lost) =
    pi_B + pi_G e^(-q d_i), so the mean burst is 1 / mean(pi_G (1 - e^(-q d_i)))
    and lambda in the variance factor is mean(e^(-q d_i)).
    """
    profile = load_profile(
        "huangferng-correlated",
        [("links.wireless.loss.bad_mean", "10ms"), ("links.wireless.queue", 1000), ("links.wired.queue", 1000)],
    )
    model = profile.links["wireless"].down.loss
    assert isinstance(model, TimeMarkov)
    spacing = 0.002
    probe, _, channels = _probe_scheduled(profile, 8000, spacing)
    (stats,) = [s for s in channels if s["direction"] == "down"]
    q = 1 / model.good_mean_s + 1 / model.bad_mean_s
    pi_b = model.bad_fraction()
    gaps = [(b - a) / 1e9 for a, b in itertools.pairwise(probe.offsets_ns)]
    lam = statistics.fmean(math.exp(-q * gap) for gap in gaps)
    variance = pi_b * (1 - pi_b) * (1 + 2 * lam / (1 - lam))
    _check_rate(probe.loss, model.loss_rate(), variance, probe.count)
    _check_burst(probe.runs, 1 / statistics.fmean((1 - pi_b) * (1 - math.exp(-q * gap)) for gap in gaps))
    assert model.burst_for_spacing(spacing) == pytest.approx(1 / ((1 - pi_b) * (1 - math.exp(-q * spacing))))
    # The channel's own counters agree with what the receiver missed (it
    # may also have dropped some of the sender's 5 end markers).
    assert 0 <= stats["dropped_bad"] - (probe.count - len(set(probe.received))) <= 5
    assert stats["dropped_good"] == 0


def test_outage_aligned_on_the_transfer_start() -> None:
    """Down 200 ms every 1 s from t0 + 0.5 s: the losses fall in those windows."""
    profile = load_profile(
        "handoff-2m-20ms",
        [("links.wireless.loss.every", "1s"), ("links.wireless.loss.duration", "200ms"),
         ("links.wireless.loss.first", "500ms"), ("links.wired.delay", "1ms"), ("links.wireless.queue", 1000)],
    )  # fmt: skip
    spacing = 0.005
    probe, t0, _ = _probe_scheduled(profile, 800, spacing)
    lost = set(probe.lost_seqs())
    # A probe reaches BS's egress ~1 ms (wired delay + serialisation) after
    # its timestamp; allow 20 ms either side of each window for a sender
    # descheduled between taking the timestamp and sending.
    slack = 0.020
    for seq in range(probe.count):
        at = (probe.start_ns + probe.offsets_ns[seq] - t0) / 1e9
        phase = (at - 0.5) % 1.0 if at >= 0.5 else 1.0
        inside = 0.0 + slack <= phase <= 0.2 - slack
        outside = 0.2 + slack <= phase <= 1.0 - slack or at < 0.5 - slack
        if inside:
            assert seq in lost, f"probe sent at t0+{at:.4f} s crossed a down link"
        if outside:
            assert seq not in lost, f"probe sent at t0+{at:.4f} s lost while the link was up"
    assert 0.15 < len(lost) / probe.count < 0.25


def test_scheduled_delay_changes_at_the_right_time() -> None:
    """RTT steps 20 -> 300 -> 20 ms at t0 + 3 s and t0 + 6 s (one-way 10 -> 150 ms)."""
    profile = parse_profile(
        "sched",
        {
            "description": "schedule calibration",
            "links": {
                "wired": {"rate": "100mbit", "delay": "0ms"},
                "wireless": {
                    "rate": "10mbit", "delay": "10ms", "queue": 100,
                    "schedule": [{"at": "3s", "delay": "150ms"}, {"at": "6s", "delay": "10ms"}],
                },
            },
        },
        "calibration",
    )  # fmt: skip
    with Topology(profile) as topo:
        dynamics = Dynamics(topo, horizon_s=9)
        t0 = dynamics.plan_t0()
        wall_minus_mono = time.time() - time.monotonic_ns() / 1e9
        dynamics.start()
        time.sleep(max(0.0, (t0 - time.monotonic_ns()) / 1e9))
        out = topo.host("s").run(["ping", "-D", "-n", "-i", "0.02", "-w", "8", topo.address("wh")], timeout=60)
        dynamics.stop()
        log = dynamics.record()["schedule"]
    t0_wall = t0 / 1e9 + wall_minus_mono
    # ping -D stamps the reply's arrival: the probe left one RTT earlier.
    replies = re.findall(r"\[([0-9.]+)\].*time=([0-9.]+) ms", out)
    samples = [(float(ts) - float(rtt) / 1000 - t0_wall, float(rtt)) for ts, rtt in replies]
    assert len(samples) > 200
    mid = (20 + 300) / 2
    rise = next(t for t, rtt in samples if rtt > mid)
    fall = next(t for t, rtt in samples if t > rise + 1 and rtt < mid)
    # Within one RTT of the new level (300 ms) of the scheduled instants.
    assert abs(rise - 3.0) <= 0.3, f"RTT rose at t0+{rise:.3f} s"
    assert abs(fall - 6.0) <= 0.3, f"RTT fell at t0+{fall:.3f} s"
    assert [entry["at_s"] for entry in log] == [3.0, 3.0, 6.0, 6.0]
    assert all(abs(float(entry["applied_s"]) - float(entry["at_s"])) < 0.2 for entry in log)


def test_the_result_file_logs_dynamics(tmp_path: Path) -> None:
    """A run over a profile with both mechanisms records them with timestamps."""
    profile = tmp_path / "dyn.toml"
    profile.write_text(
        'description = "dynamics"\nextends = "handoff-2m-20ms"\n'
        '[links.wireless]\nloss = { model = "outage", every = "1s", duration = "100ms", first = "1s" }\n'
        '[[links.wired.schedule]]\nat = "1s"\ndelay = "40ms"\n'
    )
    out = tmp_path / "r.json"
    from .conftest import airtcp

    done = airtcp("run", "--profile", str(profile), "--scheme", "stock", "--sender", "cubic", "--runs", "1",
                  "--duration", "3s", "--out", str(out), "--no-plot")  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = json.loads(out.read_text())["cases"][0]["runs"][0]
    dynamics = run["dynamics"]
    # each direction's channel at its receiver's ingress: WH for data, BS for ACKs
    assert [(c["role"], c["dev"], c["hook"]) for c in dynamics["channels"]] == [
        ("wh", "to-bs", "ingress"),
        ("bs", "to-wh", "ingress"),
    ]
    assert all(c["start_ns"] == dynamics["t0_monotonic_ns"] for c in dynamics["channels"])
    assert [(e["link"], e["at_s"]) for e in dynamics["schedule"]] == [("wired", 1.0), ("wired", 1.0)]
    assert sum(c["dropped_bad"] for c in dynamics["timeloss"]) > 0
    assert dynamics["errors"] == []
