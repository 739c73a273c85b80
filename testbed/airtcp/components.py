"""What a scheme switches on, as pluggable components.

A scheme file has one table per place in the path (``sender``,
``basestation``, ``receiver``, ``link``); each key in such a table names a
component kind registered here.  The runner only knows the ``Component``
interface, so a new mechanism (a pepd filter, a receiver module, the ARQ link
layer) plugs in by registering a kind; schemes then use it as data.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from .errors import ConfigError

if TYPE_CHECKING:
    from .profile import Profile
    from .topology import Topology

PLACES = {"sender": "s", "basestation": "bs", "receiver": "wh", "link": "bs"}


class Component(ABC):
    """One mechanism configured for a run.

    Constructed (and so validated) when the scheme is loaded; ``start`` and
    ``stop`` are called once per run on a fresh topology.  ``stop`` must be
    idempotent and must not raise: it runs during cleanup after failures.
    """

    kind: str = ""

    def __init__(self, place: str, config: object, where: str) -> None:
        self.place = place
        self.role = PLACES[place]
        self.config = config
        self.where = where

    @abstractmethod
    def start(self, topo: Topology) -> None: ...

    def stop(self) -> None:  # noqa: B027 - most components need no teardown
        """Undo ``start``, also one that failed halfway; namespaces vanish anyway, so most need nothing."""

    def stats(self) -> dict[str, object]:
        """Counters after the transfer, recorded in the result file."""
        return {}

    def processes(self) -> dict[str, int]:
        """The daemons this component runs, by name: their process group ids,
        whose CPU time the run records (cpuload)."""
        return {}

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind, "place": self.place, "config": self.config}

    def requirements(self) -> list[str]:
        """Kernel modules this component needs loaded before any run: names
        (modprobe) or paths of built out-of-tree ``.ko`` files (insmod)."""
        return []

    def congestion_controls(self) -> list[str]:
        """Congestion controls this component makes available (a module it
        loads), so that a sender may name one the kernel lacks."""
        return []

    def sender_problem(self, sender_sysctls: Mapping[str, str]) -> str | None:
        """Why this component cannot work with a sender whose namespace has
        these sysctls (e.g. it needs SACK), or None; checked before any run."""
        return None

    def profile_problem(self, profile: Profile) -> str | None:
        """Why this component cannot work on this link profile (arqd on a
        bridged access point), or None; checked before any run."""
        return None


Factory = Callable[[str, object, str], Component]
_REGISTRY: dict[str, Factory] = {}


def register(kind: str) -> Callable[[type[Component]], type[Component]]:
    def wrap(cls: type[Component]) -> type[Component]:
        cls.kind = kind
        _REGISTRY[kind] = cls
        return cls

    return wrap


def _load_plugins() -> None:
    """Import every module of airtcp.plugins (each registers its kinds)."""
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    from . import plugins

    for info in pkgutil.iter_modules(plugins.__path__):
        importlib.import_module(f"{plugins.__name__}.{info.name}")


_PLUGINS_LOADED = False


def known_kinds() -> list[str]:
    _load_plugins()
    return sorted(_REGISTRY)


def build(place: str, kind: str, config: object, where: str) -> Component:
    _load_plugins()
    factory = _REGISTRY.get(kind)
    if factory is None:
        raise ConfigError(where, f"{place}.{kind}", config, f"unknown component; known: {', '.join(known_kinds())}")
    return factory(place, config, where)


_SYSCTL_NAME = re.compile(r"^net\.[A-Za-z0-9_.\-]+$")


def validate_sysctls(where: str, key: str, values: object) -> dict[str, str]:
    """Only per-namespace ``net.*`` sysctls: anything else would leak
    out of the namespace and change the host (or the other hosts)."""
    if not isinstance(values, Mapping):
        raise ConfigError(where, key, values, "expected a table of sysctl = value")
    checked: dict[str, str] = {}
    for name, value in values.items():
        if not _SYSCTL_NAME.match(name):
            raise ConfigError(where, f"{key}.{name}", value, "only per-namespace net.* sysctls are allowed")
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ConfigError(where, f"{key}.{name}", value, "expected an integer or a string")
        checked[name] = str(value)
    return checked


@register("sysctls")
class Sysctls(Component):
    """Per-namespace sysctls on the component's host."""

    def __init__(self, place: str, config: object, where: str) -> None:
        super().__init__(place, config, where)
        self.values = validate_sysctls(where, f"{place}.sysctls", config)

    def start(self, topo: Topology) -> None:
        topo.host(self.role).set_sysctls(self.values)
