"""A document's GitHub line links (`mux.go#L6`) land on the section of the symbol holding that line, through
a real build; when the code moves, the next build follows it (the link's target is part of the page's key)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.build import build
from generator.pages.file_stage import line_link_key
from sourcebook.config import load_config

pytestmark = pytest.mark.slow

MUX = ("package chi\n\n// Mux is a router.\ntype Mux struct{}\n\n"  # Mux: lines 3-4
       "// NewMux makes a Mux.\nfunc NewMux() *Mux {\n\treturn &Mux{}\n}\n\n"  # NewMux: lines 6-9
       "// Use adds middleware.\nfunc (m *Mux) Use() {}\n")  # Mux.Use: lines 11-12
ROUTES = ("# Routes\n\n- [NewMux](/mux.go#L7) builds it\n- [Its comment](/mux.go#L6) says so\n"
          "- [Use](../mux.go#L12-L12) adds middleware\n"
          "- [Nothing](/mux.go#L2) holds no symbol\n- [Gone](/nope.go#L3) is no file\n")


def _hrefs(html: str, label: str) -> list[str]:
    return re.findall(rf'<a href="([^"]*)"[^>]*>{label}</a>', html)


def test_line_links_land_on_the_symbol_holding_the_line_and_follow_its_moves(
        make_repo: Callable[..., Path]) -> None:
    root = make_repo({"go.mod": "module example.com/chi\n\ngo 1.22\n", "mux.go": MUX,
                      "docs/routes.md": ROUTES})
    config = load_config(root)
    site = build(config, index=False).site_dir
    assert site is not None
    html = (site / "files/docs/routes.md.html").read_text(encoding="utf-8")
    [new_mux] = _hrefs(html, "NewMux")
    [use] = _hrefs(html, "Use")
    assert new_mux.startswith("../mux.go.html#"), new_mux
    assert use.startswith("../mux.go.html#"), use
    target = (site / "files/mux.go.html").read_text(encoding="utf-8")
    for href in (new_mux, use):
        assert f'id="{href.split("#", 1)[1]}"' in target, href  # the section exists on the file's page
    assert new_mux != use
    assert _hrefs(html, "Its comment") == [new_mux]  # a Go doc comment belongs to the symbol below it
    assert _hrefs(html, "Nothing") == ["../mux.go.html"]  # no symbol there: the file's page
    assert _hrefs(html, "Gone") == []  # not a file of the repository: no link

    # NewMux moves down two lines and a new function takes line 7: the unchanged document follows
    (root / "mux.go").write_text(MUX.replace("// NewMux", "// Reset clears.\nfunc Reset() {}\n\n// NewMux"))
    site = build(load_config(root), index=False).site_dir
    assert site is not None
    moved = (site / "files/docs/routes.md.html").read_text(encoding="utf-8")
    [reset] = _hrefs(moved, "NewMux")
    assert reset != new_mux
    assert reset.startswith("../mux.go.html#"), reset


def test_line_link_keys_read_github_forms_only() -> None:
    assert line_link_key("docs/routes.md", "/mux.go#L7") == "mux.go#L7"
    assert line_link_key("docs/routes.md", "../pkg/a.py#L3-L9") == "pkg/a.py#L3"
    assert line_link_key("docs/routes.md", "a.py#L3-9") == "docs/a.py#L3"
    for url in ("https://github.com/x/y/blob/main/a.py#L3", "a.py#section", "#L3", "a.py#L", "//h/a.py#L3"):
        assert line_link_key("docs/routes.md", url) is None, url
