"""Names looked up through wildcard imports (Kotlin's `import a.b.*`, generator/analyze/references_oo.py's
in_module): the edges of many packages that all wildcard-import one another and call many names the
repository never defines, and a bound on the lookups that takes, which once grew with files x globbed
files x hops for every such name."""

from __future__ import annotations

from typing import Any

import pytest

from generator.analyze.graph import build_graph
from generator.analyze.references_loose import LooseBinder
from tests.support.parsed import parse

PACKAGES = 10
FILES = 10  # per package: each file globs the other packages' 90 files
UNDEFINED = ["println", "require", "check", "listOf", "mapOf", "error", "repeat", "maxOf", "minOf",
             "buildString", "lazy", "emptyList", "setOf", "mutableListOf", "arrayOf", "runCatching",
             "synchronized", "assert", "TODO", "requireNotNull", "checkNotNull", "sequenceOf",
             "generateSequence", "also", "takeIf"]


def _path(p: int, i: int) -> str:
    return f"src/main/kotlin/app/p{p}/F{i}.kt"


def _source(p: int, i: int) -> str:
    """File i of package p: a function calling the next package's entry point (defined in its file 0
    only) and the undefined names."""
    imports = "".join(f"import app.p{q}.*\n" for q in range(PACKAGES) if q != p)
    calls = "\n".join(f"    {name}()" for name in UNDEFINED)
    entry = f"fun entry{p}() {{}}\n" if i == 0 else ""
    return (f"package app.p{p}\n\n{imports}\n{entry}fun work{p}x{i}() {{\n"
            f"    entry{(p + 1) % PACKAGES}()\n{calls}\n}}\n")


def _facts() -> list[Any]:
    return [parse(_path(p, i), _source(p, i), "kotlin") for p in range(PACKAGES) for i in range(FILES)]


def test_wildcard_imports_bind_what_one_package_defines_and_nothing_for_undefined_names(
        monkeypatch: pytest.MonkeyPatch) -> None:
    lookups = 0
    in_module = LooseBinder.in_module

    def counted(self: LooseBinder, *args: Any, **kwargs: Any) -> Any:
        nonlocal lookups
        lookups += 1
        return in_module(self, *args, **kwargs)

    monkeypatch.setattr(LooseBinder, "in_module", counted)
    calls = build_graph(_facts()).calls
    for p in range(PACKAGES):
        for i in range(FILES):
            expected = [(_path((p + 1) % PACKAGES, 0), f"entry{(p + 1) % PACKAGES}")]
            assert calls.get((_path(p, i), f"work{p}x{i}")) == expected, (p, i)
    assert sum(len(targets) for targets in calls.values()) == PACKAGES * FILES  # undefined names: no edge
    # a name looked up a few times per use, not once per globbed file and hop: the old walk took
    # 1,170,000 lookups here (about files x globbed files x hops for each undefined name), this takes 20,000
    references = PACKAGES * FILES * (len(UNDEFINED) + 1)
    assert lookups < 10 * references, lookups


MODULES = 30


def test_typescript_barrel_reexports_bind_one_definition_and_none_for_two_or_none() -> None:
    """TypeScript modules that reach one another through a barrel (`export * from './m0'` for each, and
    `export * from './index'` back): a name one module defines links, one two modules define (`dup`) or
    none does (`setTimeout`) links nowhere but in the modules that define it."""
    barrel = "".join(f"export * from './m{i}';\n" for i in range(MODULES))
    sources = {"src/index.ts": barrel}
    for i in range(MODULES):
        dup = "export function dup() {}\n" if i < 2 else ""
        sources[f"src/m{i}.ts"] = (f"export * from './index';\n{dup}export function f{i}() {{}}\n"
                                   f"export function g{i}() {{\n  f{(i + 1) % MODULES}();\n  dup();\n"
                                   "  setTimeout();\n  parseInt();\n  structuredClone();\n}\n")
    facts = [parse(path, text, "typescript") for path, text in sources.items()]
    calls = build_graph(facts).calls
    for i in range(MODULES):
        expected = {(f"src/m{(i + 1) % MODULES}.ts", f"f{(i + 1) % MODULES}")}
        if i < 2:  # a module's own `dup` shadows what its re-exports bring
            expected.add((f"src/m{i}.ts", "dup"))
        assert set(calls.get((f"src/m{i}.ts", f"g{i}"), [])) == expected, i
    assert sum(len(targets) for targets in calls.values()) == MODULES + 2
