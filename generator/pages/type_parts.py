"""One type declared in several files: C# `partial` types and Kotlin `expect`/`actual` declarations.

Each file page shows the symbols its file declares, so a C# partial class written over five files read as
five classes (four of them sections with no doc and no members of note), and a Kotlin `expect class` with
its `actual` classes for jvm, js and native as four types. `split_types(facts)` finds each such type once,
picks the part whose section is the type's main one (C#: the part carrying the doc comment, else the first
by path; Kotlin: the `expect` declaration) and lists what every other part declares, so the main section
can show the whole type and the other parts can say which type they belong to. Pure: facts in, values out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from generator.analyze.facts import FileFacts, Symbol
from generator.pages.anchors import has_section, parameter_types, shown_qualname

PartKind = Literal["partial", "expect"]

# the keywords that declare a type, after which the modifiers end (`public static partial class X`)
_CSHARP_TYPE = re.compile(r"\b(?:class|struct|interface|record)\b")
_PARTIAL = re.compile(r"\bpartial\b")
# Kotlin: the modifiers before the declaring keyword (`internal actual fun`, `public expect class`)
_KOTLIN_DECL = re.compile(r"\b(?:class|interface|object|fun|val|var|typealias)\b")
_EXPECT_ACTUAL = re.compile(r"\b(expect|actual)\b")
# a Kotlin multiplatform source set: `src/commonMain/kotlin/…`, `src/jvmMain/kotlin/…`, `src/iosArm64Main/…`
_SOURCE_SET = re.compile(r"(?:^|/)src/(\w+?Main)/(?:kotlin|java)/")


@dataclass(frozen=True)
class Part:
    """One declaration of a split type: where it is, and (Kotlin) the source set an `actual` is for."""

    path: str
    qualname: str
    platform: str = ""  # `jvmMain` for an actual in src/jvmMain/kotlin/…; "" for C# parts and the expect


@dataclass(frozen=True)
class SplitType:
    """A type declared in several files: its main part, the others, and the members each other part
    declares (shown, each linked to its own section, in the main section)."""

    name: str  # the qualname a reader sees, e.g. `Serilog.Capturing.PropertyValueConverter`
    kind: PartKind
    main: Part
    others: tuple[Part, ...]
    members: tuple[tuple[Part, Symbol], ...]  # the other parts' members that have a section

    def is_main(self, path: str, qualname: str) -> bool:
        return (self.main.path, self.main.qualname) == (path, qualname)

    def part(self, path: str, qualname: str) -> Part | None:
        for p in (self.main, *self.others):
            if (p.path, p.qualname) == (path, qualname):
                return p
        return None


def _modifiers(s: Symbol, keyword: re.Pattern[str]) -> str:
    """The signature's text before the keyword that declares `s` (its modifiers), or "" without one."""
    m = keyword.search(s.signature)
    return s.signature[:m.start()] if m else ""


def part_kind(s: Symbol, language: str | None) -> Literal["partial", "expect", "actual", ""]:
    """Whether `s` is part of a type declared in several files, by its modifiers as written."""
    if language == "csharp" and s.kind in ("class", "struct", "interface"):
        return "partial" if _PARTIAL.search(_modifiers(s, _CSHARP_TYPE)) else ""
    if language == "kotlin" and s.parent is None:
        m = _EXPECT_ACTUAL.search(_modifiers(s, _KOTLIN_DECL))
        return "expect" if m and m.group(1) == "expect" else "actual" if m else ""
    return ""


def source_set(path: str) -> tuple[str, str]:
    """(the path with its source set folded away, the source set): the common key of a Kotlin file's
    declarations across source sets, `lib/src/jvmMain/kotlin/a/B.kt` -> ("lib/src/*/a", "jvmMain")."""
    m = _SOURCE_SET.search(path)
    if not m:
        return posixpath.dirname(path), ""
    return path[:m.start(1)] + "*/" + posixpath.dirname(path[m.end():]), m.group(1)


def split_types(facts: Iterable[FileFacts]) -> list[SplitType]:
    """Every type declared in more than one file, in the order of its main part's path and qualname."""
    groups: dict[tuple[str, ...], list[tuple[str, Symbol, FileFacts]]] = {}
    for f in facts:
        if f.file.kind != "code" or f.file.language not in ("csharp", "kotlin"):
            continue
        for s in f.symbols:
            part = part_kind(s, f.file.language)
            if not part:
                continue
            # two parts in one file are `X` and `X~2` (parse.py keeps qualnames unique per file): one type
            name = shown_qualname(s.qualname)
            if part == "partial":
                key: tuple[str, ...] = ("csharp", name)
            else:  # Kotlin: same package folder under each source set, same name (a function: same types)
                params = tuple(parameter_types(s.signature, s.name)) if s.kind == "function" else ()
                key = ("kotlin", source_set(f.path)[0], name, *params)
            groups.setdefault(key, []).append((part, s, f))
    out = []
    for key, found in groups.items():
        paths = {f.path for _, _, f in found}
        if len(paths) < 2:
            continue
        found.sort(key=lambda x: (x[2].path, x[1].start_line))
        kind: PartKind = "partial"
        if key[0] == "csharp":
            documented = [x for x in found if x[1].docstring]
            main = (documented or found)[0]
        else:
            expects = [x for x in found if x[0] == "expect"]
            if not expects:  # actuals of an expect this build did not read: nothing to merge them into
                continue
            main, kind = expects[0], "expect"
        others = [x for x in found if x is not main]
        parts = {id(x): Part(x[2].path, x[1].qualname, source_set(x[2].path)[1] if x[0] == "actual" else "")
                 for x in found}
        members = tuple((parts[id(x)], c) for x in others for c in _members(x[2], x[1].qualname))
        out.append(SplitType(shown_qualname(main[1].qualname), kind, parts[id(main)],
                             tuple(parts[id(x)] for x in others), members))
    out.sort(key=lambda t: (t.main.path, t.main.qualname))
    return out


def _members(f: FileFacts, qualname: str) -> list[Symbol]:
    return [s for s in f.symbols if s.parent == qualname and has_section(s, f.file.language)]


def parts_by_path(types: Iterable[SplitType]) -> dict[str, dict[str, SplitType]]:
    """path -> {qualname of a part declared in that file: its split type}: what one file page reads."""
    out: dict[str, dict[str, SplitType]] = {}
    for t in types:
        for p in (t.main, *t.others):
            out.setdefault(p.path, {})[p.qualname] = t
    return out


def secondary_parts(types: Iterable[SplitType]) -> set[tuple[str, str]]:
    """(path, qualname) of every part that is not its type's main one: what lists of types (the public
    API, the most-used abstractions, the home page) leave out so they name each type once."""
    return {(p.path, p.qualname) for t in types for p in t.others}


def parts_key(parts: Mapping[str, SplitType]) -> str:
    """The rendering key of one page's split types (the other files' parts and members change it)."""
    return repr(sorted((q, t.main, t.others, [(p, s.qualname, s.signature) for p, s in t.members])
                       for q, t in parts.items()))
