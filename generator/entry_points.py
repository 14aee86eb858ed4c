"""A repository's real entry points: how its users start it, as the manifests and the code say.

Console scripts (`[project.scripts]` in pyproject.toml, `console_scripts` in setup.cfg), `__main__.py`
(`python -m pkg`), `main()` under `cmd/` (Go), `bin` in package.json, `[[bin]]` (or src/main.rs) in
Cargo.toml. Pure: manifest texts and facts in, entries out; a manifest that does not parse gives none.
"""

from __future__ import annotations

import configparser
import json
import logging
import posixpath
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.facts import FileFacts

log = logging.getLogger(__name__)

MANIFESTS = frozenset({"pyproject.toml", "setup.cfg", "package.json", "Cargo.toml"})
MAX_ENTRIES = 12


@dataclass(frozen=True)
class Entry:
    name: str  # what a user types or runs: "flask", "python -m flask", "cmd/server"
    how: str  # where it is declared, in words: "console script (pyproject.toml)"
    path: str  # the file that starts it
    qualname: str = ""  # the symbol called, when known


def _python_target(target: str, facts: Mapping[str, FileFacts]) -> tuple[str, str] | None:
    """`flask.cli:main` -> ("src/flask/cli.py", "main"), the module looked up among the repository's files."""
    module, _, attr = target.strip().partition(":")
    attr = attr.split("[")[0].strip()
    parts = module.strip().split(".")
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    tails = ("/".join(parts) + ".py", "/".join(parts) + "/__init__.py")
    for path in sorted(facts, key=lambda p: (p.count("/"), p)):
        if path in tails or path.endswith(tuple("/" + t for t in tails)):
            names = {s.qualname for s in facts[path].symbols}
            return path, attr if attr in names else ""
    return None


def _scripts_from_pyproject(text: str) -> dict[str, str]:
    data = tomllib.loads(text)
    project = data.get("project") or {}
    scripts: dict[str, Any] = dict(project.get("scripts") or {})
    scripts.update(dict(project.get("gui-scripts") or {}))
    poetry = ((data.get("tool") or {}).get("poetry") or {}).get("scripts") or {}
    scripts.update({k: v for k, v in dict(poetry).items() if isinstance(v, str)})
    return {str(k): str(v) for k, v in scripts.items() if isinstance(v, str)}


def _scripts_from_setup_cfg(text: str) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    raw = parser.get("options.entry_points", "console_scripts", fallback="")
    out = {}
    for line in raw.splitlines():
        name, sep, target = line.partition("=")
        if sep and name.strip():
            out[name.strip()] = target.strip()
    return out


def _js_bins(path: str, text: str, facts: Mapping[str, FileFacts]) -> list[Entry]:
    data = json.loads(text)
    if not isinstance(data, dict):
        return []
    bins = data.get("bin")
    if isinstance(bins, str):
        bins = {str(data.get("name") or posixpath.basename(posixpath.dirname(path)) or "bin"): bins}
    if not isinstance(bins, dict):
        return []
    base = posixpath.dirname(path)
    out = []
    for name, target in bins.items():
        if isinstance(target, str):
            file = posixpath.normpath(posixpath.join(base, target)).lstrip("./")
            if file in facts:
                out.append(Entry(str(name), "bin in package.json", file))
    return out


def _cargo_bins(path: str, text: str, facts: Mapping[str, FileFacts]) -> list[Entry]:
    data = tomllib.loads(text)
    base = posixpath.dirname(path)
    crate = str((data.get("package") or {}).get("name") or "")
    out = []
    for b in data.get("bin") or []:
        if isinstance(b, dict):
            name = str(b.get("name") or crate)
            file = posixpath.join(base, str(b.get("path") or f"src/bin/{name}.rs")) if base else str(
                b.get("path") or f"src/bin/{name}.rs")
            if file in facts:
                out.append(Entry(name, "[[bin]] in Cargo.toml", file, _main_of(facts[file])))
    default = posixpath.join(base, "src/main.rs") if base else "src/main.rs"
    if crate and default in facts and not any(e.path == default for e in out):
        out.append(Entry(crate, "binary crate (src/main.rs)", default, _main_of(facts[default])))
    return out


def _main_of(facts: FileFacts) -> str:
    return next((s.qualname for s in facts.symbols if s.name == "main" and s.parent is None), "")


def find_entry_points(manifests: Mapping[str, str], facts: Mapping[str, FileFacts],
                      limit: int = MAX_ENTRIES) -> list[Entry]:
    """`manifests`: {path: text} of the repository's pyproject.toml, setup.cfg, package.json, Cargo.toml."""
    found: list[Entry] = []
    for path, text in sorted(manifests.items(), key=lambda kv: (kv[0].count("/"), kv[0])):
        name = posixpath.basename(path)
        try:
            if name in {"pyproject.toml", "setup.cfg"}:
                scripts = (_scripts_from_pyproject(text) if name == "pyproject.toml"
                           else _scripts_from_setup_cfg(text))
                for command, target in sorted(scripts.items()):
                    resolved = _python_target(target, facts)
                    if resolved:
                        found.append(Entry(command, f"console script ({name})", *resolved))
            elif name == "package.json":
                found += _js_bins(path, text, facts)
            elif name == "Cargo.toml":
                found += _cargo_bins(path, text, facts)
        except (ValueError, configparser.Error, tomllib.TOMLDecodeError, TypeError) as exc:
            log.info("%s: not read for entry points (%s)", path, exc)
    for path, f in sorted(facts.items()):
        if f.file.kind != "code":
            continue
        if posixpath.basename(path) == "__main__.py":
            package = posixpath.dirname(path)
            module = package.split("/", 1)[1] if package.startswith("src/") else package
            found.append(Entry(f"python -m {module.replace('/', '.')}", "__main__.py", path, _main_of(f)))
        elif path.endswith(".go") and re.match(r"(?:.*/)?cmd/", path):
            main = _main_of(f)
            if main:
                found.append(Entry(posixpath.dirname(path), "main() under cmd/", path, main))
    seen: set[tuple[str, str]] = set()
    unique = []
    for e in found:
        if (e.name, e.path) not in seen:
            seen.add((e.name, e.path))
            unique.append(e)
    return unique[:limit]
