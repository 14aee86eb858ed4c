"""How a type of a language other than Python is built, for its section's "Built by" line (Python's class
signature shows its `__init__`'s parameters instead: markdown.shown_signature).

TypeScript/JavaScript: the class's `constructor(...)`, shown as `new Widget(name: string)`. Java: its
constructors that are not private. Go: the same file's `New<Type>` functions (and `New...` functions
returning the type). Rust: the type's associated functions returning `Self` or the type without taking
`self` (`Client::new(...)`), `new` first. Pure: a symbol and its file's symbols in, (constructor, shown
text) out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence

from generator.analyze.facts import FileFacts, Symbol

MAX_CONSTRUCTORS = 3
_TYPE_KINDS = frozenset({"class", "struct", "enum", "type"})
_JAVA_MODIFIERS = re.compile(r"^(?:(?:@\w+(?:\([^)]*\))?|public|protected|static|final)\s+)*")
_PARAMETER_PROPERTY = re.compile(r"(?<=[(,])(\s*)(?:(?:public|private|protected|readonly|override)\s+)+")


def _word(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}\b", text) is not None


def _returns(signature: str) -> str:
    """What a function signature returns (after its parameters), '' when it says nothing."""
    depth, close = 0, -1
    for i, ch in enumerate(signature):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                close = i
                break
    return signature[close + 1:].strip().lstrip("-> ").strip() if close >= 0 else ""


def constructors(s: Symbol, symbols: Sequence[Symbol], language: str, limit: int = MAX_CONSTRUCTORS
                 ) -> list[tuple[Symbol, str]]:
    """The ways to build type `s`, given its file's `symbols` (for Go, also its package's builders in other
    files: package_builders): (the constructor's symbol, how it reads)."""
    if s.kind not in _TYPE_KINDS:
        return []
    members = [m for m in symbols if m.parent == s.qualname and m.kind in ("method", "function")
               and "(" in m.signature]
    hidden = [m.signature.lstrip().startswith("private") for m in members]
    out: list[tuple[Symbol, str]] = []
    if language in ("typescript", "tsx", "javascript"):
        for m, private in zip(members, hidden, strict=True):
            if m.name == "constructor" and not private:
                # a parameter property's modifier (`private name: string`) declares a field, not a call's part
                params = _PARAMETER_PROPERTY.sub(r"\1", m.signature[m.signature.index("("):])
                out.append((m, f"new {s.name}{params}"))
    elif language == "java":
        for m, private in zip(members, hidden, strict=True):
            if m.name == s.name and not private:
                out.append((m, _JAVA_MODIFIERS.sub("", m.signature.strip())))
    elif language == "go":
        for f in symbols:
            if f.parent is not None or f.kind != "function" or not f.name.startswith("New"):
                continue
            if f.name == "New" + s.name or _word(s.name, _returns(f.signature)):
                out.append((f, f.signature.removeprefix("func ").strip()))
        out.sort(key=lambda c: (c[0].name != "New" + s.name, c[0].path != s.path, c[0].path,
                                c[0].start_line))
    elif language == "rust":
        for m in members:
            params = m.signature[m.signature.find("("):]
            if re.match(r"\(\s*(?:&\s*(?:'\w+\s+)?(?:mut\s+)?)?(?:mut\s+)?self\b", params):
                continue  # a method, not a constructor
            returned = _returns(m.signature)
            if returned and (_word("Self", returned) or _word(s.name, returned)):
                out.append((m, f"{s.name}::{m.name}{params}"))
        out.sort(key=lambda c: (c[0].name != "new", c[0].start_line))
    return out[:limit]


def package_builders(files: Mapping[str, FileFacts]) -> dict[str, list[Symbol]]:
    """path -> the `New...` functions of the other files of its Go package (its folder) that build one of
    its types (chi's `NewRouter` in chi.go builds mux.go's `Mux`): what its page shows besides its own."""
    news: dict[str, list[Symbol]] = {}
    for p, f in files.items():
        if f.file.language == "go" and f.file.kind == "code":
            news.setdefault(posixpath.dirname(p), []).extend(
                s for s in f.symbols if s.parent is None and s.kind == "function"
                and s.name.startswith("New"))
    out: dict[str, list[Symbol]] = {}
    for p, f in files.items():
        if f.file.language != "go":
            continue
        others = [s for s in news.get(posixpath.dirname(p), ()) if s.path != p]
        if not others:
            continue
        found = {id(c): c for t in f.symbols if t.parent is None
                 for c, _text in constructors(t, others, "go", limit=len(others))}
        if found:
            out[p] = sorted(found.values(), key=lambda s: (s.path, s.start_line))
    return out
