"""Plain values that flow between stages: what a file is, and what was extracted from it.

Every stage after scan consumes these and nothing else, so stages stay testable without a disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

FileKind = Literal["code", "doc", "test", "config"]
SymbolKind = Literal[
    "module", "class", "function", "method", "interface", "struct", "enum", "trait",
    "type", "constant", "variable", "field", "namespace", "macro", "impl",
]


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file scan accepted. `path` is POSIX, relative to the repository root."""

    path: str
    language: str | None
    size: int
    sha: str  # sha256 of the raw bytes: the key of every per-file cache
    kind: FileKind = "code"


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    qualname: str  # dotted within the file: "Flask.route"; unique per file after de-duplication
    kind: SymbolKind
    path: str
    start_line: int  # 1-based, inclusive
    end_line: int
    signature: str  # as written in the source, one line, no body
    docstring: str = ""
    parent: str | None = None  # qualname of the enclosing symbol
    public: bool = True
    docstring_source: Literal["code", "llm", ""] = "code"
    # the trait or interface a method implements, when the block that holds it names one (Rust's
    # `impl Display for Value`): two impls' `fmt` are two sections labelled by their trait
    implements: str = ""


@dataclass(frozen=True, slots=True)
class Import:
    path: str  # the importing file
    module: str  # as written: "..helpers", "./util", "github.com/x/y", "crate::a::b"
    names: tuple[str, ...] = ()  # imported names when the syntax lists them
    line: int = 0
    # (name or module, alias) for what is imported under another name: `from m import a as b`
    aliases: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Reference:
    path: str
    name: str  # the referenced identifier (last component for dotted access)
    line: int
    # "base": a class's base class as written in its definition (the inheritance call resolution follows);
    # "bind": `name` ("x", "self.x") is given a type: `receiver` is the annotation ("Cls") or the call
    # whose result it holds ("Cls()"), so `x.m()` can be resolved when Cls is a class
    kind: Literal["call", "name", "base", "bind"] = "call"
    scope: str | None = None  # qualname of the enclosing symbol, if any
    # what the name is accessed on: None for a bare name, a dotted name as written ("self", "os.path",
    # "this"), "super" for super()/super, the result of calling a dotted name ("Engine()"), "?" for any
    # other expression (a subscript, a literal, a chain of calls)
    receiver: str | None = None
    # where the language picks an overload by its arguments (Java): a call's arguments, each as the type
    # its syntax shows ("String" for a literal, `T` of `new T()` or `(T) x`) or "" when it shows none
    args: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str
    line: int


@dataclass(frozen=True, slots=True)
class Member:
    """A part of a type's shape that is no symbol of its own: a struct's or record's field, an enum's
    variant. Shown in a table under the type's section, as the language's own docs list them."""

    name: str
    kind: Literal["field", "variant"]
    parent: str  # qualname of the type that holds it
    line: int
    declaration: str  # as written, one line: `handler http.Handler`, `Ok(T)`
    docstring: str = ""


@dataclass(slots=True)
class FileFacts:
    """Everything extracted from one file. Documentation files carry title/headings instead of symbols."""

    file: SourceFile
    symbols: list[Symbol] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    docstring: str = ""  # module docstring or leading file comment
    title: str = ""  # documentation files: first heading
    headings: list[Heading] = field(default_factory=list)
    line_count: int = 0
    warnings: list[str] = field(default_factory=list)  # "path:line: message"
    members: list[Member] = field(default_factory=list)  # fields and variants of the file's types

    @property
    def path(self) -> str:
        return self.file.path


@dataclass(frozen=True, slots=True)
class PageRecord:
    """A rendered wiki page, as the index stores it. `id` is the docs-relative Markdown path."""

    id: str  # e.g. "files/src/flask/app.py.md"
    kind: Literal["file", "module", "overview"]
    title: str
    target_path: str  # the source file or directory the page documents ("" for the overview)
    summary: str
    markdown: str
    symbols: tuple[str, ...] = ()
    written_by: Literal["llm", "extracted"] = "extracted"
