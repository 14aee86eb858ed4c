"""A repository's real entry points: how its users start it, as the manifests and the code say.

Console scripts (`[project.scripts]` in pyproject.toml, `console_scripts` in setup.cfg), `__main__.py`
(`python -m pkg`), `main()` under `cmd/` (Go), `bin` in package.json, `[[bin]]` (or src/main.rs) in
Cargo.toml, and command-line groups in the code: click groups and commands (`@click.group`, `@g.command`,
`g.add_command`, a `Group` subclass instantiated with `name=`), Typer apps (`typer.Typer()` +
`@app.command`) and argparse sub-commands (`add_parser("name")`). Pure: manifest and source texts and
facts in, entries out; a manifest that does not parse gives none.
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

from generator.analyze.exports import follow_python
from generator.analyze.facts import FileFacts

log = logging.getLogger(__name__)

MANIFESTS = frozenset({"pyproject.toml", "setup.cfg", "package.json", "Cargo.toml"})
MAX_ENTRIES = 12
CLI_LIBRARIES = frozenset({"click", "typer", "argparse"})
MAX_LISTED_COMMANDS = 8


@dataclass(frozen=True)
class Entry:
    name: str  # what a user types or runs: "flask", "python -m flask", "cmd/server"
    how: str  # where it is declared, in words: "console script (pyproject.toml)"
    path: str  # the file that starts it
    qualname: str = ""  # the symbol called, when known


def _python_target(target: str, facts: Mapping[str, FileFacts]) -> tuple[str, str] | None:
    """`flask.cli:main` -> ("src/flask/cli.py", "main"), the module looked up among the repository's files,
    a name it imports followed to where it is defined (exports.follow_python)."""
    module, _, attr = target.strip().partition(":")
    attr = attr.split("[")[0].strip()
    parts = module.strip().split(".")
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    tails = ("/".join(parts) + ".py", "/".join(parts) + "/__init__.py")
    for path in sorted(facts, key=lambda p: (p.count("/"), p)):
        if path in tails or path.endswith(tuple("/" + t for t in tails)):
            if attr and "." not in attr:  # `pkg:main` re-exported (`from .cli import main`): the real one
                defining, symbol, _module = follow_python(path, attr, facts)
                if symbol is not None:
                    return defining, symbol.qualname
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


def _is_project_code(path: str) -> bool:
    """Not a test, example or tooling file: a `click.group` in a test fixture is nobody's entry point."""
    from generator.analyze.groups import dir_group

    return "/" not in path or dir_group(path.split("/", 1)[0]) == "source"


def _main_of(facts: FileFacts) -> str:
    return next((s.qualname for s in facts.symbols if s.name == "main" and s.parent is None), "")


def cli_sources(facts: Mapping[str, FileFacts]) -> list[str]:
    """The code files that may define command-line groups: those importing click, typer or argparse."""
    return sorted(p for p, f in facts.items() if f.file.kind == "code" and f.file.language == "python"
                  and any(i.module.split(".", 1)[0] in CLI_LIBRARIES for i in f.imports))


# One decorator line, `@cli.command("name", ...)`; the `def` it decorates is found line by line
# (_decorated_function), not by one regex spanning lines: a lazy repeat over lines whose alternatives overlap
# backtracked exponentially on a file with many decorated commands.
_DECORATOR = re.compile(r"^[ \t]*@([\w.]+)\.(command|group)\(\s*(?:[\"']([\w:.-]+)[\"'])?", re.M)
_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)")
MAX_DECORATOR_LINES = 120  # a decorated def further below than this is not the command's


def _decorated_function(text: str, start: int) -> str:
    """The name of the function whose decorator line begins at `start` (skipping the other decorators and
    continuation lines of multi-line decorators), or '' when no `def` follows closely."""
    pos = text.find("\n", start)
    for _ in range(MAX_DECORATOR_LINES):
        if pos < 0:
            return ""
        end = text.find("\n", pos + 1)
        line = text[pos + 1:] if end < 0 else text[pos + 1:end]
        pos = end
        m = _DEF.match(line)
        if m:
            return m.group(1)
        if line.lstrip().startswith(("class ", "return ", "if ", "for ", "while ", "with ")):
            return ""
    return ""


_GROUP_VAR = re.compile(r"^(\w+)\s*=\s*((?:[\w]+\.)*(?:\w*Group|Typer))\(", re.M)
_NAME_ARG = re.compile(r"\bname\s*=\s*[\"']([\w:.-]+)[\"']")
_ADD_COMMAND = re.compile(r"\b(\w+)\.add_(?:command|typer)\(\s*(\w+)(?=\s*[,)])"
                          r"(?:\s*,\s*(?:name\s*=\s*)?[\"']([\w:.-]+)[\"'])?")
_ADD_PARSER = re.compile(r"\.add_parser\(\s*[\"']([\w:.-]+)[\"']")
_PROG = re.compile(r"ArgumentParser\([^)]*?\bprog\s*=\s*[\"']([\w:.-]+)[\"']", re.S)


def _command_name(function: str) -> str:
    """click's default name for a command function: `_` -> `-`, without a `_command`/`_cmd` suffix."""
    for suffix in ("_command", "_cmd", "_group", "_grp"):
        if function.endswith(suffix) and function != suffix:
            function = function[: -len(suffix)]
    return function.replace("_", "-")


def _enclosing(facts: FileFacts, line: int, kinds: frozenset[str]) -> str:
    inside = [s for s in facts.symbols if s.kind in kinds and s.start_line <= line <= s.end_line]
    return min(inside, key=lambda s: s.end_line - s.start_line).qualname if inside else ""


def cli_groups(path: str, text: str, facts: FileFacts) -> list[Entry]:
    """The command groups one Python file defines, each with its commands (click, Typer, argparse)."""
    line_of = [0]
    for m in re.finditer("\n", text):
        line_of.append(m.end())

    def line(pos: int) -> int:
        lo, hi = 0, len(line_of) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_of[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    library = "typer" if "typer" in text and "Typer(" in text else "click"
    commands: dict[str, str] = {}  # function -> command name
    groups: dict[str, str] = {}  # group handle (function, variable or class) -> its name
    members: dict[str, list[str]] = {}  # group handle -> command functions
    instances: dict[str, str] = {}  # group variable -> the group class of this file it instantiates
    for m in _DECORATOR.finditer(text):
        owner, kind, name = m.group(1), m.group(2), m.group(3)
        function = _decorated_function(text, m.start())
        if not function:
            continue
        if kind == "group":
            groups[function] = name or _command_name(function)
        else:
            commands[function] = name or _command_name(function)
        if owner.split(".")[0] not in CLI_LIBRARIES:  # `@cli.command()`: a command of the group `cli`
            members.setdefault(owner, []).append(function)
    for m in _GROUP_VAR.finditer(text):
        named = _NAME_ARG.search(text, m.end(), m.end() + 400)
        groups[m.group(1)] = named.group(1) if named else m.group(1)
        instances[m.group(1)] = m.group(2).rsplit(".", 1)[-1]
    for m in _ADD_COMMAND.finditer(text):
        owner, function, name = m.group(1), m.group(2), m.group(3)
        if owner == "self":
            owner = _enclosing(facts, line(m.start()), frozenset({"class"}))
        members.setdefault(owner, []).append(function)
        if name:
            commands[function] = name
    out = []
    for handle, name in groups.items():
        # an instance of a group class gets the commands its class adds (`self.add_command` in __init__)
        functions = [*members.get(instances.get(handle, ""), ()), *members.get(handle, ())]
        listed = list(dict.fromkeys(commands.get(f) or groups.get(f) or _command_name(f) for f in functions))
        if not listed:
            continue
        shown = ", ".join(listed[:MAX_LISTED_COMMANDS]) + (" …" if len(listed) > MAX_LISTED_COMMANDS else "")
        qualname = handle if any(s.qualname == handle for s in facts.symbols) else ""
        out.append(Entry(name, f"{library} command group: {shown}", path, qualname))
    subcommands = list(dict.fromkeys(m.group(1) for m in _ADD_PARSER.finditer(text)))
    if subcommands and "ArgumentParser(" in text:
        prog = _PROG.search(text)
        at = text.index("ArgumentParser(")
        owner = _enclosing(facts, line(at), frozenset({"function", "method"}))
        name = prog.group(1) if prog else posixpath.splitext(posixpath.basename(path))[0]
        shown = ", ".join(subcommands[:MAX_LISTED_COMMANDS]) + (
            " …" if len(subcommands) > MAX_LISTED_COMMANDS else "")
        out.append(Entry(name, f"argparse sub-commands: {shown}", path, owner))
    return out


def find_entry_points(manifests: Mapping[str, str], facts: Mapping[str, FileFacts],
                      limit: int = MAX_ENTRIES, sources: Mapping[str, str] | None = None) -> list[Entry]:
    """`manifests`: {path: text} of the repository's pyproject.toml, setup.cfg, package.json, Cargo.toml;
    `sources`: {path: text} of the files `cli_sources` names, for their command-line groups."""
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
    for path, text in sorted((sources or {}).items()):
        if path in facts and _is_project_code(path):
            found += cli_groups(path, text, facts[path])
    seen: set[tuple[str, str]] = set()
    unique = []
    for e in found:
        if (e.name, e.path) not in seen:
            seen.add((e.name, e.path))
            unique.append(e)
    return unique[:limit]
