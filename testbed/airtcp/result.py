"""The result file: one versioned JSON document per experiment.

It holds everything needed to analyse the experiment without rerunning it:
every parameter (profile, schemes, senders), the raw output of the tools,
the parsed series and counters of every run, and the metadata of the
machine.  It is rewritten atomically after every run, so an interrupted
experiment keeps all finished runs (``"complete": false``).
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .errors import AirtcpError

FORMAT = "airtcp-result"
VERSION = 3  # 2: profile variants (experiment.profiles, cases[].profile); 3: workloads (cases[].workload)
BULK = {"name": "bulk", "kind": "bulk", "description": "One iperf3 bulk transfer S -> WH"}


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_result(experiment: Mapping[str, object], metadata: Mapping[str, object]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "experiment": dict(experiment),
        "metadata": dict(metadata),
        "started": now_iso(),
        "finished": None,
        "complete": False,
        "interrupted": False,
        "cases": [],
    }


def case_entry(
    result: dict[str, Any], profile: str, scheme: str, sender: str, workload: str = "bulk"
) -> dict[str, Any]:
    """The entry of one (profile variant, workload, scheme, sender), created on first use."""
    for case in result["cases"]:
        if (case["profile"], case.get("workload", "bulk"), case["scheme"], case["sender"]) == (
            profile,
            workload,
            scheme,
            sender,
        ):
            return case  # type: ignore[no-any-return]
    case = {
        "profile": profile,
        "workload": workload,
        "scheme": scheme,
        "sender": sender,
        "label": f"{scheme}/{sender}",
        "runs": [],
    }
    result["cases"].append(case)
    return case


def save(result: Mapping[str, object], path: Path) -> None:
    """Write atomically: a reader never sees a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)  # mkstemp's 0600 would hide results from other users
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(result, handle, indent=1, sort_keys=False)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def mark_interrupted(path: Path) -> bool:
    """Say in a result file that its experiment was stopped before the end.

    For a run in the VM, whose guest is killed with it and cannot say so
    itself; the finished runs stay as the guest last saved them.  False
    (the file left alone) if there is none or it cannot be read.
    """
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return False
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return False
    if data.get("complete"):
        return True  # stopped after the last run was saved: nothing was lost
    data.update(interrupted=True, finished=now_iso())
    save(data, path)
    return True


def load(path: Path) -> dict[str, Any]:
    """A result file, also gzip-compressed (``.json.gz``, as kept under Documentation/eval/data)."""
    try:
        text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
        data: dict[str, Any] = json.loads(text)
    except FileNotFoundError:
        raise AirtcpError(f"{path}: no such result file") from None
    except (json.JSONDecodeError, gzip.BadGzipFile, EOFError, UnicodeDecodeError) as exc:
        raise AirtcpError(f"{path}: not a JSON result file ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise AirtcpError(f"{path}: not an airtcp result file (format = {found!r})")
    if data.get("version") == 1:
        data = _upgrade_v1(data)
    if data.get("version") == 2:
        data = _upgrade_v2(data)
    if data.get("version") != VERSION:
        raise AirtcpError(f"{path}: result format version {data.get('version')!r}; this airtcp reads 1 to {VERSION}")
    if not isinstance(data.get("cases"), list):
        raise AirtcpError(f"{path}: result file has no cases list")
    return data


def _upgrade_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 had one profile per experiment and no profile per case."""
    experiment = data.get("experiment", {})
    profile = experiment.pop("profile", {})
    experiment["profiles"] = [profile]
    experiment.setdefault("sweep", {})
    for case in data.get("cases", []) if isinstance(data.get("cases"), list) else []:
        case.setdefault("profile", profile.get("name"))
    data["version"] = 2
    return data


def _upgrade_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 ran one bulk transfer per run: every case is workload bulk."""
    experiment = data.get("experiment", {})
    if isinstance(experiment, dict):
        experiment.setdefault("workloads", [{**BULK, "duration_s": experiment.get("duration_s")}])
    for case in data.get("cases", []) if isinstance(data.get("cases"), list) else []:
        case.setdefault("workload", "bulk")
    data["version"] = VERSION
    return data
