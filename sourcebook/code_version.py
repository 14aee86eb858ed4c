"""A stage's code version: the hash of every project module its root modules import, transitively, and of the
data files it declares it reads. Keys derived from it follow the code, with no hand-kept list of modules to
forget (a change to a module nobody listed once re-rendered no page).

Imports are read from the source with `ast`, never by importing: a build whose cache matches must not load the
code the cache stands for (the site engine and its imports). Imports inside functions count (this codebase
imports lazily); those under `if TYPE_CHECKING:` do not (they never run). A string constant that is the
dotted name of a project module counts too: modules are loaded by name (a Markdown extension,
`python -m generator.site_engine`). Only modules of the project's own packages are followed, found by name
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
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


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
    is a module), relative imports resolved. Memoized on the bytes: stages share most of their modules."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(source)]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)  # the `else:` of a TYPE_CHECKING test does run
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node.module, node.level, package)
            if module is not None:
                found.add(module)
                found.update(f"{module}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _DOTTED.fullmatch(node.value):
            found.add(node.value)  # kept only if it names a module file (import_closure looks)
        pending.extend(ast.iter_child_nodes(node))
    return frozenset(found)


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
            continue  # `from generator.x import name`: the name is not a module (or not one of ours)
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
