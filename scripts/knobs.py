#!/usr/bin/env python3
"""Write every copy of pepd's and arqd's knobs from the daemons' own schema.

The C key tables (pep-daemon/pepd/config.c, pep-daemon/arqd/arq_config.c)
are the one description of each knob: name, type, default, range, unit,
meaning.  ``DAEMON schema --json`` prints them; from that this script
writes

* the knob table of the daemon's documentation page, between the
  ``.. knobs: begin`` and ``.. knobs: end`` comments;
* the same keys as the OPTIONS of its man page (Documentation/man/DAEMON.8.rst,
  between the same comments), from which ``make man`` writes DAEMON.8;
* the annotated example configuration (pep-daemon/DAEMON.conf.example);
* the schema the testbed validates scheme options with
  (pep-daemon/DAEMON.schema.json, read by testbed/airtcp/daemons.py);
* the OpenWrt package's uci configuration (packaging/openwrt/net/airtcp/
  files/DAEMON.config), every key an option (airtcp-uci maps it back).

``--write`` rewrites them (``make -C pep-daemon knobs``); ``--check`` (the
unit tests) exits 1 naming each file that no longer matches the daemon.
The daemons must be built first (``make -C pep-daemon``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BEGIN = ".. knobs: begin"
END = ".. knobs: end"
REGENERATE = "make -C pep-daemon knobs"


@dataclass(frozen=True)
class Daemon:
    program: str
    doc: str
    example: str
    schema: str
    intro: str
    man: str
    uci: str
    uci_intro: str


DAEMONS = (
    Daemon(
        "pepd",
        "Documentation/pepd.rst",
        "pep-daemon/pepd.conf.example",
        "pep-daemon/pepd.schema.json",
        man="Documentation/man/pepd.8.rst",
        uci="packaging/openwrt/net/airtcp/files/pepd.config",
        uci_intro="""/etc/config/pepd: pepd, the base-station PEP (airtcp).

One section of type pepd per pepd (each with its own queue); /etc/init.d/pepd
starts those with enabled '1', each with its own queue rules (rules = auto:
nftables, after fw4's chains, a port of br-lan included).  Every option is a
pepd key (`pepd --help` gives each one's meaning, man pepd too); each is
listed here with its default, commented out.  Check: /etc/init.d/pepd check.""",
        intro="""pepd.conf: the base-station PEP daemon (Documentation/pepd.rst).

One "key = value" per line; "#" starts a comment.  Every key is also a
flag (--rto-min 30ms), and flags win over this file.  Check a file with
    pepd check -c /etc/pepd/pepd.conf
which prints the effective configuration, or one line naming the bad key
and value.  Every key is listed with its default, commented out; wireless
has no default and shows an example.""",
    ),
    Daemon(
        "arqd",
        "Documentation/arq.rst",
        "pep-daemon/arqd.conf.example",
        "pep-daemon/arqd.schema.json",
        man="Documentation/man/arqd.8.rst",
        uci="packaging/openwrt/net/airtcp/files/arqd.config",
        uci_intro="""/etc/config/arqd: arqd, the link-layer ARQ (airtcp), one at each end.

One section of type arqd per wireless link; /etc/init.d/arqd starts those with
enabled '1'.  Every option is an arqd key (`arqd --help` gives each one's
meaning, man arqd too); each is listed here with its default, commented out.""",
        intro="""arqd.conf: a TCP-unaware link-layer ARQ (Documentation/arq.rst); run one
at each end of the wireless link.

One "key = value" per line; "#" starts a comment.  Every key is also a
flag (--max-rtx 3), and flags win over this file.  Check a file with
    arqd check -c /etc/arqd/wlan0.conf
Every key is listed with its default, commented out; link has no default
and shows an example.""",
    ),
)


# ---------------------------------------------------------------- values as people write them


def _scaled(value: int, units: dict[str, int], order: list[str]) -> str:
    """The largest unit that writes value exactly (order: smallest first)."""
    for suffix in reversed(order):
        if value and value % units[suffix] == 0:
            return f"{value // units[suffix]}{suffix}"
    return f"{value}{order[0]}"


def render_value(schema: dict[str, Any], key: dict[str, Any], value: int) -> str:
    """A bound or default of key in the daemon's own notation."""
    units = schema["units"]
    if key["type"] == "duration":
        return _scaled(value, units["duration"], ["us", "ms", "s"])
    if key["type"] == "size":
        return _scaled(value, units["size"], ["", "KiB", "MiB", "GiB"])
    if key["type"] == "rate":
        return _scaled(value, units["rate"], ["bit", "kbit", "mbit", "gbit"])
    return str(value)


def type_text(schema: dict[str, Any], key: dict[str, Any]) -> str:
    """Type and range, e.g. "integer 1..16 (segments)", "duration 1ms..60s"."""
    kind = key["type"]
    if kind == "choice":
        return "one of " + ", ".join(key["choices"])
    if kind == "bool":
        return "bool"
    if kind == "string":
        return "string"
    if kind == "fraction":
        return "fraction in (0, 1), e.g. 0.01 or 1%"
    if kind == "interfaces":
        return f"interface names, up to {key['max']}"
    span = f"{render_value(schema, key, key['min'])}..{render_value(schema, key, key['max'])}"
    if kind == "uint":
        return f"integer {span}" + (f" ({key['unit']})" if "unit" in key else "")
    if kind == "uint_or_auto":
        return f"{span} or auto"
    return f"{kind} {span}"


def default_text(key: dict[str, Any]) -> str:
    if key["required"]:
        return "(required)"
    return str(key["default"]) if key["default"] != "" else "(none)"


# ---------------------------------------------------------------- the three copies


def docs_table(schema: dict[str, Any]) -> str:
    prog = schema["program"]
    lines = [
        f"{BEGIN} (written by ``{REGENERATE}`` from ``{prog} schema --json``: edit the key table in the C source)",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 20 22 12 46",
        "",
        "   * - key",
        "     - type",
        "     - default",
        "     - meaning",
    ]
    for key in schema["keys"]:
        lines += [
            f"   * - ``{key['name']}``",
            f"     - {type_text(schema, key)}",
            f"     - {default_text(key)}",
            f"     - {key['help']}",
        ]
    return "\n".join([*lines, "", END])


def man_options(schema: dict[str, Any]) -> str:
    """The keys as a definition list: name and flag, then type, default, meaning."""
    prog = schema["program"]
    lines = [f"{BEGIN} (written by ``{REGENERATE}`` from ``{prog} schema --json``: edit the key table in the C source)"]
    section = None
    for key in schema["keys"]:
        if key["section"] != section:
            section = key["section"]
            lines += ["", f"*{section[:1].upper()}{section[1:]}*", ""]
        value = f"required, e.g. {key['example']}" if key["required"] else f"default: {default_text(key)}"
        lines += [
            f"``{key['name']}`` (``{key['flag']}``)",
            f"    {type_text(schema, key)}; {value}.  {key['help']}",
            "",
        ]
    return "\n".join([*lines, END])


def replace_region(text: str, region: str, where: str) -> str:
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"knobs: {where}: no '{BEGIN}' ... '{END}' region for the knobs")
    return text[:start] + region + text[end + len(END) :]


def replace_docs_table(text: str, schema: dict[str, Any], where: str) -> str:
    return replace_region(text, docs_table(schema), where)


def _comment(text: str) -> list[str]:
    return ["# " + line if line else "#" for line in text.splitlines()]


def example_config(daemon: Daemon, schema: dict[str, Any]) -> str:
    lines = _comment(daemon.intro)
    lines += [
        "#",
        f"# Written by `{REGENERATE}` from `{daemon.program} schema --json`: edit the",
        "# key table in the C source, not this file.",
    ]
    section = None
    for key in schema["keys"]:
        if key["section"] != section:
            section = key["section"]
            lines += ["", f"# {'-' * 60} {section}"]
        lines.append("")
        lines += textwrap.wrap(
            key["help"], width=78, initial_indent="# ", subsequent_indent="# ", break_on_hyphens=False
        )
        lines.append(f"# {type_text(schema, key)}")
        if key["required"]:
            lines.append(f"{key['name']} = {key['example']}")
        else:
            lines.append(f"#{key['name']} = {key['default']}".rstrip())
    return "\n".join(lines) + "\n"


def _uci_value(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def uci_config(daemon: Daemon, schema: dict[str, Any]) -> str:
    """The default /etc/config/DAEMON: one disabled section, every key commented out with its default."""
    lines = _comment(daemon.uci_intro)
    lines += [f"# Written by `{REGENERATE}` from `{daemon.program} schema --json`.", ""]
    required = [key for key in schema["keys"] if key["required"]]
    name = required[0]["example"] if daemon.program == "arqd" else "main"
    lines += [f"config {daemon.program} {_uci_value(name)}", "\toption enabled '0'"]
    section = None
    for key in schema["keys"]:
        if key["section"] != section:
            section = key["section"]
            lines += ["", f"\t# {section}"]
        kind = "list" if key["type"] == "interfaces" else "option"
        if key["required"]:
            lines.append(f"\t{kind} {key['name']} {_uci_value(key['example'])}")
        else:
            lines.append(f"\t#{kind} {key['name']} {_uci_value(str(key['default']))}")
    return "\n".join(lines) + "\n"


def schema_json(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2) + "\n"


# ---------------------------------------------------------------- driver


def load_schema(program: str, root: Path = ROOT) -> dict[str, Any]:
    binary = root / "pep-daemon" / "build" / program
    if not binary.exists():
        raise SystemExit(f"knobs: {binary} is missing: run `make -C pep-daemon` first")
    done = subprocess.run([str(binary), "schema", "--json"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"knobs: {binary} schema --json: exit {done.returncode}: {done.stderr.strip()}")
    schema: dict[str, Any] = json.loads(done.stdout)
    return schema


def expected_files(daemon: Daemon, schema: dict[str, Any], root: Path) -> dict[Path, str]:
    """Each file this daemon's schema writes, with the content it must have."""
    doc = root / daemon.doc
    man = root / daemon.man
    return {
        doc: replace_docs_table(doc.read_text(), schema, daemon.doc),
        man: replace_region(man.read_text(), man_options(schema), daemon.man),
        root / daemon.example: example_config(daemon, schema),
        root / daemon.schema: schema_json(schema),
        root / daemon.uci: uci_config(daemon, schema),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite every copy from the daemons' schemas")
    mode.add_argument("--check", action="store_true", help="exit 1 if any copy differs from what --write writes")
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree whose copies to write or check")
    args = parser.parse_args(argv)
    stale = []
    for daemon in DAEMONS:
        schema = load_schema(daemon.program)
        for path, text in expected_files(daemon, schema, args.root).items():
            if path.exists() and path.read_text() == text:
                continue
            if args.write:
                path.write_text(text)
                print(f"knobs: wrote {path.relative_to(args.root)}")
            else:
                stale.append(str(path.relative_to(args.root)))
    if stale:
        print(
            f"knobs: {', '.join(stale)}: not what the daemons' schemas say; run `{REGENERATE}` "
            "(the C key tables are the source)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
