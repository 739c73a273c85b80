"""Loss models of the seed papers, their netem mapping and their statistics.

Pure: every model knows how to render itself (netem arguments, or the
arguments of the time-driven loss channel) and what it should produce (loss
rate, mean loss-burst length and the variance of the measured loss rate),
which the calibration tests compare with measurements.

Per-packet models (netem):
  uniform            each packet lost with probability p (Bernoulli)
  gilbert-elliott    two-state Markov chain per packet (Cheng/Lin), netem
                     ``loss gemodel p r 1-h 1-k``
  fritchman          congested/clear chain, every packet lost while congested
                     (Wong/Leung), the "simple Gilbert" case of gemodel
  exponential-bytes  Vaidya99's byte-error model, reduced to a per-packet
                     probability for the size of the packets of a direction
Time-driven (the airtcp-timeloss tc/BPF program, see timeloss/):
  time-markov        good/bad states with holding *times* (Huang/Ferng)
  outage             link down for a duration every period (handoffs)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import ConfigError
from .tomlfile import check_keys
from .units import format_duration_us, parse_count, parse_duration, parse_probability


def percent(prob: float) -> str:
    """netem keeps probabilities as u32 fractions; 7 digits are exact enough."""
    return f"{prob * 100:.7g}%"


class LossModel:
    """Interface of every loss model."""

    name = ""

    def netem_args(self) -> list[str]:
        """``loss ...`` arguments for netem ([] when netem loses nothing)."""
        return []

    def timeloss_args(self) -> list[str] | None:
        """Arguments of airtcp-timeloss, for the time-driven models."""
        return None

    def loss_rate(self) -> float:
        raise NotImplementedError

    def mean_burst(self) -> float:
        """Mean number of consecutive lost packets (per-packet models)."""
        raise NotImplementedError

    def rate_variance_factor(self) -> float:
        """n * Var(measured loss fraction over n packets), n large."""
        raise NotImplementedError

    def to_json(self) -> dict[str, object]:
        return {"model": self.name, **{k: v for k, v in vars(self).items() if not k.startswith("_")}}


@dataclass(frozen=True)
class Uniform(LossModel):
    p: float
    name = "uniform"

    def netem_args(self) -> list[str]:
        return ["loss", "random", percent(self.p)] if self.p > 0 else []

    def loss_rate(self) -> float:
        return self.p

    def mean_burst(self) -> float:
        return 1.0 / (1.0 - self.p) if self.p < 1 else math.inf

    def rate_variance_factor(self) -> float:
        return self.p * (1 - self.p)


@dataclass(frozen=True)
class GilbertElliott(LossModel):
    """Per-packet two-state chain.

    Cheng/Lin's parameters: P_G, P_B (loss probability in the good and the
    bad state) and P_GG, P_BB (probability of staying).  netem's gemodel
    takes p = P(G->B) = 1 - P_GG, r = P(B->G) = 1 - P_BB, 1-h = P_B,
    1-k = P_G.  netem decides each packet's fate in the state it finds and
    moves the chain after that decision (sch_netem.c loss_gilb_ell), so the
    packet sequence sees a stationary chain with pi_B = p / (p + r).
    """

    p_g: float
    p_b: float
    p_gg: float
    p_bb: float
    name = "gilbert-elliott"

    @property
    def p(self) -> float:
        return 1.0 - self.p_gg

    @property
    def r(self) -> float:
        return 1.0 - self.p_bb

    def netem_args(self) -> list[str]:
        if self.p == 0 and self.p_g == 0:
            return []  # never leaves the loss-free good state
        return ["loss", "gemodel", percent(self.p), percent(self.r), percent(self.p_b), percent(self.p_g)]

    def stationary_bad(self) -> float:
        return self.p / (self.p + self.r) if self.p + self.r > 0 else 0.0

    def loss_rate(self) -> float:
        pi_b = self.stationary_bad()
        return (1 - pi_b) * self.p_g + pi_b * self.p_b

    def _lost_then_delivered(self) -> float:
        """P(packet n lost and packet n+1 delivered), stationary."""
        pi_b = self.stationary_bad()
        pi = {"g": 1 - pi_b, "b": pi_b}
        loss = {"g": self.p_g, "b": self.p_b}
        move = {("g", "g"): self.p_gg, ("g", "b"): self.p, ("b", "b"): self.p_bb, ("b", "g"): self.r}
        return sum(pi[s] * loss[s] * move[(s, t)] * (1 - loss[t]) for s in "gb" for t in "gb")

    def mean_burst(self) -> float:
        # Mean run of consecutive losses = P(loss) / P(a run ends at n);
        # exact for the stationary chain whatever the run-length law.
        ends = self._lost_then_delivered()
        return self.loss_rate() / ends if ends > 0 else math.inf

    def rate_variance_factor(self) -> float:
        # Asymptotic variance of the sample mean of L_n: Var(L) plus twice
        # the sum of autocovariances; the state covariance decays as
        # lambda^k with lambda = 1 - p - r, and Cov(L_0, L_k) =
        # pi_G pi_B (P_B - P_G)^2 lambda^k for k >= 1.
        rate = self.loss_rate()
        pi_b = self.stationary_bad()
        lam = 1.0 - self.p - self.r
        if lam >= 1.0:
            return math.inf
        covariance_sum = (1 - pi_b) * pi_b * (self.p_b - self.p_g) ** 2 * lam / (1 - lam)
        return rate * (1 - rate) + 2 * covariance_sum


@dataclass(frozen=True)
class Fritchman(GilbertElliott):
    """Wong/Leung's congestion model: lost while congested, never while clear.

    beta (congested -> clear) = 1 / mean_burst; alpha (clear -> congested)
    from the loss rate L = alpha / (alpha + beta).
    """

    rate: float = 0.0
    burst: float = 1.0
    name = "fritchman"

    @classmethod
    def from_rate(cls, rate: float, mean_burst: float) -> Fritchman:
        beta = 1.0 / mean_burst
        alpha = beta * rate / (1.0 - rate)
        return cls(p_g=0.0, p_b=1.0, p_gg=1.0 - alpha, p_bb=1.0 - beta, rate=rate, burst=mean_burst)


def exponential_bytes_probability(mean_bytes: float, packet_size: int) -> float:
    """Vaidya99: errors a Poisson process in bytes, mean ``mean_bytes`` apart;
    a packet of ``packet_size`` bytes is lost if it contains an error."""
    return 1.0 - math.exp(-packet_size / mean_bytes)


@dataclass(frozen=True)
class ExponentialBytes(Uniform):
    """Vaidya99's byte-error model for the one packet size of a direction."""

    mean_bytes: int = 0
    packet_size: int = 0
    name = "exponential-bytes"

    @classmethod
    def for_size(cls, mean_bytes: int, packet_size: int) -> ExponentialBytes:
        return cls(exponential_bytes_probability(mean_bytes, packet_size), mean_bytes, packet_size)


@dataclass(frozen=True)
class TimeMarkov(LossModel):
    """Good/bad states with holding *times*, decided per packet by time.

    Rendered for airtcp-timeloss (a tc egress BPF program): the state at a
    packet's arrival is the state of the continuous-time process at that
    instant, so idle periods and packet spacing do not distort it.
    """

    good_mean_s: float
    bad_mean_s: float
    holding: str = "exponential"  # or "deterministic"
    loss_good: float = 0.0
    loss_bad: float = 1.0
    first_s: float | None = None  # first good period (deterministic phase)
    seed: int = 1
    name = "time-markov"

    def timeloss_args(self) -> list[str]:
        args = [
            "--good-mean",
            format_duration_us(self.good_mean_s),
            "--bad-mean",
            format_duration_us(self.bad_mean_s),
            "--holding",
            self.holding,
            "--loss-good",
            f"{self.loss_good:.9g}",
            "--loss-bad",
            f"{self.loss_bad:.9g}",
            "--seed",
            str(self.seed),
        ]
        if self.first_s is not None:
            args += ["--first-good", format_duration_us(self.first_s)]
        return args

    def bad_fraction(self) -> float:
        return self.bad_mean_s / (self.good_mean_s + self.bad_mean_s)

    def loss_rate(self) -> float:
        """For packets that arrive independently of the channel state."""
        bad = self.bad_fraction()
        return (1 - bad) * self.loss_good + bad * self.loss_bad

    def burst_for_spacing(self, spacing_s: float) -> float:
        """Mean loss run for packets every ``spacing_s`` (loss_good=0, loss_bad=1).

        Exponential holding: the state seen by successive packets is a
        two-state chain with P(stay bad) = (pi_B + pi_G e^{-q T}) where
        q = 1/good_mean + 1/bad_mean, so runs are geometric.
        """
        q = 1 / self.good_mean_s + 1 / self.bad_mean_s
        pi_b = self.bad_fraction()
        stay_bad = pi_b + (1 - pi_b) * math.exp(-q * spacing_s)
        return 1 / (1 - stay_bad)

    def rate_variance_for_spacing(self, spacing_s: float) -> float:
        """n * Var(loss fraction) for packets every ``spacing_s`` (0/1 loss)."""
        q = 1 / self.good_mean_s + 1 / self.bad_mean_s
        pi_b = self.bad_fraction()
        lam = math.exp(-q * spacing_s)
        return pi_b * (1 - pi_b) * (1 + 2 * lam / (1 - lam))


# ------------------------------------------------------------- parsing

MODELS = ("uniform", "gilbert-elliott", "fritchman", "exponential-bytes", "time-markov", "outage")
_KEYS = {
    "uniform": ("model", "p"),
    "gilbert-elliott": ("model", "p_g", "p_b", "p_gg", "p_bb"),
    "fritchman": ("model", "rate", "mean_burst"),
    "exponential-bytes": ("model", "mean_bytes", "packet_size"),
    "time-markov": ("model", "good_mean", "bad_mean", "holding", "loss_good", "loss_bad", "seed"),
    "outage": ("model", "every", "duration", "first"),
}


def parse_loss(where: str, key: str, value: object, packet_size: int | None = None) -> LossModel:
    """``loss = 0.03`` / ``"3%"`` (uniform) or ``loss = { model = ..., ... }``.

    ``packet_size`` is the direction's packet size, which the size-dependent
    exponential-bytes model needs (the model's own ``packet_size`` wins).
    """
    if not isinstance(value, Mapping):
        return Uniform(parse_probability(where, key, value))
    model = value.get("model")
    if model not in MODELS:
        raise ConfigError(where, f"{key}.model", model, f"unknown loss model; expected one of {', '.join(MODELS)}")
    check_keys(where, f"{key}.", value, _KEYS[model])

    def prob(name: str, default: float | None = None) -> float:
        if name not in value:
            if default is None:
                raise ConfigError(where, f"{key}.{name}", None, f"missing (the {model} model needs it)")
            return default
        return parse_probability(where, f"{key}.{name}", value[name])

    def duration(name: str, default: str | None = None) -> float:
        if name not in value and default is None:
            raise ConfigError(where, f"{key}.{name}", None, f"missing (the {model} model needs it)")
        return parse_duration(where, f"{key}.{name}", value.get(name, default), allow_zero=False)

    if model == "uniform":
        return Uniform(prob("p"))
    if model == "gilbert-elliott":
        return GilbertElliott(prob("p_g"), prob("p_b"), prob("p_gg"), prob("p_bb"))
    if model == "fritchman":
        rate = prob("rate")
        if rate >= 1:
            raise ConfigError(where, f"{key}.rate", value["rate"], "must be below 1")
        burst = value.get("mean_burst", 2)
        if isinstance(burst, bool) or not isinstance(burst, (int, float)) or burst < 1:
            raise ConfigError(where, f"{key}.mean_burst", burst, "expected a number of packets >= 1")
        return Fritchman.from_rate(rate, float(burst))
    if model == "exponential-bytes":
        mean = parse_count(where, f"{key}.mean_bytes", value.get("mean_bytes"), minimum=1)
        if "packet_size" in value:
            packet_size = parse_count(where, f"{key}.packet_size", value["packet_size"], minimum=1)
        if packet_size is None:
            raise ConfigError(where, f"{key}.packet_size", None, "missing: set packet_size on the link direction")
        return ExponentialBytes.for_size(mean, packet_size)
    if model == "time-markov":
        holding = value.get("holding", "exponential")
        if holding not in ("exponential", "deterministic"):
            raise ConfigError(where, f"{key}.holding", holding, "expected exponential or deterministic")
        seed = parse_count(where, f"{key}.seed", value.get("seed", 1), minimum=0)
        return TimeMarkov(duration("good_mean"), duration("bad_mean"), str(holding), prob("loss_good", 0.0),
                          prob("loss_bad", 1.0), None, seed)  # fmt: skip
    every, down = duration("every"), duration("duration")
    if down >= every:
        raise ConfigError(where, f"{key}.duration", value.get("duration"), "must be shorter than every")
    first = parse_duration(where, f"{key}.first", value.get("first", value.get("every")), allow_zero=False)
    return TimeMarkov(every - down, down, "deterministic", 0.0, 1.0, first, 0)
