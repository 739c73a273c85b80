"""What the stress suite found, test by test, saved for the summary."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from airtcp import kernellog, kernelwatch
from airtcp.paths import RESULTS_DIR

REPORT_FILE = RESULTS_DIR / "stress" / f"stress-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}.json"
_tests: dict[str, object] = {}


def record(nodeid: str, reports: list[kernellog.Report], detectors_off: list[str], **extra: object) -> None:
    _tests[nodeid] = {
        **extra,
        "detectors_off_before": detectors_off,
        "reports": [
            {"kind": r.kind, "title": r.title, "module": r.module, "modules": r.modules, "text": "\n".join(r.lines)}
            for r in reports
        ],
    }
    save()  # after every test: a VM killed midway keeps what was found


def save() -> Path:
    REPORT_FILE.parent.mkdir(parents=True, exist_ok=True)
    doc = {"kernel": os.uname().release, "detectors_at_end": vars(kernelwatch.detectors()), "tests": _tests}
    REPORT_FILE.write_text(json.dumps(doc, indent=2) + "\n")
    return REPORT_FILE
