"""The ``wifi`` link kind: a real 802.11 hop on mac80211_hwsim radios.

The wireless link of a profile with ``kind = "wifi"`` is not a veth with
netem but two simulated radios under the real mac80211 stack: hostapd runs
the access point in BS, wpa_supplicant the station in WH, and
``airtcp-medium`` (testbed/medium/) plays the air between them.  It
creates the radios in BS's network namespace (so that they, and its
registration as their medium, belong to that namespace's hwsim group and
to nothing else on the machine), walks every frame's retry chain with the
profile's loss model per 802.11 attempt and charges each attempt its
airtime.  The radios go away with the medium.

This module has two halves: the pure one (``WifiSpec``: parsing and
validating the profile's ``[links.wireless.wifi]`` table, and rendering
hostapd's and wpa_supplicant's configuration, the medium's command line
and the ``iw`` commands) and ``WifiLink``, which runs them in a topology.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import AirtcpError, ConfigError
from .lossmodels import ExponentialBytes, GilbertElliott, LossModel, TimeMarkov, Uniform
from .paths import MEDIUM_BIN
from .proc import Background, poll_until, run
from .tomlfile import check_keys
from .units import format_duration_us, parse_count

if TYPE_CHECKING:
    from .netns import Netns
    from .topology import LinkEnds

STANDARDS = ("g", "n")
SECURITY = ("open", "wpa2-psk")
AP_MODES = ("routed", "bridged")
WIFI_KEYS = ("standard", "channel", "legacy_rates", "mcs", "retries", "security", "passphrase", "ssid", "ap_mode")
# The keys a wifi link takes (on the link, or per direction under down/up).
WIFI_DIRECTION_KEYS = ("loss", "queue", "delay")
# 802.11g's rates in Mbit/s (hwsim's 2.4 GHz band; 1-11 are 802.11b's).
LEGACY_RATES = (1.0, 2.0, 5.5, 11.0, 6.0, 9.0, 12.0, 18.0, 24.0, 36.0, 48.0, 54.0)
MCS_MAX = 15  # hwsim's radios have two spatial streams
# hwsim's regulatory domain lets an access point start on channels 1-11.
CHANNELS = range(1, 12)
# mac80211's dot11ShortRetryLimit: 7 transmissions, 6 retries.
DEFAULT_RETRIES = 6
RETRIES_MAX = 15
# Frames the medium holds per radio (waiting for the air or on it): half
# of the 200 at which mac80211_hwsim starts dropping its own pending frames.
DEFAULT_QUEUE_FRAMES = 100
QUEUE_MAX_FRAMES = 150
DEFAULT_SSID = "airtcp"
DEFAULT_PASSPHRASE = "airtcp-testbed"
BRIDGE = "br-lan"
# Association under software emulation takes a second or two; a deadline,
# never a fixed sleep.
ASSOCIATION_DEADLINE_S = 30.0
MEDIUM_READY_DEADLINE_S = 10.0
STATS_DEADLINE_S = 5.0
_SSID = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
# 802.11n mixed format, 20 MHz, long guard interval: kbit/s per MCS 0-7.
_HT20_KBPS = (6500, 13000, 19500, 26000, 39000, 52000, 58500, 65000)


@dataclass(frozen=True)
class WifiSpec:
    """A profile's wifi link: everything except the loss models and queues."""

    standard: str = "g"
    channel: int = 1
    legacy_rates: tuple[float, ...] = ()  # () = every rate: minstrel chooses
    mcs: tuple[int, ...] = ()  # 802.11n: () = every MCS
    retries: int = DEFAULT_RETRIES
    security: str = "open"
    passphrase: str = DEFAULT_PASSPHRASE
    ssid: str = DEFAULT_SSID
    ap_mode: str = "routed"

    @property
    def bridged(self) -> bool:
        return self.ap_mode == "bridged"

    @property
    def freq_mhz(self) -> int:
        return 2407 + 5 * self.channel

    @property
    def max_attempts(self) -> int:
        return self.retries + 1

    def nominal_rate_bps(self) -> int:
        """The fastest PHY rate the link may use (not what TCP gets)."""
        if self.standard == "n":
            top = max(self.mcs) if self.mcs else MCS_MAX
            return _HT20_KBPS[top % 8] * (top // 8 + 1) * 1000
        return int(max(self.legacy_rates or LEGACY_RATES) * 1_000_000)

    def to_json(self) -> dict[str, object]:
        return {
            "standard": self.standard,
            "channel": self.channel,
            "freq_mhz": self.freq_mhz,
            "legacy_rates": list(self.legacy_rates),
            "mcs": list(self.mcs),
            "retries": self.retries,
            "max_attempts": self.max_attempts,
            "security": self.security,
            "ssid": self.ssid,
            "ap_mode": self.ap_mode,
            "nominal_rate_bps": self.nominal_rate_bps(),
        }

    # ------------------------------------------------------------ rendering

    def hostapd_conf(self, iface: str, ctrl_dir: Path) -> str:
        lines = [
            f"interface={iface}",
            "driver=nl80211",
            f"ctrl_interface={ctrl_dir}",
            f"ssid={self.ssid}",
            "hw_mode=g",
            f"channel={self.channel}",
            "wmm_enabled=1",
            # A fade must not end the association: real APs that kick
            # stations after 50 unacknowledged frames are a choice, not the MAC.
            "disassoc_low_ack=0",
        ]
        if self.standard == "n":
            lines.append("ieee80211n=1")
        if self.legacy_rates:
            # The BSS's rates are the allowed ones: mac80211 refuses a rate
            # mask without one of the BSS's basic rates (hostapd's default
            # for g is 1, 2, 5.5 and 11), and so would iw set bitrates.
            rates = " ".join(str(round(r * 10)) for r in self.legacy_rates)
            lines += [f"supported_rates={rates}", f"basic_rates={rates}"]
        if self.bridged:
            lines.append(f"bridge={BRIDGE}")
        if self.security == "wpa2-psk":
            lines += ["wpa=2", "wpa_key_mgmt=WPA-PSK", "rsn_pairwise=CCMP", f"wpa_passphrase={self.passphrase}"]
        return "\n".join(lines) + "\n"

    def supplicant_conf(self, ctrl_dir: Path) -> str:
        network = [f'ssid="{self.ssid}"', f"scan_freq={self.freq_mhz}", f"freq_list={self.freq_mhz}"]
        if self.security == "wpa2-psk":
            network += ["key_mgmt=WPA-PSK", "proto=RSN", "pairwise=CCMP", f'psk="{self.passphrase}"']
        else:
            network.append("key_mgmt=NONE")
        if self.standard == "g":
            network.append("disable_ht=1")
        body = "".join(f"    {line}\n" for line in network)
        return f"ctrl_interface={ctrl_dir}\nap_scan=1\nnetwork={{\n{body}}}\n"

    def retry_command(self, phy: str) -> list[str]:
        """The radio's retry limit (``iw``), as ``iw phy`` then shows it."""
        attempts = str(self.max_attempts)
        return ["iw", "phy", phy, "set", "retry", "short", attempts, "long", attempts]

    def bitrates_command(self, dev: str) -> list[str] | None:
        """The rate limits of one interface (``iw``; it must be up), or None."""
        if not self.legacy_rates and not self.mcs:
            return None
        argv = ["iw", "dev", dev, "set", "bitrates"]
        if self.legacy_rates:
            argv += ["legacy-2.4", *[f"{r:g}" for r in self.legacy_rates]]
        if self.mcs:
            argv += ["ht-mcs-2.4", *[str(m) for m in self.mcs]]
        return argv


def medium_loss_spec(model: LossModel) -> str:
    """A loss model as airtcp-medium's ``--loss DIR:SPEC`` takes it.

    The same models as netem and airtcp-timeloss, decided per 802.11
    attempt: exponential-bytes with each frame's own length.
    """
    if isinstance(model, ExponentialBytes):
        return f"model=exponential-bytes,mean_bytes={model.mean_bytes}"
    if isinstance(model, Uniform):
        return f"model=uniform,p={model.p:.9g}" if model.p > 0 else "model=none"
    if isinstance(model, GilbertElliott):
        return (
            f"model=gilbert-elliott,p_g={model.p_g:.9g},p_b={model.p_b:.9g},p_gg={model.p_gg:.9g},p_bb={model.p_bb:.9g}"
        )
    if isinstance(model, TimeMarkov):
        spec = (
            f"model=time-markov,good_mean={format_duration_us(model.good_mean_s)},"
            f"bad_mean={format_duration_us(model.bad_mean_s)},holding={model.holding},"
            f"loss_good={model.loss_good:.9g},loss_bad={model.loss_bad:.9g},seed={model.seed}"
        )
        if model.first_s is not None:
            spec += f",first_good={format_duration_us(model.first_s)}"
        return spec
    raise AirtcpError(f"loss model {model.name!r} has no airtcp-medium form")


def medium_argv(
    spec: WifiSpec,
    radios: Sequence[tuple[str, str]],
    losses: Mapping[str, LossModel],
    queues: Mapping[str, int],
    stats_file: Path,
) -> list[str]:
    """airtcp-medium's command line; ``radios`` = (phy name, MAC), the access point first."""
    argv = [str(MEDIUM_BIN)]
    for name, mac in radios:
        argv += ["--radio", f"{name}={mac}"]
    for direction in ("down", "up"):
        argv += ["--loss", f"{direction}:{medium_loss_spec(losses[direction])}"]
        argv += ["--queue", f"{direction}:{queues[direction]}"]
    return [*argv, "--max-attempts", str(spec.max_attempts), "--stats", str(stats_file), "--start-at", "wait"]


# ------------------------------------------------------------------ parsing


def _rates(where: str, key: str, value: object, allowed: Sequence[float]) -> tuple[float, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError(where, key, value, "expected a non-empty list")
    rates = []
    for rate in value:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or float(rate) not in allowed:
            raise ConfigError(where, key, rate, f"not one of {', '.join(f'{a:g}' for a in allowed)}")
        rates.append(float(rate))
    return tuple(sorted(set(rates)))


def parse_wifi(where: str, prefix: str, value: object) -> WifiSpec:
    """The ``[links.wireless.wifi]`` table; errors name the key and the value."""
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise ConfigError(where, prefix.rstrip("."), value, "expected a table")
    check_keys(where, prefix, value, WIFI_KEYS)
    standard = value.get("standard", "g")
    if standard not in STANDARDS:
        raise ConfigError(where, f"{prefix}standard", standard, "expected g or n")
    channel = value.get("channel", 1)
    if isinstance(channel, bool) or not isinstance(channel, int) or channel not in CHANNELS:
        raise ConfigError(where, f"{prefix}channel", channel, "expected a 2.4 GHz channel from 1 to 11")
    legacy: tuple[float, ...] = ()
    if "legacy_rates" in value:
        legacy = _rates(where, f"{prefix}legacy_rates", value["legacy_rates"], LEGACY_RATES)
    mcs: tuple[int, ...] = ()
    if "mcs" in value:
        if standard != "n":
            raise ConfigError(where, f"{prefix}mcs", value["mcs"], 'MCS rates need standard = "n"')
        mcs = tuple(int(m) for m in _rates(where, f"{prefix}mcs", value["mcs"], range(MCS_MAX + 1)))
    retries = parse_count(where, f"{prefix}retries", value.get("retries", DEFAULT_RETRIES))
    if retries > RETRIES_MAX:
        raise ConfigError(where, f"{prefix}retries", retries, f"at most {RETRIES_MAX}")
    security = value.get("security", "open")
    if security not in SECURITY:
        raise ConfigError(where, f"{prefix}security", security, f"expected one of {', '.join(SECURITY)}")
    passphrase = value.get("passphrase", DEFAULT_PASSPHRASE)
    if "passphrase" in value and security != "wpa2-psk":
        raise ConfigError(where, f"{prefix}passphrase", "...", 'a passphrase needs security = "wpa2-psk"')
    if (
        not isinstance(passphrase, str)
        or not 8 <= len(passphrase) <= 63
        or any(not (32 <= ord(c) < 127) or c in '"\\' for c in passphrase)
    ):
        raise ConfigError(
            where, f"{prefix}passphrase", "...", "expected 8 to 63 printable ASCII characters without quotes"
        )
    ssid = value.get("ssid", DEFAULT_SSID)
    if not isinstance(ssid, str) or not _SSID.match(ssid):
        raise ConfigError(where, f"{prefix}ssid", ssid, "expected 1 to 32 letters, digits, '.', '_' or '-'")
    ap_mode = value.get("ap_mode", "routed")
    if ap_mode not in AP_MODES:
        raise ConfigError(where, f"{prefix}ap_mode", ap_mode, "expected routed or bridged")
    return WifiSpec(str(standard), channel, legacy, mcs, retries, str(security), passphrase, ssid, str(ap_mode))


def parse_queue(where: str, key: str, value: object) -> int:
    queue = parse_count(where, key, value, minimum=1)
    if queue > QUEUE_MAX_FRAMES:
        raise ConfigError(
            where, key, value, f"at most {QUEUE_MAX_FRAMES} frames (mac80211_hwsim drops its own beyond 200)"
        )
    return queue


# ------------------------------------------------------------------ running


def load_hwsim() -> None:
    """mac80211_hwsim without radios of its own: the medium creates ours."""
    if Path("/sys/module/mac80211_hwsim").is_dir():
        return
    try:
        run(["modprobe", "mac80211_hwsim", "radios=0"])
    except AirtcpError as exc:
        raise AirtcpError(f"cannot load mac80211_hwsim (the wifi link's radios): {exc}") from None


@dataclass
class WifiLink:
    """The radios, the medium, hostapd and wpa_supplicant of one topology.

    ``create`` (before addresses are assigned) makes the radios and their
    interfaces, named and addressed as the link's plan says; ``associate``
    (after) starts hostapd and wpa_supplicant and waits for the station;
    ``start_channel`` switches the loss models on (at the transfer's t0);
    ``stats`` reads the medium's counters.  Everything runs in the
    topology's namespaces: deleting them stops it all, and the radios go
    with the medium.
    """

    spec: WifiSpec
    link: LinkEnds
    ap_ns: Netns
    station_ns: Netns
    losses: Mapping[str, LossModel]
    queues: Mapping[str, int]
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="airtcp-wifi-")))
    medium: Background | None = None
    hostapd: Background | None = None
    supplicant: Background | None = None
    radios: list[dict[str, object]] = field(default_factory=list)
    association_s: float | None = None

    @property
    def phys(self) -> tuple[str, str]:
        """Radio (wiphy) names: the namespaces', unique on the machine."""
        return self.ap_ns.name, self.station_ns.name

    @property
    def stats_file(self) -> Path:
        return self.workdir / "medium.json"

    def create(self) -> None:
        if not MEDIUM_BIN.exists():
            raise AirtcpError(f"{MEDIUM_BIN} missing: run `make build`")
        load_hwsim()
        ap_phy, sta_phy = self.phys
        radios = [(ap_phy, self.link.left.mac), (sta_phy, self.link.right.mac)]
        argv = medium_argv(self.spec, radios, self.losses, self.queues, self.stats_file)
        self.medium = self.ap_ns.spawn(argv, name="airtcp-medium", stdin_pipe=True)
        ready = poll_until("airtcp-medium to create the radios", self._medium_ready, deadline_s=MEDIUM_READY_DEADLINE_S)
        radios_ready = ready.get("radios")
        self.radios = [r for r in radios_ready if isinstance(r, dict)] if isinstance(radios_ready, list) else []
        # The station's radio moves to its namespace; interfaces are named
        # as veth ends would be, so everything else addresses them alike.
        self.ap_ns.run(["iw", "phy", sta_phy, "set", "netns", "name", self.station_ns.name])
        for ns, phy, dev in ((self.ap_ns, ap_phy, self.link.left.dev), (self.station_ns, sta_phy, self.link.right.dev)):
            commands = [
                ["iw", "phy", phy, "interface", "add", dev, "type", "managed"],
                self.spec.retry_command(phy),
            ]
            ns.run(["sh", "-ec", "; ".join(" ".join(argv) for argv in commands)])

    def _medium_ready(self) -> dict[str, object] | None:
        assert self.medium is not None
        for line in self.medium.stdout.splitlines():
            if line.startswith('{"ready"'):
                ready: dict[str, object] = json.loads(line)
                return ready
        if not self.medium.running():
            self.medium.stop()
            raise AirtcpError(f"airtcp-medium exited: {self.medium.stderr.strip() or '(no message)'}")
        return None

    def associate(self) -> None:
        """Start the access point and the station; return once it is connected."""
        (self.workdir / "hostapd.conf").write_text(self.spec.hostapd_conf(self.link.left.dev, self.workdir / "ap"))
        (self.workdir / "supplicant.conf").write_text(self.spec.supplicant_conf(self.workdir / "sta"))
        began = time.monotonic()
        self.hostapd = self.ap_ns.spawn(["hostapd", str(self.workdir / "hostapd.conf")], name="hostapd")
        self.supplicant = self.station_ns.spawn(
            ["wpa_supplicant", "-i", self.link.right.dev, "-c", str(self.workdir / "supplicant.conf")],
            name="wpa_supplicant",
        )
        poll_until("the station to associate", self._associated, deadline_s=ASSOCIATION_DEADLINE_S)
        self.association_s = round(time.monotonic() - began, 3)
        # Rate limits apply to running interfaces only: now both are.
        for ns, dev in ((self.ap_ns, self.link.left.dev), (self.station_ns, self.link.right.dev)):
            argv = self.spec.bitrates_command(dev)
            if argv is not None:
                ns.run(argv)

    def _associated(self) -> bool | None:
        assert self.hostapd is not None and self.supplicant is not None
        for proc in (self.hostapd, self.supplicant):
            if not proc.running():
                proc.stop()
                raise AirtcpError(f"{proc.name} exited: {(proc.stdout + proc.stderr).strip()[-800:]}")
        # Both ends: the station completed (4-way handshake with WPA2) and
        # the access point authorised it.
        if "CTRL-EVENT-CONNECTED" in self.supplicant.stdout and "AP-STA-CONNECTED" in self.hostapd.stdout:
            return True
        return None

    def start_channel(self, t0_ns: int) -> None:
        """The loss models run from t0 (CLOCK_MONOTONIC ns) on: the transfer's start."""
        assert self.medium is not None
        self.medium.send(f"start {t0_ns}")

    def stats(self) -> dict[str, object]:
        """The medium's counters now, and what the access point reports of its station."""
        record: dict[str, object] = {
            "spec": self.spec.to_json(),
            "radios": self.radios,
            "association_s": self.association_s,
        }
        record["medium"] = self._medium_stats()
        out = self.ap_ns.run(["iw", "dev", self.link.left.dev, "station", "dump"], check=False)
        record["station_dump"] = out
        return record

    def _medium_stats(self) -> dict[str, object]:
        if self.medium is None or not self.medium.running():
            return {"error": "airtcp-medium is not running"}
        dumps = _dumps(self._read_stats())
        os.kill(self.medium.popen.pid, signal.SIGUSR1)

        def fresh() -> dict[str, object] | None:
            now = self._read_stats()
            return now if _dumps(now) > dumps else None

        try:
            return poll_until("airtcp-medium's counters", fresh, deadline_s=STATS_DEADLINE_S)
        except AirtcpError as exc:
            return {"error": str(exc)}

    def _read_stats(self) -> dict[str, object] | None:
        try:
            data: dict[str, object] = json.loads(self.stats_file.read_text())
        except (OSError, json.JSONDecodeError):
            return None
        return data

    def stop(self) -> None:
        """Stop everything; idempotent, never raises (namespace deletion does the rest)."""
        for proc in (self.supplicant, self.hostapd, self.medium):
            if proc is not None:
                with contextlib.suppress(Exception):
                    proc.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _dumps(stats: Mapping[str, object] | None) -> int:
    """How many times the medium has written its counters (0: never)."""
    count = stats.get("dumps") if stats else None
    return count if isinstance(count, int) else 0
