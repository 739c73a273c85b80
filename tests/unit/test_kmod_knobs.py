"""One source per knob: the modules' C knob lists (kmod/*_knobs.h).

kmod/knobs.json must be what those lists say (the compiler evaluates them
in kmod/tests/knobs_dump.c); the testbed's plugins take defaults, ranges
and value names from it, and the documentation's knob tables must say
the same: names, defaults, ranges, units and meanings.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from airtcp import kmod
from airtcp.errors import ConfigError
from airtcp.paths import REPO_ROOT
from airtcp.plugins import ddack, snack

from . import kmod_harness

MODULES = {"tcp_ddack": "tcp_ddack.rst", "tcp_snack": "snack.rst"}


def test_knobs_json_is_what_the_knob_lists_say(tmp_path: Path) -> None:
    binary = kmod_harness.build(tmp_path, "knobs_dump.c")
    printed = "\n".join(kmod_harness.run(binary, [])) + "\n"
    assert json.loads(printed) == json.loads(kmod.KNOBS_FILE.read_text()), (
        "kmod/knobs.json is stale: run `make -C kmod knobs` and commit it"
    )
    assert printed == kmod.KNOBS_FILE.read_text()


@pytest.mark.parametrize("module", list(MODULES))
def test_every_knob_is_well_formed(module: str) -> None:
    _, knobs = kmod.knob_table(module)
    for knob in knobs.values():
        assert knob.meaning and knob.unit, knob
        if knob.kind == "status":
            continue
        assert knob.min <= knob.default <= knob.max, knob
        if knob.kind == "switch" or knob.unit == "bool":
            assert (knob.min, knob.max) == (0, 1), knob
        if knob.choices:
            assert knob.min == 0 and len(knob.choices) == knob.max + 1, knob


def knob_table_rows(rst: str) -> list[dict[str, str]]:
    """The rows of the reST simple table headed `name default range unit meaning`."""
    lines = rst.splitlines()
    for i, line in enumerate(lines):
        if line.split() == ["name", "default", "range", "unit", "meaning"] and lines[i - 1].startswith("="):
            border = lines[i - 1]
            break
    else:
        raise AssertionError("no knob table (name default range unit meaning)")
    spans = [m.span() for m in re.finditer(r"=+", border)]
    spans[-1] = (spans[-1][0], 10_000)
    columns = ["name", "default", "range", "unit", "meaning"]
    rows: list[dict[str, str]] = []
    for line in lines[i + 2 :]:
        if line.startswith("="):
            break
        cells = [line[start:end].strip() for start, end in spans]
        if cells[0]:
            rows.append(dict(zip(columns, cells, strict=True)))
        else:
            for column, cell in zip(columns, cells, strict=True):
                rows[-1][column] = f"{rows[-1][column]} {cell}".strip()
    return rows


def plain(text: str) -> str:
    return " ".join(text.replace("``", "").split())


@pytest.mark.parametrize(("module", "page"), list(MODULES.items()))
def test_documentation_knob_table_says_what_the_module_does(module: str, page: str) -> None:
    _, knobs = kmod.knob_table(module)
    rows = knob_table_rows((REPO_ROOT / "Documentation" / page).read_text())
    assert [plain(row["name"]) for row in rows] == list(knobs), f"Documentation/{page}: names or order"
    for row in rows:
        knob = knobs[plain(row["name"])]
        if knob.kind == "status":
            want = {"default": "-", "range": "read-only"}
        else:
            # A limit shows in brackets the most a user namespace's root may set.
            userns = f" [{knob.userns_max}]" if knob.userns_max is not None else ""
            want = {"default": str(knob.default), "range": f"{knob.min}-{knob.max}{userns}"}
        want |= {"unit": knob.unit, "meaning": knob.meaning}
        got = {column: plain(row[column]) for column in want}
        assert got == want, f"Documentation/{page}: {knob.name}"


def test_the_plugins_set_real_knobs_and_leave_none_out() -> None:
    _, ddack_knobs = kmod.knob_table("tcp_ddack")
    settable = {name for name, knob in ddack_knobs.items() if knob.kind == "knob"}
    assert set(ddack.SETTINGS.values()) == settable
    _, snack_knobs = kmod.knob_table("tcp_snack")
    assert set(snack.RECEIVER_SETTINGS) == {name for name, knob in snack_knobs.items() if knob.kind == "knob"}


@pytest.mark.parametrize(
    ("unit", "value", "want"),
    [
        ("us", "80ms", 80000),
        ("us", "1.5ms", 1500),
        ("us", "10s", 10_000_000),
        ("s", "120s", 120),
        ("bool", True, 1),
        ("keep|strip|hold", "hold", 2),
        ("packets", 7, 7),
    ],
)
def test_settings_become_the_modules_integers(unit: str, value: object, want: int) -> None:
    knob = kmod.Knob("k", "knob", unit, "m", default=0, min=0, max=10_000_000)
    assert kmod.knob_setting("s.toml", "x.k", value, knob) == want


@pytest.mark.parametrize(
    ("unit", "value"),
    [
        ("us", "11s"),  # above max
        ("us", 80),  # a duration needs a unit
        ("s", "1500ms"),  # whole seconds
        ("s", "0s"),  # below min
        ("bool", 1),
        ("keep|strip|hold", "drop"),
        ("packets", 0),
        ("packets", 11),
    ],
)
def test_settings_outside_the_knob_are_refused(unit: str, value: object) -> None:
    knob = kmod.Knob("k", "knob", unit, "m", default=1, min=1, max=10 if unit == "packets" else 10_000_000)
    with pytest.raises(ConfigError) as err:
        kmod.knob_setting("s.toml", "x.k", value, knob)
    assert err.value.key == "x.k"
