"""A stage's code version: the hash of every project module its root modules import, transitively, and of the
data files it declares it reads. Keys derived from it follow the code, with no hand-kept list of modules to
forget (a change to a module nobody listed once re-rendered no page).

Imports are read from the source with `ast`, never by importing: a build whose cache matches must not load the
code the cache stands for (the site engine and its imports). Imports inside functions count (this codebase
imports lazily); those under `if TYPE_CHECKING:` do not (they never run). A string constant that is the
dotted name of a project module counts too: modules are loaded by name (a Markdown extension,
`python -m generator.site.material.engine`). Only modules of the project's own packages are followed, found by
name
under the folder that holds them, so any layout of subpackages works."""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

PACKAGES = ("generator", "answer", "sourcebook")
# the folder holding the project's packages: the checkout, or site-packages for an installed wheel
BASE = Path(__file__).resolve().parent.parent
_QUOTED = re.compile(rb"""(["'])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\1""")
# the fields holding nested statements: bodies of functions, classes, if/for/while/with/try, handlers, cases
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
# a line that starts an import statement; shapes the line scan does not follow (the module is parsed whole)
_STARTS = re.compile(rb"[ \t]*(?:import[ \t]+[\w.]|from[ \t]+[\w.]+[ \t]+import\b)")
_ODD = re.compile(rb"[;:][ \t]*(?:import[ \t]+[\w.]|from[ \t]+[\w.]+[ \t]+import\b)"
                  rb"|^[ \t]*(?:import|from)[ \t][^\n#]*\\\r?$"
                  rb"|^[ \t]+if[ \t]+(?:typing\.)?TYPE_CHECKING\b", re.MULTILINE)
_TYPE_CHECKING = re.compile(rb"if[ \t]+(?:typing\.)?TYPE_CHECKING[ \t]*:[ \t]*(?:#.*)?\r?$")


def module_file(name: str, base: Path | None = None) -> Path | None:
    """The source file of module `name` under `base` (`a.b` -> a/b.py or a/b/__init__.py), None if absent.
    `base` None: BASE, read when called (the tests point it at a copy of the packages)."""
    base = BASE if base is None else base
    parts = name.split(".")
    for candidate in (base.joinpath(*parts[:-1], parts[-1] + ".py"), base.joinpath(*parts, "__init__.py")):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def _imported_names(source: bytes, name: str, is_package: bool) -> frozenset[str]:
    """Every dotted name module `name` may import (candidates: `from a import b` gives a and a.b, whichever
    is a module), relative imports resolved, and every quoted dotted name (a module named by string: kept
    only if it names a module, import_closure looks). Memoized on the bytes: stages share most modules."""
    package = name if is_package else name.rpartition(".")[0]
    found = {m.group(2).decode() for m in _QUOTED.finditer(source)}
    statements = _import_statements(source)
    if statements is None:
        statements = _import_nodes(ast.parse(source).body)
    for node in statements:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        else:
            module = _absolute(node.module, node.level, package)
            if module is not None:
                found.add(module)
                found.update(f"{module}.{alias.name}" for alias in node.names if alias.name != "*")
    return frozenset(found)


def _import_nodes(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of a parsed module, at any depth, but for those under `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = list(body)
    while pending:  # imports are statements: only statement lists are walked, not expressions
        node = pending.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)  # the `else:` of a TYPE_CHECKING test does run
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for field in _BLOCKS:
            pending.extend(getattr(node, field, ()))
    return found


def _import_statements(source: bytes) -> list[ast.Import | ast.ImportFrom] | None:
    """The same statements as _import_nodes, from the lines that start one, each parsed alone (parsing the
    whole module costs far more, on every build); None when the shape is unusual (an import after `;`
    or `:`, a continued line, a nested TYPE_CHECKING test, a statement that does not parse alone): the
    caller then parses the whole module. Import-like lines in docstrings only add candidates."""
    if _ODD.search(source):
        return None
    lines = source.split(b"\n")
    skip = _type_checking_lines(lines)
    found: list[ast.Import | ast.ImportFrom] = []
    for number, line in enumerate(lines):
        if number in skip or not _STARTS.match(line):
            continue
        text, depth, end = line.lstrip(), line.count(b"(") - line.count(b")"), number
        while depth > 0 and end + 1 < len(lines):
            end += 1
            text += b"\n" + lines[end]
            depth += lines[end].count(b"(") - lines[end].count(b")")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return None
        found.extend(_import_nodes(tree.body))
    return found


def _type_checking_lines(lines: list[bytes]) -> set[int]:
    """The numbers of the lines inside top-level `if TYPE_CHECKING:` blocks (not their `else:`)."""
    skip: set[int] = set()
    inside = False
    for number, line in enumerate(lines):
        if _TYPE_CHECKING.match(line):
            inside = True
        elif inside and line.strip() and not line[:1].isspace() and not line.startswith(b"#"):
            inside = False  # the next top-level statement (an `else:` included) ends the block
        if inside:
            skip.add(number)
    return skip


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _absolute(module: str | None, level: int, package: str) -> str | None:
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts) or (level - 1 == len(parts) and not module):
        return None  # beyond the top-level package: not one of ours
    head = parts[: len(parts) - (level - 1)]
    return ".".join([*head, module] if module else head) or None


def import_closure(roots: Iterable[str], base: Path | None = None,
                   packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Module name -> source file of every project module that importing `roots` may run: the roots, what
    they import anywhere in their code, transitively, and the `__init__` of every package on the way."""
    modules = project_modules(BASE if base is None else base, packages)
    found: dict[str, Path] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in found:
            continue
        path = modules.get(name)
        if path is None:
            continue  # `from generator.<package> import name`: the name is not a module (or not one of ours)
        found[name] = path
        parent = name.rpartition(".")[0]
        if parent:
            pending.append(parent)  # importing a.b runs a/__init__.py first
        pending.extend(_imported_names(path.read_bytes(), name, path.name == "__init__.py"))
    return found


def project_modules(base: Path, packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Module name -> source file of every module of `packages` under `base` (one walk of the folders, not a
    look-up per imported name)."""
    found: dict[str, Path] = {}
    for package in packages:
        for folder, dirs, files in os.walk(base / package):
            here = Path(folder)
            dirs[:] = sorted(d for d in dirs if d.isidentifier() and (here / d / "__init__.py").is_file())
            prefix = ".".join(here.relative_to(base).parts)
            for file in files:
                stem, _, suffix = file.partition(".")
                if suffix == "py" and stem.isidentifier():
                    found[prefix if stem == "__init__" else f"{prefix}.{stem}"] = here / file
    return found


def module_name(path: Path, base: Path | None = None, packages: Iterable[str] = PACKAGES) -> str | None:
    """The module whose source is `path`, if it is one of the project's under `base` (else None)."""
    base = BASE if base is None else base
    try:
        parts = path.resolve().relative_to(base.resolve()).with_suffix("").parts
    except ValueError:
        return None
    if path.suffix != ".py" or not parts or parts[0] not in tuple(packages):
        return None
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def code_version(roots: Iterable[str], data: Iterable[Path] = (), base: Path | None = None,
                 packages: Iterable[str] = PACKAGES) -> str:
    """The hash of the import closure of `roots` (each module by name and bytes) and of the `data` files
    (a folder: every file in it, by its path inside the folder)."""
    digest = hashlib.sha256(b"code-version 1\0")
    for name, path in sorted(import_closure(roots, base, packages).items()):
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    for entry in data:
        digest.update(b"data\0" + entry.name.encode() + b"\0")
        files = sorted(p for p in entry.rglob("*") if p.is_file()) if entry.is_dir() else [entry]
        for path in files:
            if path.is_file():
                digest.update(path.relative_to(entry).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def stage_version(*roots: str, data: tuple[Path, ...] = ()) -> str:
    """code_version of this installation's `roots` and `data`, computed once per process."""
    return code_version(roots, data)
