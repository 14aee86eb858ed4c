"""Links to symbols land on a section that exists, never on the top of a page that does not show them."""

from __future__ import annotations

from generator.analyze.facts import FileFacts, SourceFile, Symbol
from generator.pages.anchors import SymbolIndex


def _facts() -> FileFacts:
    return FileFacts(file=SourceFile("pkg/walk.go", "go", 10, "abc"),
                     symbols=[Symbol("Walk", "Walk", "function", "pkg/walk.go", 1, 5, "func Walk()"),
                              Symbol("push", "push", "function", "pkg/walk.go", 6, 9, "func push()",
                                     public=False),
                              Symbol("limit", "limit", "constant", "pkg/walk.go", 10, 10, "limit = 3",
                                     public=False)])


def test_a_symbol_without_a_section_gets_no_link() -> None:
    index = SymbolIndex.build([_facts()], {"pkg/walk.go": "files/pkg/walk.go.md"})
    assert index.href("files/other.md", "pkg/walk.go", "Walk") == "pkg/walk.go.md#sym-walk"
    # an unexported function has its section (Go's private code is read too); an unexported constant has
    # none: a link to the page's top would show the reader nothing of it
    assert index.href("files/other.md", "pkg/walk.go", "push") == "pkg/walk.go.md#sym-push"
    assert index.href("files/other.md", "pkg/walk.go", "limit") is None
    assert index.href("files/other.md", "pkg/walk.go", "missing") is None
    # the file itself is still linked
    assert index.href("files/other.md", "pkg/walk.go") == "pkg/walk.go.md"
