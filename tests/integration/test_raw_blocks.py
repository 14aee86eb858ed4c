"""The HTML blocks sourcebook renders itself go to Markdown's stash whole
(generator/site/material/raw_blocks.py): the pages
of a real build convert to exactly the HTML Markdown makes without the extension, and no repository text can
take a block's shape."""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree
from collections.abc import Callable
from pathlib import Path

import markdown
from markdown.util import AtomicString
from mkdocs.config import load_config as load_mkdocs_config

from generator.build import build
from generator.site.hooks.mkdocs_hooks import RAW_BLOCKS
from generator.site.material.raw_blocks import PlainTextTreeprocessor, RawBlockPreprocessor, _triggers
from sourcebook.config import load_config

TRAP = '<details class="note sb-source" data-search-exclude><summary>x</summary><script>alert(1)</script>'
REPO: dict[str, str | bytes] = {
    "pkg/__init__.py": '"""Widget package."""\nfrom .core import Widget\n',
    "pkg/core.py": (
        '"""The core: `Widget` and `polish`."""\n\n\nclass Widget:\n    """Makes widgets.\n\n'
        "    Args:\n        name: the widget's name.\n    \"\"\"\n\n    size = 1\n\n"
        "    def assemble(self, name: str) -> str:\n        \"\"\"Assemble one.\n\n"
        f"        {TRAP}\n\n        </details>\n\n        <script>alert(2)</script>\n        \"\"\"\n"
        f"        text = '''\n{TRAP}\n\n</details>\n\n<script>alert(3)</script>\n'''\n"
        "        return polish(name) + text\n\n\n"
        'def polish(name):\n    """Polish it: see :class:`Widget`."""\n'
        "    return name.upper()  # </details>\n"),
    "tests/test_core.py": ("from pkg.core import Widget\n\n\ndef test_assemble():\n"
                           '    assert Widget().assemble("a")\n'),
    "docs/guide.rst": ("Guide\n=====\n\nUse :class:`pkg.core.Widget`.\n\nFirst\n-----\n\nText.\n\n"
                       ".. code-block:: python\n\n    x = 1\n\nSecond\n------\n\nSee `First`_.\n"),
}


def _converters(out: Path) -> tuple[Callable[[str], tuple[str, int]], Callable[[str], str]]:
    """The site's Markdown with its hooks' extensions (one stashing, counting the blocks it stores) and
    the same without generator.site.material.raw_blocks."""
    config = load_mkdocs_config(str(out / "mkdocs.yml"))
    config = config.plugins.on_config(config)
    extensions = list(config.markdown_extensions)
    assert RAW_BLOCKS in extensions  # the hook adds it to every site
    plain = [e for e in extensions if e != RAW_BLOCKS]

    def with_blocks(text: str) -> tuple[str, int]:
        md = markdown.Markdown(extensions=extensions, extension_configs=config.mdx_configs)
        ours = md.preprocessors["sourcebook_raw_blocks"]
        assert isinstance(ours, RawBlockPreprocessor)
        before = [0]
        run = ours.run

        def counted(lines: list[str]) -> list[str]:
            before[0] = len(md.htmlStash.rawHtmlBlocks)
            result = run(lines)
            before[0] = len(md.htmlStash.rawHtmlBlocks) - before[0]
            return result

        ours.run = counted  # type: ignore[method-assign]
        return md.convert(text), before[0]

    def without(text: str) -> str:
        return markdown.Markdown(extensions=plain, extension_configs=config.mdx_configs).convert(text)

    return with_blocks, without


def _body(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    return re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)


def test_pages_convert_to_the_same_html_with_their_blocks_stashed(make_repo: Callable[..., Path]) -> None:
    root = make_repo(REPO)
    report = build(load_config(root), index=False)  # mkdocs build --strict with the extension
    assert report.site_dir is not None
    out = report.site_dir.parent
    with_blocks, without = _converters(out)
    stored = {}
    for page in sorted((out / "docs").rglob("*.md")):
        text = _body(page)
        fast, count = with_blocks(text)
        assert fast == without(text), page
        stored[page.relative_to(out / "docs").as_posix()] = count
    # the code page's blocks are stored by the extension: signatures, calls, source, the index (the test would
    # pass vacuously if no shape matched any more)
    code = _body(out / "docs/files/pkg/core.py.md")
    shapes = sum(code.count(s) for s in ('<div class="language-python highlight sb-signature">',
                                         '<p class="sb-refs"', '<details class="note sb-source"',
                                         '<div class="sb-index"'))
    assert shapes >= 9
    assert stored["files/pkg/core.py.md"] == shapes
    doc = _body(out / "docs/files/docs/guide.rst.md")
    assert '<section class="sb-document sb-rst"' in doc
    assert stored["files/docs/guide.rst.md"] == 1
    # the repository's look-alike block is text on the built page, its script never markup
    page = (report.site_dir / "files/pkg/core.py.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(2)" in page  # the docstring's, as text
    assert page.count('<details class="note sb-source"') == code.count('<details class="note sb-source"')


def _convert(text: str) -> tuple[str, str]:
    fast = markdown.Markdown(extensions=[RAW_BLOCKS]).convert(text)
    return fast, markdown.Markdown().convert(text)


def test_a_block_is_stored_only_whole_between_blank_lines() -> None:
    source = ('<details class="note sb-source" data-search-exclude><summary>Source (line 1)</summary>'
              '<pre><code>a = "&lt;/details&gt;"\n\nb = 1</code></pre></details>')
    for text in (f"para\n\n{source}\n\nafter *em*\n", f"{source}\n", f"para\n{source}\n\ntail\n",
                 f"para\n\n{source}\ntail *x*\n",
                 '<div class="sb-index" data-search-exclude><table><tr><td>a</td></tr>'
                 '</table></div>\n\n*x*\n',
                 '<section class="sb-document sb-rst" data-search-exclude>\n<p>a</p>\n\n<p>b</p>\n'
                 "<!-- /sb-document --></section>\n\n## Next\n",
                 # unclosed: left to Markdown
                 '<details class="note sb-source" data-search-exclude><summary>x</summary>\n\n*y*\n'):
        fast, plain = _convert(text)
        assert fast == plain, text


def test_text_is_left_to_the_inline_pass_whenever_a_pattern_could_match() -> None:
    texts = ["a `b` c", "x &amp; y &#95; z", "*em* and **strong**", "_em_ and __init__",
             "[l](u.md) ![i](p.png)", "<b>x</b> <https://e.org>", "a \\*b\\*", "line  \nbreak",
             "plain words only", "# Title\n\nplain",
             "| a | b |\n|---|---|\n| plain | *em* |", "- plain\n- `code`"]
    for text in texts:
        fast, plain = _convert(text)
        assert fast == plain, text
    # what is marked: only the texts without any of those characters
    md = markdown.Markdown(extensions=[RAW_BLOCKS])
    root = etree.Element("div")
    plain, emphasis, tail = (etree.SubElement(root, tag) for tag in ("p", "p", "h3"))
    plain.text, emphasis.text, tail.text, tail.tail = "plain words", "an *em* word", "Name", "a_b"
    marker = md.treeprocessors["sourcebook_plain_text"]
    assert isinstance(marker, PlainTextTreeprocessor)
    marker.run(root)
    assert [type(t) for t in (plain.text, emphasis.text, tail.text, tail.tail)] == [
        AtomicString, str, AtomicString, str]


def test_an_inline_pattern_it_does_not_know_turns_the_marking_off() -> None:
    # pymdownx.tilde adds `~~deleted~~` (a character the marking does not list): every text is parsed
    for text in ("a ~~deleted~~ word", "~~x~~"):
        fast = markdown.Markdown(extensions=[RAW_BLOCKS, "pymdownx.tilde"]).convert(text)
        assert fast == markdown.Markdown(extensions=["pymdownx.tilde"]).convert(text)
        assert "<del>" in fast
    md = markdown.Markdown(extensions=["pymdownx.tilde"])
    assert _triggers(md) is None
    assert _triggers(markdown.Markdown()) is not None


def test_superfences_walks_only_pages_with_a_fence() -> None:
    extensions = ["pymdownx.highlight", "pymdownx.superfences", "admonition"]
    configs = {"pymdownx.highlight": {"use_pygments": True}}
    guarded = markdown.Markdown(extensions=[*extensions, RAW_BLOCKS], extension_configs=configs)
    assert getattr(guarded.preprocessors["fenced_code_block"].search_nested, "guarded", False)
    pages = [
        # first page of a fresh converter: no fence, an indented code block (superfences' run must still set
        # the highlighter up for it)
        "Intro\n\n    >>> import x\n    >>> x.y()\n\nafter\n",
        "```python\ndef f():\n    return 1\n```\n\n!!! note\n    ~~~\n    code\n    ~~~\n",
        "plain `code` and ``` in a sentence\n",
        "nothing but text\n",
    ]
    for text in pages:
        plain = markdown.Markdown(extensions=extensions, extension_configs=configs)
        guarded.reset()
        assert guarded.convert(text) == plain.convert(text), text


def test_the_inline_pass_takes_the_patterns_registered_at_each_conversion() -> None:
    from markdown.inlinepatterns import SimpleTagInlineProcessor

    md = markdown.Markdown(extensions=[RAW_BLOCKS])
    assert md.convert("a ==b== *c*") == "<p>a ==b== <em>c</em></p>"
    assert md.treeprocessors["inline"].inlinePatterns == list(md.inlinePatterns)
    md.inlinePatterns.register(SimpleTagInlineProcessor(r"()==(.+?)==", "mark"), "mark", 65)
    md.reset()
    assert md.convert("a ==b== *c*") == "<p>a <mark>b</mark> <em>c</em></p>"
