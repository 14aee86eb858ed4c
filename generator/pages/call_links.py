"""Cross-references of a file's symbols, from the reference graph: what each calls, who calls it, which
tests reference it; and for a test file, the code it exercises.

These are rendering inputs only. They are never part of a draft's key: a new caller elsewhere re-renders a
page (cheap) but never asks a writer for new prose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from generator.analyze.facts import FileFacts

SymbolKey = tuple[str, str]  # (path, qualname); qualname "" = the file's top level

_DATA_KINDS = frozenset({"constant", "variable"})
# a reference to a type names it (a parameter's type, a return type, a base, a construction): the type is
# used, not called, so it is listed under "Uses" and its own section lists "Used by"
TYPE_KINDS = frozenset({"class", "struct", "interface", "enum", "trait", "type", "union", "record", "object",
                        "typedef", "alias", "protocol", "typealias", "namespace", "module"})
LINK_LIMIT = 12  # per list: a symbol called from 200 places links the first dozen and counts the rest


@dataclass(frozen=True)
class SymbolRefs:
    calls: tuple[SymbolKey, ...] = ()
    called_by: tuple[SymbolKey, ...] = ()
    tested_by: tuple[SymbolKey, ...] = ()
    more_calls: int = 0  # how many were left out of each list
    more_called_by: int = 0
    more_tested_by: int = 0
    uses: tuple[SymbolKey, ...] = ()  # the types it references
    more_uses: int = 0


@dataclass(frozen=True)
class FileRefs:
    """Per symbol qualname of one file; `exercises`: for a test file, the non-test symbols it references."""

    symbols: Mapping[str, SymbolRefs] = field(default_factory=dict)
    exercises: tuple[SymbolKey, ...] = ()
    more_exercises: int = 0

    def key(self) -> str:
        """A stable text of everything rendered from these refs (part of the page key, not the draft key)."""
        rows = sorted((q, r.calls, r.called_by, r.tested_by, r.more_calls, r.more_called_by, r.more_tested_by,
                       r.uses, r.more_uses) for q, r in self.symbols.items())
        return repr((rows, self.exercises, self.more_exercises))


def _cut(keys: set[SymbolKey], limit: int) -> tuple[tuple[SymbolKey, ...], int]:
    ordered = sorted(keys)
    return tuple(ordered[:limit]), max(0, len(ordered) - limit)


@dataclass(frozen=True)
class XrefIndex:
    """The repository-wide lookups file_refs needs, built once per build."""

    symbols_of: Mapping[str, frozenset[str]]  # path -> qualnames defined there
    is_test: Mapping[str, bool]
    calls: Mapping[SymbolKey, list[SymbolKey]]
    callers: Mapping[SymbolKey, list[SymbolKey]]
    # constants and variables: a reference to one is a use, not a call (`paint(colorRed)` does not call
    # colorRed), so they are in no "Calls" or "Called by" list
    data: frozenset[SymbolKey] = frozenset()
    types: frozenset[SymbolKey] = frozenset()  # classes, structs, interfaces...: used, not called

    @classmethod
    def build(cls, all_facts: Mapping[str, FileFacts], calls: Mapping[SymbolKey, list[SymbolKey]],
              callers: Mapping[SymbolKey, list[SymbolKey]]) -> XrefIndex:
        return cls(symbols_of={p: frozenset(s.qualname for s in f.symbols) for p, f in all_facts.items()},
                   is_test={p: f.file.kind == "test" for p, f in all_facts.items()},
                   calls=calls, callers=callers,
                   data=frozenset((p, s.qualname) for p, f in all_facts.items() for s in f.symbols
                                  if s.kind in _DATA_KINDS),
                   types=frozenset((p, s.qualname) for p, f in all_facts.items() for s in f.symbols
                                   if s.kind in TYPE_KINDS))

    def known(self, key: SymbolKey) -> bool:
        names = self.symbols_of.get(key[0])
        return names is not None and (key[1] == "" or key[1] in names)

    def file_refs(self, facts: FileFacts, *, limit: int = LINK_LIMIT) -> FileRefs:
        """The cross-references of one file. Links point at known symbols or at a file's top level
        ("" qualname: the reference sits outside any symbol, e.g. a test module's body)."""
        path, is_test, known, data = facts.path, self.is_test, self.known, self.data
        out: dict[str, SymbolRefs] = {}
        for s in facts.symbols:
            me = (path, s.qualname)
            if me in data:
                continue
            outgoing = {k for k in self.calls.get(me, ()) if k != me and k[1] and known(k) and k not in data}
            incoming = {k for k in self.callers.get(me, ()) if k != me and known(k)}
            tests = {k for k in incoming if is_test.get(k[0], False) and k[0] != path}
            if not (outgoing or incoming):
                continue
            c, mc = _cut(outgoing - self.types, limit)
            u, mu = _cut(outgoing & self.types, limit)
            b, mb = _cut(incoming - tests, limit)
            t, mt = _cut(tests, limit)
            out[s.qualname] = SymbolRefs(c, b, t, mc, mb, mt, u, mu)
        exercised: set[SymbolKey] = set()
        if facts.file.kind == "test":
            for q in ["", *(s.qualname for s in facts.symbols)]:
                exercised |= {k for k in self.calls.get((path, q), ()) if k[0] != path and k[1] and known(k)
                              and not is_test.get(k[0], False)}
        e, more = _cut(exercised, limit * 4)
        return FileRefs(symbols=out, exercises=e, more_exercises=more)
