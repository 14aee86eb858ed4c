"""generator/site/material/search_sections.py gives the sections Material's own search parser gives: on every
page of a
generated site, on the corner cases its quirks make, and on random tag soup."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from material.plugins.search.plugin import Parser

from generator.build import build
from generator.markup.html_tokens import tokens
from generator.site.material.search_sections import _sections, sections
from generator.site.publish import RENDER_CACHE_DIR
from generator.site.render_cache import CONTENT_DIR
from sourcebook.config import load_config


def _material(html: str) -> list[Any]:
    parser = Parser()
    parser.feed(html)
    parser.close()
    return parser.data  # type: ignore[no-any-return]


def _plain(found: list[Any]) -> list[Any]:
    return [(s.el.tag, dict(s.el.attrs), s.depth, s.id, list(s.title), list(s.text), s.is_excluded())
            for s in found]


def _outcome(read: Any, html: str) -> Any:
    try:
        return _plain(read(html))
    except ValueError as exc:  # Material's parser fails on some soups (a kept tag closed in another section)
        return repr(exc)


def _same(html: str) -> None:
    assert _outcome(_sections, html) == _outcome(_material, html), html


CASES = [
    "",
    "plain text, no tags &amp; an entity &lt;x&gt;",
    "<p>preface</p><h1 id=\"t\">Title<a class=\"headerlink\" href=\"#t\" title=\"Permanent link\">¶</a></h1>",
    "<h2 id=\"a\">A first h2</h2><p>text</p><h3 id=\"b\">B</h3><p>more</p>",
    "<h2>no id</h2><p>x</p><h2 id=\"y\">id</h2>",
    # source blocks: excluded, skipped in one step; their text never reaches the index
    '<h2 id="f">f</h2><p>Doc.</p><details class="note sb-source" data-search-exclude=""><summary>Source'
    '</summary><div class="highlight"><pre><span></span><code><span class="k">def</span> <span class="nf">f'
    "</span>():\n    <span class=\"k\">pass</span>\n</code></pre></div></details><p>after</p>",
    # a heading inside an excluded block still opens a section
    '<div data-search-exclude=""><h2 id="in">Inside</h2><p>hidden</p></div><p>shown</p>',
    # a nested element of the excluded one's tag name ends the exclusion early (Material tracks by name)
    '<div data-search-exclude=""><div>inner</div><p>leaks</p></div><p>after</p>',
    '<div data-search-exclude=""><span data-search-exclude="">a</span><span>b</span>c</div>d',
    '<table class="linenotable"><tr><td class="linenos"><div class="linenodiv"><pre>1\n2</pre></div></td>'
    '<td class="code"><pre><code>x = 1\ny = 2</code></pre></td></tr></table>',
    # end tags that do not close the innermost element are ignored; unclosed elements stay open
    "<p>one <em>two</p> three</em> four</p><p>five",
    '<details data-search-exclude=""><p>unclosed<div>x</div></details><p>after</p></details><p>z</p>',
    # kept tags: emptied ones are dropped, whitespace collapses outside <pre>
    "<p>  </p><ul>\n<li>a</li>\n<li> </li></ul><pre>  keep\n  this  </pre><p>a\nb</p>",
    "<p><code></code></p><p>x<sub>2</sub><sup> </sup></p>",
    # a heading nested in a block: leaving the block returns to the enclosing section
    '<div><h2 id="n">Nested</h2><p>in</p></div><p>out</p><h2 id="m">M</h2>',
    '<div class="admonition"><p class="admonition-title">Note</p><h3 id="q">Q</h3></div>tail',
    # void and self-closing tags
    "<p>a<br>b<br/>c<img src=\"x.png\" alt=\"x\">d<span/>e</p><hr><p>f</p>",
    # attribute forms: single quotes, bare names, entities, upper case
    "<H2 ID='up'>Upper</H2><P CLASS=\"x\" hidden>Para &amp;c &#x27;q&#39;</P>",
    '<h2 id="a&amp;b">amp</h2><a class="headerlink" href="#x">not in a heading</a>',
    # what HTMLParser reads differently: left to HTMLParser itself
    "<p>x</p><!-- a comment <h2 id=\"c\">no</h2> --><p>y</p>",
    "<p>a < b</p>",
    "<p>x</p><script>var s = '<h2 id=\"s\">';</script><p>y</p>",
    "<p id=unquoted>x</p>",
    "<!DOCTYPE html><p>x</p>",
    "<p>x</p><?php echo 1 ?>",
]


@pytest.mark.parametrize("html", CASES)
def test_corner_cases_match_materials_parser(html: str) -> None:
    _same(html)


_TAGS = ["p", "div", "span", "code", "pre", "li", "ul", "h1", "h2", "h3", "a", "details", "em", "br", "sub"]
_ATTRS = ["", ' id="i{n}"', ' data-search-exclude=""', ' class="linenodiv"', ' class="headerlink"',
          ' class="x" id="j{n}"']
_TEXTS = ["word", " ", "\n", "two words", "a &amp; b", "&lt;x&gt;", "  \n  "]


def _soup(rng: random.Random, size: int) -> str:
    out: list[str] = []
    stack: list[str] = []
    for n in range(size):
        roll = rng.random()
        if roll < 0.4:
            tag = rng.choice(_TAGS)
            out.append(f"<{tag}{rng.choice(_ATTRS).format(n=n)}>")
            if tag != "br":
                stack.append(tag)
        elif roll < 0.7 and stack:
            # mostly the innermost element, sometimes another (an end tag the parser ignores)
            tag = stack.pop() if rng.random() < 0.85 else rng.choice(_TAGS)
            out.append(f"</{tag}>")
        else:
            out.append(rng.choice(_TEXTS))
    return "".join(out)


def test_random_tag_soup_matches_materials_parser() -> None:
    rng = random.Random(20261130)
    for _ in range(3000):
        _same(_soup(rng, rng.randint(1, 40)))


@pytest.mark.slow
def test_every_page_of_a_generated_site_matches_materials_parser(tmp_path: Path) -> None:
    from generator.site.render_cache import RenderCache

    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "README.md").write_text("# Demo\n\nSee `pkg`.\n\n```python\nprint('x')\n```\n")
    (root / "pkg" / "core.py").write_text(
        '"""Core.\n\n.. note::\n   A note.\n"""\n\n\ndef run(x: int) -> int:\n    """Run it.\n\n    Args:\n'
        '        x: the input.\n\n    Returns:\n        x again.\n    """\n    return helper(x)\n\n\n'
        'def helper(y):\n    return y\n\n\nclass Thing:\n    """A thing."""\n\n    def go(self):\n'
        '        """Go."""\n        return run(1)\n')
    assert build(load_config(root), index=False).site_built
    cache = RenderCache(root / ".sourcebook" / RENDER_CACHE_DIR, None)
    pages = [cache.read_content(p.stem) for p in (cache.root / CONTENT_DIR).glob("*.z")]
    assert len(pages) >= 4  # overview, folder pages, file pages
    for page in pages:
        assert page is not None
        assert tokens(page["content"]) is not None  # the sanitizer's output never needs HTMLParser
        _same(page["content"])


def test_the_fallback_for_pages_materials_parser_rejects_keeps_headings_and_text() -> None:
    from generator.site.material.search_sections import sections, without_kept_tags

    html = '<ul><li><p>intro <code>x</code></p><h2 id="use">Use it</h2><pre>run()</pre></li></ul>'
    plain = without_kept_tags(html)
    assert "<li" not in plain
    assert "<p>" not in plain
    assert "<code>" not in plain
    found = sections(plain)
    assert [section.id for section in found if section.id] == ["use"]
    assert "run()" in " ".join("".join(section.text) for section in found)


def test_a_page_materials_parser_rejects_gets_sections_instead_of_failing_the_build() -> None:
    # A soup the random test found: Material's parser ends <ul> in a section that never saw it open.
    html = ('word<sub class="headerlink"></sub><details class="linenodiv"><em id="i4">\n<span id="i6">'
            '<em class="headerlink">\n&lt;x&gt;<ul class="x" id="j10"><a class="x" id="j11">\n'
            '<details id="i13"></details><p data-search-exclude=""></p><code class="linenodiv">a &amp; b'
            '<li id="i19">  \n  </li></code></a></ul></em><p id="i26">a &amp; btwo words</p></li><a>word'
            '<h2 id="next">Next</h2>after')
    with pytest.raises(ValueError, match="is not in list"):
        _material(html)
    found = sections(html)
    assert [section.id for section in found if section.id] == ["next"]
    text = " ".join("".join(section.text) for section in found)
    assert "two words" in text
    assert "after" in text
