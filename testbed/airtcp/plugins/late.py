"""``late_delivery``: packets that arrive late and out of order, none lost.

A stand-in for a wireless link layer that repairs every loss locally but
delivers the repaired packet out of order, as Vaidya99's link layer (and
Snoop) do: a fraction of the data packets reaching the wireless host are
held back by ``delay`` (one link-level retransmission: about a wireless
round trip) while the packets behind them pass.  The receiver then sees a
hole that fills ``delay`` later, which is exactly what Delayed Duplicate
ACKs are meant to hide from the sender::

    [link.late_delivery]
    probability = "3%"   # of the packets arriving at the wireless host
    delay = "60ms"       # how late they arrive

Implemented at the wireless host's ingress (an ifb device with netem
``delay D reorder 1-p``: netem sends the "reordered" share at once and
delays the rest, so ``1-p`` passes and ``p`` is late), after the profile's
rate and propagation delay, so the bottleneck's FIFO order is untouched
and the link's capacity is not spent twice as a real retransmission
would.  Until pepd's Snoop or the ARQ link layer exists, this is how the
testbed shows the benefit side of tcp_ddack.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..components import Component, register
from ..errors import ConfigError
from ..tomlfile import check_keys
from ..units import format_duration_us, parse_duration, parse_probability

if TYPE_CHECKING:
    from ..topology import Topology

IFB = "ifb-late"


@register("late_delivery")
class LateDelivery(Component):
    def __init__(self, place: str, config: object, where: str) -> None:
        super().__init__(place, config, where)
        key = f"{place}.late_delivery"
        if place != "link":
            raise ConfigError(where, key, config, "late_delivery models the wireless link: put it under [link]")
        if not isinstance(config, Mapping):
            raise ConfigError(where, key, config, "expected a table with probability and delay")
        check_keys(where, key + ".", config, ("probability", "delay"))
        self.probability = parse_probability(where, key + ".probability", config.get("probability", "3%"))
        if not 0 < self.probability < 1:
            raise ConfigError(
                where, key + ".probability", config.get("probability"), "expected more than 0, less than 100 %"
            )
        self.delay_s = parse_duration(where, key + ".delay", config.get("delay", "60ms"), allow_zero=False)

    def requirements(self) -> list[str]:
        return ["ifb", "sch_netem", "act_mirred", "cls_matchall"]

    def netem_args(self) -> list[str]:
        on_time = f"{(1 - self.probability) * 100:.7g}%"
        return ["delay", format_duration_us(self.delay_s), "reorder", on_time, "limit", "10000"]

    def start(self, topo: Topology) -> None:
        wh = topo.host("wh")
        dev = topo.link("wireless").right.dev
        wh.ip_batch([["link", "add", IFB, "type", "ifb"], ["link", "set", IFB, "up"]])
        wh.tc_batch(
            [
                ["qdisc", "add", "dev", dev, "handle", "ffff:", "ingress"],
                ["filter", "add", "dev", dev, "parent", "ffff:", "protocol", "all", "matchall",
                 "action", "mirred", "egress", "redirect", "dev", IFB],
                ["qdisc", "add", "dev", IFB, "root", "netem", *self.netem_args()],
            ]
        )  # fmt: skip
