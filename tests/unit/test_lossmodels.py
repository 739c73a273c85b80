"""Loss models: the netem mapping, and the statistics the calibration uses.

The closed forms (loss rate, mean burst, variance of the measured rate) are
checked against direct simulations of each model with a fixed seed.
"""

from __future__ import annotations

import math
import random

import pytest

from airtcp.errors import ConfigError
from airtcp.lossmodels import (
    ExponentialBytes,
    Fritchman,
    GilbertElliott,
    TimeMarkov,
    Uniform,
    exponential_bytes_probability,
    parse_loss,
)

CHENG_LIN_1 = GilbertElliott(p_g=0.001, p_b=0.005, p_gg=0.96, p_bb=0.94)
CHENG_LIN_2 = GilbertElliott(p_g=0.0005, p_b=0.001, p_gg=0.9, p_bb=0.85)
BURSTY = GilbertElliott(p_g=0.01, p_b=0.6, p_gg=0.97, p_bb=0.8)


@pytest.mark.parametrize(
    ("model", "args"),
    [
        (Uniform(0.03), ["loss", "random", "3%"]),
        (Uniform(0.0), []),
        (CHENG_LIN_1, ["loss", "gemodel", "4%", "6%", "0.5%", "0.1%"]),
        (CHENG_LIN_2, ["loss", "gemodel", "10%", "15%", "0.1%", "0.05%"]),
        (Fritchman.from_rate(0.05, 2), ["loss", "gemodel", "2.631579%", "50%", "100%", "0%"]),
        (Fritchman.from_rate(0.0, 2), []),
    ],
)
def test_netem_mapping(model: Uniform | GilbertElliott, args: list[str]) -> None:
    """gemodel takes p = 1 - P_GG, r = 1 - P_BB, 1-h = P_B, 1-k = P_G."""
    assert model.netem_args() == args


@pytest.mark.parametrize(
    ("model", "rate", "burst"),
    [
        (Uniform(0.03), 0.03, 1 / 0.97),
        # pi_B = 0.04 / 0.10 = 0.4; P = 0.6 * 0.001 + 0.4 * 0.005
        (CHENG_LIN_1, 0.0026, None),
        (CHENG_LIN_2, 0.6 * 0.0005 + 0.4 * 0.001, None),
        # Fritchman: runs of losses are the congested periods, mean 1 / beta
        (Fritchman.from_rate(0.05, 2), 0.05, 2.0),
        (Fritchman.from_rate(0.2, 3.5), 0.2, 3.5),
    ],
)
def test_closed_forms(model: Uniform | GilbertElliott, rate: float, burst: float | None) -> None:
    assert model.loss_rate() == pytest.approx(rate)
    if burst is not None:
        assert model.mean_burst() == pytest.approx(burst)


def _simulate(model: GilbertElliott, n: int, seed: int) -> list[bool]:
    """netem's loss_gilb_ell: decide in the current state, then move."""
    rng = random.Random(seed)
    bad = rng.random() < model.stationary_bad()
    lost = []
    for _ in range(n):
        if bad:
            lost.append(rng.random() < model.p_b)
            bad = not (rng.random() < model.r)
        else:
            lost.append(rng.random() < model.p_g)
            bad = rng.random() < model.p
    return lost


def _bursts(lost: list[bool]) -> list[int]:
    runs, current = [], 0
    for x in lost:
        if x:
            current += 1
        elif current:
            runs.append(current)
            current = 0
    return runs


@pytest.mark.parametrize("model", [BURSTY, Fritchman.from_rate(0.1, 3), GilbertElliott(0.05, 0.9, 0.9, 0.7)])
def test_gilbert_elliott_against_simulation(model: GilbertElliott) -> None:
    n = 200_000
    lost = _simulate(model, n, seed=7)
    rate = sum(lost) / n
    sigma = math.sqrt(model.rate_variance_factor() / n)
    assert abs(rate - model.loss_rate()) < 4 * sigma
    bursts = _bursts(lost)
    assert sum(bursts) / len(bursts) == pytest.approx(model.mean_burst(), rel=0.05)
    # The variance formula against the spread of 40 independent blocks.
    blocks = [sum(lost[i : i + 5000]) / 5000 for i in range(0, n, 5000)]
    empirical = statistics_variance(blocks) * 5000
    assert empirical == pytest.approx(model.rate_variance_factor(), rel=0.6)
    assert model.rate_variance_factor() > model.loss_rate() * (1 - model.loss_rate())  # burstier than Bernoulli


def statistics_variance(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / (len(values) - 1)


@pytest.mark.parametrize(
    ("mean_bytes", "size", "prob"),
    [(16384, 1000, 0.0592098), (16384, 40, 0.00243843), (131072, 1000, 0.00760037), (65536, 1500, 0.0226282)],
)
def test_exponential_bytes(mean_bytes: int, size: int, prob: float) -> None:
    """P(loss) = 1 - exp(-size / mean_bytes)."""
    assert exponential_bytes_probability(mean_bytes, size) == pytest.approx(prob, rel=1e-5)
    model = ExponentialBytes.for_size(mean_bytes, size)
    assert model.netem_args()[:2] == ["loss", "random"] and model.loss_rate() == pytest.approx(prob, rel=1e-5)


def _ctmc_samples(model: TimeMarkov, spacing: float, n: int, seed: int) -> list[bool]:
    rng = random.Random(seed)
    bad = rng.random() < model.bad_fraction()
    left = rng.expovariate(1 / (model.bad_mean_s if bad else model.good_mean_s))
    states = []
    for _ in range(n):
        states.append(bad)
        left -= spacing
        while left <= 0:
            bad = not bad
            left += rng.expovariate(1 / (model.bad_mean_s if bad else model.good_mean_s))
    return states


@pytest.mark.parametrize("bad_ms", [1, 5, 10])
def test_time_markov_statistics_against_simulation(bad_ms: int) -> None:
    model = TimeMarkov(0.100, bad_ms / 1000)
    spacing = 0.002
    lost = _ctmc_samples(model, spacing, 200_000, seed=bad_ms)
    rate = sum(lost) / len(lost)
    assert rate == pytest.approx(
        model.loss_rate(), abs=4 * math.sqrt(model.rate_variance_for_spacing(spacing) / len(lost))
    )
    bursts = _bursts(lost)
    assert sum(bursts) / len(bursts) == pytest.approx(model.burst_for_spacing(spacing), rel=0.08)


def test_time_markov_arguments() -> None:
    model = TimeMarkov(0.1, 0.005, seed=3)
    assert model.netem_args() == []
    assert model.timeloss_args() == [
        "--good-mean", "100000us", "--bad-mean", "5000us", "--holding", "exponential",
        "--loss-good", "0", "--loss-bad", "1", "--seed", "3",
    ]  # fmt: skip
    assert model.loss_rate() == pytest.approx(0.005 / 0.105)


@pytest.mark.parametrize(
    ("value", "key", "problem"),
    [
        ({"model": "rayleigh"}, "loss.model", "unknown loss model"),
        ({"model": "gilbert-elliott", "p_g": 0.1, "p_b": 0.5, "p_gg": 0.9}, "loss.p_bb", "missing"),
        ({"model": "gilbert-elliott", "p_g": 0.1, "p_b": 1.5, "p_gg": 0.9, "p_bb": 0.5}, "loss.p_b", "outside [0, 1]"),
        ({"model": "uniform", "p": 0.1, "q": 1}, "loss.q", "unknown key"),
        ({"model": "fritchman", "rate": 1.0}, "loss.rate", "below 1"),
        ({"model": "fritchman", "rate": 0.1, "mean_burst": 0.5}, "loss.mean_burst", ">= 1"),
        ({"model": "exponential-bytes", "mean_bytes": 16384}, "loss.packet_size", "set packet_size"),
        ({"model": "time-markov", "good_mean": "100ms"}, "loss.bad_mean", "missing"),
        ({"model": "time-markov", "good_mean": "100", "bad_mean": "5ms"}, "loss.good_mean", "missing unit"),
        (
            {"model": "time-markov", "good_mean": "1s", "bad_mean": "5ms", "holding": "gamma"},
            "loss.holding",
            "expected",
        ),
        ({"model": "outage", "every": "1s", "duration": "2s"}, "loss.duration", "shorter than every"),
        ("7%%", "loss", "not a percentage"),
    ],
)
def test_bad_models(value: object, key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_loss("p.toml", "loss", value)
    assert str(err.value).startswith(f"p.toml: {key} = "), str(err.value)
    assert problem in str(err.value)


def test_outage_is_deterministic_time_markov() -> None:
    model = parse_loss("p.toml", "loss", {"model": "outage", "every": "5s", "duration": "300ms", "first": "2s"})
    assert isinstance(model, TimeMarkov)
    assert (model.good_mean_s, model.bad_mean_s, model.holding, model.first_s) == (4.7, 0.3, "deterministic", 2.0)
    assert model.loss_rate() == pytest.approx(0.06)
