"""generator/markup/html_tokens.py: the anchor ids it finds in raw HTML are MkDocs' own scan's (html.parser
through
mkdocs.structure.pages._HTMLHandler), and it gives up wherever html.parser could read the text otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
from mkdocs.structure.pages import _HTMLHandler

from generator.build import build
from generator.markup.html_tokens import anchor_ids, tokens
from sourcebook.config import load_config


def _mkdocs(text: str) -> set[str | None]:
    handler = _HTMLHandler()
    handler.feed(text)
    handler.close()
    return handler.present_anchor_ids  # type: ignore[return-value]


CASES = [
    "# Title\n\nPlain *Markdown*, no HTML.\n",
    '<div id="a"><p id=\'b\' class="x">t</p><a name="c" href="#a">l</a>'
    '<span name="not-an-anchor">s</span></div>',
    '<A NAME="Upper" ID="up">x</A><h2 ID="h&amp;2">h</h2><a id>bare</a><a name="">empty</a>',
    '<details class="note sb-source" data-search-exclude><summary>Source</summary><pre><code><span id="L1">'
    "1</span>\n</code></pre></details>\n\nText with `code` and an entity &lt;x&gt;.\n",
    '<svg><path id="p1" d="M0 0"/><ellipse id="e1"/></svg><br/><img src="x.png" alt="x">',
]


@pytest.mark.parametrize("text", CASES)
def test_anchor_ids_are_mkdocs_own(text: str) -> None:
    assert anchor_ids(text) == _mkdocs(text)


@pytest.mark.parametrize("text", [
    '<p>x</p><!-- <a id="in-comment"> -->', "a < b and <b id=\"x\">", "`List<int` in a code span",
    "<script>var a = '<a id=\"s\">';</script>", "<textarea><a id=\"t\"></textarea>", '<p id=unquoted>',
    "<!DOCTYPE html>", "<?xml version='1.0'?>", "<p>x</>"])
def test_what_html_parser_must_read_is_left_to_it(text: str) -> None:
    assert tokens(text) is None
    assert anchor_ids(text) is None


@pytest.mark.slow
def test_every_generated_page_gives_mkdocs_own_ids(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "README.md").write_text('# Demo\n\n<a id="top"></a>See `pkg` and <b>bold</b>.\n')
    (root / "pkg" / "core.py").write_text(
        '"""Core: uses a < b in prose."""\n\n\ndef run(x: "list[int]") -> int:\n    """Run <it>."""\n'
        "    return x\n\n\nclass Thing:\n    def go(self):\n        return run([1])\n")
    assert build(load_config(root), index=False, site=False).pages_total
    pages = list((root / ".sourcebook" / "docs").rglob("*.md"))
    assert len(pages) > 3
    for page in pages:
        text = page.read_text(encoding="utf-8")
        found = anchor_ids(text)
        if found is not None:
            assert found == _mkdocs(text), page
