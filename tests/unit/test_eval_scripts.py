"""Evaluation scripts outside the package still build their experiments from the testbed's parts.

They run for minutes in the VM and are not part of `make test`; building
the experiment (nothing run) catches an interface they use going away.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from airtcp import components
from airtcp.paths import TESTBED_DIR


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, TESTBED_DIR / "eval" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_zeng_reordering_builds_its_experiment() -> None:
    zeng = _load("zeng_reordering")
    exp = zeng.build_experiment(zeng.parse_args(["--runs", "2", "--jitter", "40ms"]))
    labels = [(scheme.name, sender.name) for scheme, sender in exp.cases]
    assert labels == [
        ("stock+reordering", "reno-classic"),
        ("stock+reordering", "cubic"),
        ("pc+reordering", "reno-classic"),
        ("pc+reordering", "cubic"),
    ]
    assert exp.runs == 2 and exp.window == 16 * 1024
    assert "reordering_downlink" in components.known_kinds()
    pc = next(scheme for scheme, _ in exp.cases if scheme.name == "pc+reordering")
    kinds = {kind: config for _, kind, config in pc.parts}
    assert kinds["pepd"]["dupack_thresh"] == 6 and kinds["reordering_downlink"]["jitter"] == "40ms"
