"""A page's weight (generator/site/page_budget.py): a bounded table of contents, content over the budget cut
at a
section with a note saying so, the theme's indentation squeezed out around the content but never in it; and,
through a real `sourcebook build` (mkdocs --strict), a generated file too big for one page ships cut, under
1 MB, with its note and a bounded TOC."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mkdocs.structure.toc import AnchorLink

from bench.build_bench import nav_element_end
from generator.build import build
from generator.site.page_budget import (
    CONTENT_BUDGET,
    TOC_CAP,
    anchor_ids,
    cap_toc,
    cut_content,
    filter_toc,
    squeeze_chrome,
)
from sourcebook.config import load_config


def _link(title: str, level: int, children: list[AnchorLink] = ()) -> AnchorLink:  # type: ignore[assignment]
    link = AnchorLink(title, title.lower(), level)
    link.children = list(children)
    return link


def _count(items: list[AnchorLink]) -> int:
    return sum(1 + _count(i.children) for i in items)


def test_a_small_toc_is_left_as_it_is() -> None:
    items = [_link("A", 2, [_link("A1", 3)]), _link("B", 2)]
    assert cap_toc(items, cap=10) == items


def test_a_big_toc_keeps_its_top_levels_and_fills_the_rest_in_order() -> None:
    items = [_link(f"S{i}", 2, [_link(f"S{i}-{k}", 3, [_link(f"S{i}-{k}-x", 4)]) for k in range(10)])
             for i in range(8)]
    capped = cap_toc(items, cap=20)
    assert [i.title for i in capped] == [f"S{i}" for i in range(8)]
    assert _count(capped) == 20
    assert [c.title for c in capped[0].children] == [f"S0-{k}" for k in range(10)]
    assert [c.title for c in capped[1].children] == ["S1-0", "… 9 more sections"]
    assert capped[1].children[-1].url == "#s1-1"
    assert all(not c.children for i in capped for c in i.children)
    assert all(not i.children for i in capped[2:])


def test_a_long_top_level_ends_with_a_link_to_the_first_section_left_out() -> None:
    items = [_link(f"S{i}", 2) for i in range(500)]
    capped = cap_toc(items, cap=TOC_CAP)
    assert _count(capped) == TOC_CAP
    assert capped[-1].title == f"… {500 - TOC_CAP + 1} more sections"
    assert capped[-1].url == f"#s{TOC_CAP - 1}"


def test_the_page_title_heading_stays_on_top() -> None:
    items = [_link("Title", 1, [_link(f"S{i}", 2) for i in range(100)])]
    capped = cap_toc(items, cap=10)
    assert [i.title for i in capped] == ["Title"]
    assert _count(capped[0].children) == 10


def test_a_toc_keeps_only_the_anchors_a_cut_page_holds() -> None:
    items = [_link("A", 2, [_link("A1", 3), _link("A2", 3)]), _link("B", 2)]
    kept = filter_toc(items, {"a", "a1"})
    assert [(i.title, [c.title for c in i.children]) for i in kept] == [("A", ["A1"])]


def _sections(n: int, body: int) -> str:
    return "\n".join(f'<h2 id="s{i}">S{i}</h2>\n<p>{"x" * body}</p>\n<pre><code>a\n    b</code></pre>'
                     for i in range(n))


def test_content_within_the_budget_is_not_cut() -> None:
    assert cut_content(_sections(3, 100), budget=10_000) is None


def test_content_over_the_budget_is_cut_at_a_heading_with_a_note() -> None:
    html = _sections(100, 1000)
    cut = cut_content(html, budget=20_000)
    assert cut is not None
    body, note = cut.html.rsplit("\n", 1)
    assert len(body.encode()) <= 20_000
    assert html.startswith(body)
    assert html[len(body):].lstrip().startswith("<h2")  # cut before a section, not inside one
    kept = len(re.findall("<h2", body))
    assert cut.dropped_sections == 100 - kept
    assert "cut short" in note
    assert f"{100 - kept} more sections are left out" in note
    assert anchor_ids(cut.html) == {f"s{i}" for i in range(kept)} | {"sb-cut"}


def test_links_to_sections_the_cut_left_out_lead_to_the_note() -> None:
    index = '<p><a href="#s0">S0</a> <a href="#s99">S99</a> <a href="other.html#s99">elsewhere</a></p>\n'
    cut = cut_content(index + _sections(100, 1000), budget=20_000)
    assert cut is not None
    assert 'href="#s0"' in cut.html  # still on the page
    assert 'href="#s99"' not in cut.html
    assert 'href="#sb-cut"' in cut.html
    assert 'href="other.html#s99"' in cut.html  # another page's sections are that page's
    assert 'id="sb-cut"' in cut.html


def test_squeezing_the_chrome_leaves_the_content_byte_for_byte() -> None:
    content = "<pre><code>a\n    indented\n\n  b</code></pre>"
    page = f"<html>\n    <body>\n\n      <div>\n        {content}\n      </div>\n  </body>\n</html>\n"
    squeezed = squeeze_chrome(page, content)
    assert content in squeezed
    assert squeezed == f"<html>\n<body>\n<div>\n{content}\n</div>\n</body>\n</html>\n"


@pytest.mark.slow
def test_a_generated_file_too_big_for_a_page_ships_cut_with_a_note(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "gen").mkdir(parents=True)
    (root / "README.md").write_text("# Demo\n\nGenerated code.\n")
    functions = [f'def generated_{i}(value, other=None):\n    """Return value plus {i}."""\n'
                 f"    total = value + {i}\n    if other:\n        total += other\n    return total\n"
                 for i in range(1500)]
    (root / "gen" / "table.py").write_text('"""A generated table."""\n\n\n' + "\n\n".join(functions))
    assert build(load_config(root), index=False).site_built
    site = root / ".sourcebook" / "site"
    page = (site / "files" / "gen" / "table.py.html").read_text(encoding="utf-8")
    assert len(page.encode()) < 1 << 20
    assert "This page is cut short" in page
    assert 'id="sym-generated-0"' in page
    assert 'id="sym-generated-1499"' not in page
    data = page.encode()
    start = data.index(b'<nav class="md-nav md-nav--secondary"')
    toc = data[start:nav_element_end(data, start)].decode()
    assert 0 < toc.count("<li") <= TOC_CAP
    assert re.search(r"… \d+ more sections</span>", toc)
    assert len(page.encode()) > CONTENT_BUDGET // 2


def test_chrome_whitespace_folds_as_the_regex_would() -> None:
    import re

    from generator.site.page_budget import _squeezed

    spec = re.compile(r"[ \t\r]*\n\s*")
    for text in ["", "a", "a \t\r\n  \n\t b", "a\x0b \n b", "\n\n", "x \u00a0\n\u00a0y\n", "end \t",
                 "<div>\n    <span>\r\n      t\n    </span>\n  \n</div>\n"]:
        assert _squeezed(text) == spec.sub("\n", text), text
