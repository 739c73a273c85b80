"""Loading of the project's TOML data files with one-line errors."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

from .errors import ConfigError


def load_named(kind: str, directory: Path, name_or_path: str, flag: str) -> tuple[str, dict[str, object], str]:
    """Find ``<directory>/<name>.toml`` (or a path) and parse it.

    Returns (name, data, where) where ``where`` is the file path used in
    error messages.
    """
    path = Path(name_or_path)
    if not (path.suffix == ".toml" and path.is_file()):
        path = directory / f"{name_or_path}.toml"
    if not path.is_file():
        known = ", ".join(available(directory)) or "none"
        raise ConfigError(flag, kind, name_or_path, f"unknown {kind}; known: {known}")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), "<file>", path.name, f"not valid TOML: {exc}") from None
    return path.stem, data, str(path)


def available(directory: Path) -> list[str]:
    return sorted(p.stem for p in directory.glob("*.toml"))


def check_keys(where: str, prefix: str, table: Mapping[str, object], allowed: tuple[str, ...] | list[str]) -> None:
    """Reject unknown keys: a typo must never be silently ignored."""
    for key in table:
        if key not in allowed:
            raise ConfigError(where, f"{prefix}{key}", table[key], f"unknown key; expected one of {', '.join(allowed)}")


def table(where: str, key: str, value: object) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise ConfigError(where, key, value, "expected a table")
    return value


def text(where: str, key: str, value: object, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ConfigError(where, key, value, "expected a non-empty string")
    return value
