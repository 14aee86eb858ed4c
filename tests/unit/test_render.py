"""Rendering: repository text never becomes HTML, tables survive `|` and backticks, links resolve."""

from __future__ import annotations

import html
import re

import pytest

from generator.analyze.facts import FileFacts, SourceFile, Symbol
from generator.pages.diagrams import NATURAL_SIZE
from generator.pages.render_markdown import (
    code_block,
    inline_text,
    mermaid_label,
    module_diagram,
    relative_link,
    render_file_page,
    render_mkdocs_yml,
    render_module_page,
    render_overview_page,
    rich_cell,
    sanitize_markdown,
    signature_block,
    source_location,
    table_cell,
)
from generator.pages.writer import (
    ExtractiveWriter,
    FileContext,
    FileDraft,
    ModuleContext,
    OverviewContext,
    PageLink,
    SymbolNote,
)
from generator.site.nav import build_nav

EVIL = "Does <script>alert('x')</script> things | with `ticks` and *stars*\nand [a link](x.md)."


def _symbol(qualname: str, doc: str = "", kind: str = "function", parent: str | None = None,
            signature: str = "") -> Symbol:
    return Symbol(qualname.rsplit(".", 1)[-1], qualname, kind, "pkg/app.py", 3, 9,  # type: ignore[arg-type]
                  signature or f"def {qualname}(a: int | None = `x`)", doc, parent)


def _file_ctx() -> FileContext:
    facts = FileFacts(file=SourceFile("pkg/app.py", "python", 10, "abc"),
                      symbols=[_symbol("Evil", EVIL, "class", signature="class Evil(Base)"),
                               _symbol("Evil.run", "Run.\n\nMore <b>bold</b>.", "method", "Evil"),
                               _symbol("Evil.__init__", "", "method", "Evil"),
                               _symbol("helper", "Help."),
                               _symbol("helper.inner", "Nested.", "function", "helper")],
                      docstring="Module <img src=x onerror=alert(1)> doc.", line_count=40)
    return FileContext(facts=facts, page_id="files/pkg/app.py.md", module="pkg",
                       depends_on=(PageLink("pkg/util.py", "files/pkg/util.py.md", "util.py"),),
                       used_by=(PageLink("main.py", "files/main.py.md", "main.py"),),
                       symbol_order=("helper", "Evil", "Evil.run"))


def _text(markdown: str) -> str:
    """The Markdown with HTML tags removed and entities decoded: what a reader sees of our HTML blocks."""
    return html.unescape(re.sub(r"<[^>]+>", "", markdown))


def _html_tags(markdown: str) -> set[str]:
    """Raw HTML tags in the Markdown outside code blocks (the only ones the browser would see as tags)."""
    outside = re.sub(r"```.*?```", "", markdown, flags=re.S)
    return {m.lower() for m in re.findall(r"<\s*([a-zA-Z]+)", outside)}


def test_file_page_escapes_docstrings_and_keeps_tables_intact() -> None:
    ctx = _file_ctx()
    md = render_file_page(ctx, ExtractiveWriter().file_page(ctx), writer_id="extractive/1",
                          module_page="modules/pkg/index.md")
    # only the elements the renderer writes (the symbol index is an HTML table it builds itself)
    assert _html_tags(md) <= {"code", "pre", "div", "span", "table", "thead", "tbody", "tr", "th", "td", "a"}
    index = re.search(r'<div class="sb-index" data-search-exclude>.*?</div>', md)
    assert index is not None
    rows = re.findall(r"<tr><td[^>]*>(.*?)</tr>", index.group(0))
    assert len(rows) == 4
    assert "<script>" not in index.group(0)
    assert "&lt;script&gt;" in index.group(0)
    # the full docstring, rendered: its HTML shown as text, its Markdown kept where it is safe
    assert ("Does &#60;script&#62;alert('x')&#60;/script&#62; things &#124; with `ticks` and *stars* "
            "and a link.") in md
    assert "[a link](x.md)" not in md
    # most important first, signature shown, methods nested under their class
    # the index in source order, members by their short name after their class
    assert md.index('href="#sym-evil"') < md.index('href="#sym-evil-run"') < md.index('href="#sym-helper"')
    assert 'title="Evil.run">.run</a>' in md
    assert '### Evil { #sym-evil data-kind="class" }' in md
    assert '#### Evil.run { #sym-evil-run data-kind="method" }' in md
    # no `_` runs inside { #id }
    assert '#### Evil.&#95;&#95;init&#95;&#95; { #sym-evil-init data-kind="method" }' in md
    assert 'href="#sym-helper-inner"' not in md  # a function inside a function is not in the file's index
    assert '#### helper.inner { #sym-helper-inner data-kind="function" }' in md  # ... but has its section
    assert '<div class="language-python highlight sb-signature">' in md
    # highlighted by Pygments, same text; the class as its __init__ is called, its bases beside its kind
    assert "class Evil(a: int | None = `x`)" in _text(md)
    assert "*class* · bases: `Base` ·" in md
    assert "[pkg/util.py](util.py.md)" in md
    assert "[main.py](../main.py.md)" in md
    assert "extracted from the code" in md
    assert "`pkg/app.py`, lines 3-9" in md


def test_source_links_use_repo_url_when_set() -> None:
    assert source_location("a b/x.py", 3, 9, "https://github.com/o/r/blob/main/") == (
        "[a b/x.py:3](https://github.com/o/r/blob/main/a%20b/x.py#L3-L9)")
    assert source_location("x.py", 4, 4, "") == "`x.py`, line 4"


def test_llm_prose_is_sanitized_and_marked() -> None:
    ctx = _file_ctx()
    draft = FileDraft(summary="It <script>bad()</script> works. See [there](../../etc/passwd).",
                      how_it_works="Uses <iframe src=x></iframe> `<b>code</b>`.",
                      key_symbols=[SymbolNote(qualname="helper", explanation="Helps."),
                                   SymbolNote(qualname="Invented", explanation="Not real.")],
                      caveats=["Careful | here"], written_by="llm")
    md = render_file_page(ctx, draft, writer_id="llm/gemma/v1", module_page="modules/pkg/index.md")
    assert "script" not in md.split("## Symbols")[0]
    assert "iframe" not in md
    assert "`<b>code</b>`" in md  # code spans are kept verbatim (Markdown escapes them)
    assert "](../../etc/passwd)" not in md
    assert "written by an LLM (gemma)" in md
    assert "[helper](#sym-helper): Helps." in md
    assert "Invented" not in md


def test_one_line_llm_prose_cannot_carry_a_fence_into_a_list_item() -> None:
    import markdown

    fenced = "~~~\n<img src=x onerror=alert(1)>\n~~~"
    draft = FileDraft(summary="S.", key_symbols=[SymbolNote(qualname="helper", explanation=fenced)],
                      caveats=[fenced], written_by="llm")
    md = render_file_page(_file_ctx(), draft, writer_id="llm/gemma/v1", module_page="modules/pkg/index.md")
    page = markdown.markdown(md, extensions=["attr_list", "pymdownx.superfences"])
    assert not re.search(r"<img\b", page), page


def test_inline_and_cell_escaping() -> None:
    assert inline_text("<b>|`x`|</b>") == "&lt;b&gt;&#124;&#96;x&#96;&#124;&lt;/b&gt;"
    assert "\n" not in table_cell("a\nb")
    assert rich_cell("Defines `a|b` <i>") == "Defines <code>a&#124;b</code> &lt;i&gt;"
    block = code_block("```\nnested\n```")
    assert block.startswith("````text\n")
    assert block.endswith("\n````")


def test_readme_sanitizing_rewrites_links_and_strips_html() -> None:
    readme = ("# Title <img src='logo.png'>\n\n<p align=center>Hi <b>there</b></p>\n\n"
              "[app](src/app.py) [gone](nowhere.md) [web](https://x.org) [anchor](#top) ![logo](logo.png)\n"
              "[js](javascript:alert(1))\n\n<!-- hidden -->\n<script>\nalert(1)\n</script>\n\n"
              "```html\n<div>kept</div>\n```\n\n[ref]: docs/guide.md\n\n`<kbd>` ok\n")
    out = sanitize_markdown(readme, lambda url: "files/src/app.py.md" if url == "src/app.py" else None,
                            demote=2)
    assert out.startswith("### Title")
    assert "Hi there" in out
    assert "[app](files/src/app.py.md)" in out
    assert "gone" in out
    assert "nowhere.md" not in out
    assert "[web](https://x.org)" in out
    assert "[anchor](#top)" in out
    assert "logo.png" not in out
    assert "javascript:" not in out
    assert "alert" not in out
    assert "hidden" not in out
    assert "```html\n<div>kept</div>\n```" in out
    assert "[ref]: #" in out
    assert "`<kbd>` ok" in out


# Backtick runs that Markdown does not read as one code span: across lines (a block-level tag on the next
# line starts an HTML block first), across a blank line, or opened by an escaped backtick.
_NOT_CODE_SPANS = [
    "`x\n<script>alert(1)</script>\ny`",
    "`\n\n<img src=x onerror=alert(1)>\n\n`",
    "a `b\n\n<script>alert(1)</script>\n\nc` d",
    "`x\n<div onclick=\"alert(1)\">\n`",
    "> `a\n> \n> <img src=x onerror=alert(1)>`",
    "\\`<script>alert(1)</script>`",
    "x \\`<img src=x onerror=alert(1)>` y",
]


# Lines that look like a fence to a lenient eye but that pymdownx.superfences does not open a block with
# (indented at top level, tab-indented, an info string it rejects): what follows must not be kept verbatim.
_NOT_FENCES = [
    "\t```\n<img src=x onerror=alert(1)>\n```",
    "   ```\n\n<img src=x onerror=alert(1)>\n\n   ```",
    "para\n\n  ```\n\n<img src=x onerror=alert(1)>\n",
    "1. a\n\n   ```\n\n<img src=x onerror=alert(1)>\n\n   ```\n",
    "```a`b\n\n<img src=x onerror=alert(1)>\n\n```",
    "~~~a~b\n\n<img src=x onerror=alert(1)>\n\n~~~",
    "``` `\n\n<img src=x onerror=alert(1)>\n",
]


@pytest.mark.parametrize("text", _NOT_CODE_SPANS + _NOT_FENCES)
def test_markup_markdown_does_not_treat_as_code_never_shields_html(text: str) -> None:
    import markdown

    page = markdown.markdown(sanitize_markdown(text), extensions=["toc", "tables", "attr_list", "admonition",
                                                                  "pymdownx.superfences"])
    assert not re.search(r"<(script|img)\b|<\w+[^>]*\son\w+=", page), page


_UNCHECKABLE_LINKS = [
    "[x](jav\nascript:alert(1))", "![x](jav\nascript:alert(1))", "[x](java\nscript:alert(1) \"t\")",
    "[x]\x02javascript:alert(1))", "[a](https://ok.example) [x](jav\nascript:alert(1))",
    "> [a]: javascript:alert(1)\n\n> [x][a]", "- [a]: javascript:alert(1)\n\n[x][a]",
    "[x][a]\n\n* item\n\n    [a]: javascript:alert(1)", "[]: javascript:alert(1)\n\n[x][]",
    "[x][a]\n\n>[a]:javascript:alert(1)", "[x][a]\n\n[a]\x03javascript:alert(1)",
    "[x][a]\n\n[ok]: https://ok.example\n[a]: javascript:alert(1)",
]


@pytest.mark.parametrize("text", _UNCHECKABLE_LINKS)
def test_links_markdown_reads_but_the_link_check_cannot_never_reach_the_page(text: str) -> None:
    import markdown

    page = markdown.markdown(sanitize_markdown(text), extensions=["pymdownx.superfences", "admonition"])
    # browsers drop tabs and newlines inside a URL, so `jav\nascript:` is `javascript:`
    targets = [re.sub(r"\s", "", t) for t in re.findall(r'(?:href|src)="([^"]*)"', page)]
    assert not [t for t in targets if "script:" in t.lower()], page


def test_badge_links_and_resolved_links_survive_the_link_check() -> None:
    text = "[![build](https://img.example/b.svg)](https://ci.example) see [app](src/app.py) and a ](b)."
    out = sanitize_markdown(text, lambda url: "files/app.md" if url == "src/app.py" else None)
    assert out == ("[![build](https://img.example/b.svg)](https://ci.example) see [app](files/app.md) "
                   "and a &#93;(b).")
    refs = "> [docs]: https://docs.example\n\n[app]: src/app.py\n[web]: https://web.example\n\nnote [x]: y"
    assert sanitize_markdown(refs, lambda url: "files/app.md" if url == "src/app.py" else None) == (
        "> [docs]: https://docs.example\n\n[app]: files/app.md\n[web]: https://web.example\n\n"
        "note [x&#93;: y")


def test_nul_bytes_in_text_cannot_forge_a_code_span_placeholder() -> None:
    assert sanitize_markdown("a \x005\x00 b") == "a 5 b"
    assert sanitize_markdown("`<b>` \x000\x00 <i>x</i>") == "`<b>` 0 x"


def test_plain_fences_keep_their_text_verbatim() -> None:
    for opening in ("```", "```python", "~~~html", "````.js"):
        text = f"{opening}\n<div>kept</div>\n{opening[0] * 3}"
        assert sanitize_markdown(text).startswith(f"{opening}\n<div>kept</div>\n"), opening


def test_single_line_code_spans_keep_their_html_text() -> None:
    assert sanitize_markdown("use `<kbd>` and `a<b>c` here") == "use `<kbd>` and `a<b>c` here"


def test_unclosed_fence_is_closed() -> None:
    assert sanitize_markdown("```python\nx = 1").endswith("\n```")


def test_mermaid_diagram_ids_are_sanitized_and_labels_quoted() -> None:
    ctx = ModuleContext(path="we ird", page_id="modules/we_ird/index.md", title="we ird/",
                        files=(PageLink('we ird/a"b<c>.py', "f1", 'a"b<c>.py'),
                               PageLink("we ird/#x.py", "f2", "#x.py")),
                        submodules=(PageLink("we ird/sub", "m1", "sub/"),),
                        internal_edges=(('we ird/a"b<c>.py', "we ird/#x.py"), ("we ird/#x.py", "we ird/sub")),
                        external_edges=(("we ird/#x.py", "other/pkg"),))
    diagram = str(module_diagram(ctx))
    assert diagram.startswith(NATURAL_SIZE + "\ngraph LR\n")
    node_lines = [line.strip() for line in diagram.splitlines()[1:] if "[" in line]
    assert all(re.fullmatch(r'n\d+\["[^"<>\n]*"\]', line) for line in node_lines), node_lines
    assert "a#quot;b#lt;c#gt;.py" in diagram
    assert mermaid_label("#x") == '"#35;x"'
    assert re.search(r"n\d+ --> n\d+", diagram)
    md = render_module_page(ctx, ExtractiveWriter().module_page(ctx), writer_id="extractive/1")
    assert "```mermaid\n" + NATURAL_SIZE + "\ngraph LR" in md


def test_module_page_without_edges_has_no_diagram() -> None:
    ctx = ModuleContext(path="", page_id="modules/index.md", title="(root)")
    assert module_diagram(ctx) is None
    md = render_module_page(ctx, ExtractiveWriter().module_page(ctx), writer_id="extractive/1")
    assert "mermaid" not in md
    assert "[Overview](../index.md)" in md


def test_overview_page_contains_sanitized_readme() -> None:
    readme = "# Demo\n\n<script>x()</script>Demo is great.\n\n## Usage\n\n" + "Call it.\n\n" * 100
    ctx = OverviewContext(repo_name="demo <x>", readme=readme,
                          readme_path="README.md", languages=(("python", 2),), file_count=2, symbol_count=3)
    md = render_overview_page(ctx, ExtractiveWriter().overview(ctx), writer_id="extractive/1")
    assert md.startswith("# demo &lt;x&gt;\n")
    intro = md.split("## What it is\n")[1].split("\n## ")[0]
    assert "Demo is great." in intro  # the README's opening, without its title ...
    assert "Usage" not in intro  # ... up to its next section
    assert "### Usage" in md  # the whole README further down, headings demoted
    assert "script" not in md
    assert "- Languages: python (2 files)" in md
    assert "| |" not in md  # no table with an empty header


def test_relative_links_are_percent_encoded() -> None:
    assert relative_link("files/a/b.py.md", "files/naïve_x.py.md") == "../na%C3%AFve_x.py.md"
    assert relative_link("index.md", "modules/index.md") == "modules/index.md"


def test_nav_and_mkdocs_yml() -> None:
    nav = build_nav(modules={"": "modules/index.md", "a": "modules/a/index.md"},
                    files={"a/x.py": "files/a/x.py.md", "r.md": "files/r.md.md"},
                    children={"": (["r.md"], ["a"]), "a": (["a/x.py"], [])})
    assert nav == [{"Overview": "index.md"}, {"a/": ["modules/a/index.md", {"x.py": "files/a/x.py.md"}]},
                   {"Repository and tooling": ["modules/index.md", {"r.md": "files/r.md.md"}]}]
    yml = render_mkdocs_yml(site_name='my "site" <b>', nav=nav, repo_url="https://github.com/o/r/blob/main/")
    assert 'site_name: "my &quot;site&quot; &lt;b&gt;"' in yml  # Material prints it as HTML
    # a source file at the root: in the root package's folder node (escaped: Material prints titles as HTML)
    assert build_nav(modules={"": "m.md"}, files={"<i>.py": "f.md"}, children={"": (["<i>.py"], [])},
                     root_name="<b>") == [{"Overview": "index.md"},
                                          {"&lt;b&gt;/": ["m.md", {"&lt;i&gt;.py": "f.md"}]}]
    assert "navigation.prune" in yml
    assert "- navigation.sections" not in yml
    assert "repo_url: \"https://github.com/o/r\"" in yml
    assert "- offline" in yml


def test_signature_html_is_escaped_by_the_highlighter() -> None:
    block = signature_block('def f(a="<script>x</script>") -> None', "python")
    assert "<script>" not in block
    assert "&lt;script&gt;" in block
    assert block.startswith('<div class="language-python highlight sb-signature"><pre><span></span><code>')
    assert "&lt;T&gt;" in signature_block("fn id<T>(x: T) -> T", "no-such-language")


def test_signature_is_coloured_like_the_source_blocks() -> None:
    """Keywords, definitions, strings and builtins keep their colour; names, whitespace, punctuation and
    operators are plain text, as in a symbol's Source block."""
    code = "def route(self, rule: str, **options: t.Any) -> None"
    block = signature_block(code, "python")
    assert '<span class="k">def</span> <span class="nf">route</span>(' in block
    assert '<span class="kc">None</span>' in block
    assert not re.search(r'<span class="[nwpo]">', block)
    assert html.unescape(re.sub(r"<[^>]+>", "", block)) == code


def test_footer_says_how_the_prose_was_made_in_plain_words() -> None:
    from generator.pages.render_markdown import site_footer

    extractive = site_footer(["extractive/1-636e796e"], 0, 10)
    assert "no language model was used" in extractive
    assert "extractive/1" not in extractive
    llm = site_footer(["llm/gemma-3/v7"], 4, 10)
    assert "some pages (each says so at its top) was written by a language model (gemma-3)" in llm
    # no count: a page the model (re)writes must not change the footer of every page (the render cache
    # would wrap the whole site again)
    assert site_footer(["llm/gemma-3/v7"], 5, 10) == llm
    assert "all pages was written by a language model (gemma-3)" in site_footer(["llm/gemma-3/v7"], 10, 10)
    yml = render_mkdocs_yml(site_name="s", nav=[], footer='<b>made</b> "here"')
    assert 'copyright: "&lt;b&gt;made&lt;/b&gt; &quot;here&quot;"' in yml  # Material prints it as HTML


def test_symbol_index_title_keeps_a_quote_in_a_name_inside_the_attribute() -> None:
    from generator.pages.render_markdown import _index_rows

    rows = _index_rows([_symbol('f" onmouseover="x')], {'f" onmouseover="x': "sym-f"})
    assert 'title="f&quot; onmouseover=&quot;x"' in rows
    assert 'title="f" onmouseover' not in rows  # the text itself stays element content


def test_setters_and_overloads_show_their_name_and_what_they_are_never_a_suffix() -> None:
    source = ("class Config:\n"  # 1
              "    @property\n    def timeout(self) -> int:\n        return 1\n\n"  # 2-5
              "    @timeout.setter\n    def timeout(self, value: int) -> None:\n        pass\n\n"  # 6-9
              "@t.overload\ndef load(x: int) -> int: ...\n"  # 10-11
              "@t.overload\ndef load(x: str) -> str: ...\n"  # 12-13
              "def load(x):\n    return x\n")  # 14-15

    def symbol(qualname: str, start: int, end: int, kind: str = "method",
               parent: str | None = "Config") -> Symbol:
        name = qualname.split("~", maxsplit=1)[0].rsplit(".", 1)[-1]
        return Symbol(name, qualname, kind, "pkg/app.py", start, end,  # type: ignore[arg-type]
                      f"def {name}()", "Doc.", parent)

    facts = FileFacts(file=SourceFile("pkg/app.py", "python", 10, "abc"),
                      symbols=[symbol("Config", 1, 8, "class", None), symbol("Config.timeout", 2, 4),
                               symbol("Config.timeout~2", 6, 8), symbol("load", 10, 11, "function", None),
                               symbol("load~2", 12, 13, "function", None),
                               symbol("load~3", 14, 15, "function", None)],
                      line_count=15)
    ctx = FileContext(facts=facts, page_id="files/pkg/app.py.md", module="pkg", source=source)
    md = render_file_page(ctx, ExtractiveWriter().file_page(ctx), writer_id="extractive/1",
                          module_page="modules/pkg/index.md")
    assert "~2" not in _text(md)
    assert "~3" not in _text(md)
    assert '#### Config.timeout { #sym-config-timeout-2 data-kind="property setter" }' in md  # anchor unique
    assert "*property*" in md
    assert "*property setter*" in md
    assert "*function overload*" in md
    assert 'title="Config.timeout">.timeout</a></td><td>property setter</td>' in md
    assert "### load { #sym-load-3 data-kind=\"function\" }\n\n*function* ·" in md  # the implementation


def test_an_init_py_page_title_has_an_id_the_sanitizer_keeps() -> None:
    facts = FileFacts(file=SourceFile("pkg/__init__.py", "python", 10, "abc"), symbols=[], line_count=3)
    ctx = FileContext(facts=facts, page_id="files/pkg/__init__.py.md", module="pkg")
    md = render_file_page(ctx, ExtractiveWriter().file_page(ctx), writer_id="extractive/1",
                          module_page="modules/pkg/index.md")
    # the default id `__init__py` starts with `__`, which html_sanitize drops: the page's own links broke
    assert "# &#95;&#95;init&#95;&#95;.py { #page-init-py }\n" in md
    app = render_file_page(_file_ctx(), ExtractiveWriter().file_page(_file_ctx()), writer_id="extractive/1",
                           module_page="modules/pkg/index.md")
    assert "\n# app.py\n" in app  # other titles keep their default id


def test_unexported_go_functions_methods_and_types_get_sections_and_are_indexed() -> None:
    from generator.pages.anchors import SymbolIndex

    def go(qualname: str, kind: str, public: bool, parent: str | None = None) -> Symbol:
        return Symbol(qualname.rsplit(".", 1)[-1], qualname, kind, "tree.go", 3, 9,  # type: ignore[arg-type]
                      f"func {qualname}()", "", parent, public)

    facts = FileFacts(file=SourceFile("tree.go", "go", 10, "abc"),
                      symbols=[go("node", "struct", False), go("node.findRoute", "method", False, "node"),
                               go("patNextSegment", "function", False), go("Walk", "function", True),
                               go("mSTUB", "constant", False)], line_count=40)
    ctx = FileContext(facts=facts, page_id="files/tree.go.md", module="")
    md = render_file_page(ctx, ExtractiveWriter().file_page(ctx), writer_id="extractive/1",
                          module_page="modules/index.md")
    for heading in ("### node { #sym-node ", "#### node.findRoute { #sym-node-findroute ",
                    "### patNextSegment { #sym-patnextsegment ", "### Walk { #sym-walk "):
        assert heading in md
    assert "mSTUB {" not in md  # an unexported constant stays out
    index = SymbolIndex.build([facts], {"tree.go": "files/tree.go.md"})
    assert index.href("files/x.go.md", "tree.go", "node.findRoute") == "tree.go.md#sym-node-findroute"
    assert index.href("files/x.go.md", "tree.go", "mSTUB") is None


def test_home_page_shows_the_readme_opening_once_and_skips_announcements_and_filler() -> None:
    readme = ("# Demo\n\n[![GoDoc Widget]][GoDoc]\n\n---\n\n**Documentation**: https://demo.example\n\n"
              "📢 Demo 3.0 is out! Read the release notes.\n\n"
              "Demo is a small [ASGI][asgi] toolkit for building services.\n\n"
              "## Usage\n\nCall it.\n\n" + "More usage.\n\n" * 20 + "[asgi]: https://asgi.example/\n"
              "[GoDoc]: https://godoc.example/\n")
    ctx = OverviewContext(repo_name="demo", readme=readme, readme_path="README.md",
                          languages=(("python", 2),), file_count=2, symbol_count=3,
                          description="A toolkit for services.")
    md = render_overview_page(ctx, ExtractiveWriter().overview(ctx), writer_id="extractive/1")
    assert md.count("is a small") == 1  # not in the lead, not again in the README further down
    lead = md.split("## What it is")[0]
    assert "A toolkit for services." in lead  # the manifest's description leads
    intro = md.split("## What it is\n")[1].split("\n## ")[0]
    assert "3.0 is out" not in md.split("## From README.md")[0]  # the announcement is not the opening
    assert "Documentation" not in intro
    assert "GoDoc Widget" not in intro
    assert "---" not in intro
    # the intro's reference link resolves: its definition, from the README's end, comes with it
    assert "[asgi]: https://asgi.example/" in intro
    assert "### Usage" in md  # the rest of the README, from its next section on
    no_description = OverviewContext(repo_name="demo", readme=readme, readme_path="README.md")
    assert "is a small" not in ExtractiveWriter().overview(no_description).summary


def test_a_long_signature_is_wrapped_one_parameter_per_line_never_cut() -> None:
    from generator.pages.render_markdown import wrap_signature

    long = ("def __init__(self, *, auth: Auth | None = None, headers: dict[str, str] = {'a': 'b, c'}, "
            "http2: bool = False) -> None")
    assert wrap_signature(long) == ("def __init__(\n    self,\n    *,\n    auth: Auth | None = None,\n"
                                    "    headers: dict[str, str] = {'a': 'b, c'},\n    http2: bool = False,\n"
                                    ") -> None")
    go = "func (mx *Mux) Handle(pattern string, handler http.Handler, opts map[string]func(a, b int) error)"
    assert wrap_signature(go, trailing_comma=False).split("\n") == [  # the receiver is not the list to wrap
        "func (mx *Mux) Handle(", "    pattern string,", "    handler http.Handler,",
        "    opts map[string]func(a, b int) error", ")"]
    assert wrap_signature("def f(a, b)") == "def f(a, b)"  # short: one line
    cut = "def f(" + ", ".join(f"p{i}: int = {i}" for i in range(12)) + ", flag: bool = Fa…"
    assert wrap_signature(cut).endswith("\n    p11: int = 11,\n    flag: bool = Fa…,\n)")
    html_block = signature_block(long, "python")
    assert 'class="language-python highlight sb-signature"' in html_block
    assert "\n" not in html_block  # one line of Markdown: its line breaks are character references
    assert "\n    http2" in _text(html_block)


def test_a_signature_too_long_for_one_line_per_parameter_is_broken_inside_never_cut() -> None:
    """What one parameter per line still left over 100 characters (urllib3, starlette, zustand, anyhow):
    a single parameter, a long union or default, a class's call-made base, TypeScript generics, a Rust
    `where` clause. Each is broken where a reader expects it, and every character is still there."""
    cases = {
        ("python", "def no_san_proxy_with_server(tmp_path_factory: pytest.TempPathFactory) -> "
                   "typing.Generator[tuple[ServerConfig, ServerConfig]]"): [
            "def no_san_proxy_with_server(", "    tmp_path_factory: pytest.TempPathFactory,",
            ") -> typing.Generator[tuple[ServerConfig, ServerConfig]]"],
        ("python", "def __init__(self, *args: ImmutableMultiDict[_KeyType, _ValueType] | Mapping[_KeyType, "
                   "_ValueType] | Iterable[tuple[_KeyType, _ValueType]], auth: httpx._types.AuthTypes | "
                   "httpx._client.UseClientDefault = httpx._client.USE_CLIENT_DEFAULT) -> None"): [
            "def __init__(", "    self,", "    *args: ImmutableMultiDict[_KeyType, _ValueType]",
            "        | Mapping[_KeyType, _ValueType]", "        | Iterable[tuple[_KeyType, _ValueType]],",
            "    auth: httpx._types.AuthTypes | httpx._client.UseClientDefault",
            "        = httpx._client.USE_CLIENT_DEFAULT,", ") -> None"],
        ("python", "class DocstringInfo(collections.namedtuple('DocstringInfo', ('summary', 'description', "
                   "'args', 'returns', 'yields', 'raises')))"): [
            "class DocstringInfo(", "    collections.namedtuple(", "        'DocstringInfo',",
            "        ('summary', 'description', 'args', 'returns', 'yields', 'raises'),", "    ),", ")"],
        ("typescript", "export function combine< T extends object, Mps extends [StoreMutatorIdentifier, "
                       "unknown][] = [], >(initialState: T, create: StateCreator<T, Mps, U>): "
                       "StateCreator<T>"): [
            "export function combine<", "    T extends object,",
            "    Mps extends [StoreMutatorIdentifier, unknown][] = []", ">(", "    initialState: T,",
            "    create: StateCreator<T, Mps, U>", "): StateCreator<T>"],
        ("typescript", "class ErrorBoundary extends ClassComponent< { children?: ReactNode | undefined; "
                       "onError: () => void }, { hasError: boolean } >"): [
            "class ErrorBoundary extends ClassComponent<",
            "    { children?: ReactNode | undefined; onError: () => void },", "    { hasError: boolean }",
            ">"],
        # a C++ template's parameter list goes on a line of its own; the one-item generic of an out-of-line
        # method's class (`wincolor_sink<ConsoleMutex>::`) stays whole
        ("cpp", "template <typename ConsoleMutex> void SPDLOG_INLINE "
                "wincolor_sink<ConsoleMutex>::print_range_(const memory_buf_t &formatted, size_t start, "
                "size_t end)"): [
            "template <typename ConsoleMutex>",
            "void SPDLOG_INLINE wincolor_sink<ConsoleMutex>::print_range_(",
            "    const memory_buf_t &formatted,", "    size_t start,", "    size_t end", ")"],
        ("rust", "pub fn downcast_mut<E>(&mut self) -> Option<&mut E> where E: Display + Debug + Send "
                 "+ Sync + 'static, F: Fn(E) -> E,"): [
            "pub fn downcast_mut<E>(&mut self) -> Option<&mut E>", "where",
            "    E: Display + Debug + Send + Sync + 'static,", "    F: Fn(E) -> E,"],
    }
    for (language, code), lines in cases.items():
        shown = _text(signature_block(code, language))
        assert shown.split("\n") == lines, shown
        # nothing dropped: wrapping adds line breaks, indents and trailing commas, and drops `, >`'s comma
        assert re.sub(r"[\s,]", "", shown) == re.sub(r"[\s,]", "", code)
        assert all(len(line) <= 80 for line in lines)


CONSTRUCTED = '''import dataclasses
from typing import ClassVar


class Client(BaseClient):
    """A client."""

    def __init__(self, auth=None, *, params: dict | None = None) -> None:
        self.auth = auth

    @property
    def timeout(self) -> float:
        """The timeout."""
        return 1.0

    @timeout.setter
    def timeout(self, value: float) -> None:
        pass


@dataclasses.dataclass(frozen=True)
class Point:
    """A point.

    x: not a field
    """

    kind: ClassVar[str] = "p"
    x: int
    y: int = 0  # the height

    def norm(self) -> int:
        return self.x
'''


def test_a_class_signature_shows_its_constructor_and_a_property_reads_as_one() -> None:
    from generator.analyze.parse import extract

    facts = extract(SourceFile("pkg/app.py", "python", len(CONSTRUCTED), "abc"), CONSTRUCTED.encode())
    ctx = FileContext(facts=facts, page_id="files/pkg/app.py.md", module="pkg", source=CONSTRUCTED)
    md = render_file_page(ctx, ExtractiveWriter().file_page(ctx), writer_id="extractive/1",
                          module_page="modules/pkg/index.md")
    signatures = [_text(line) for line in md.splitlines() if "sb-signature" in line]
    # the class as it is called (self left out), its bases beside its kind; a dataclass by its fields
    assert "class Client(auth=None, *, params: dict | None = None)" in signatures
    assert "*class* · bases: `BaseClient` ·" in md
    assert "class Point(x: int, y: int = 0)" in signatures  # no ClassVar, no docstring line, no comment
    # a property: the attribute it reads as, and labelled a property in its heading's badge
    assert "timeout: float" in signatures
    assert '#### Client.timeout { #sym-client-timeout data-kind="property" }' in md
    assert "def timeout(self, value: float) -> None" in signatures  # the setter stays a method
    assert "def __init__(self, auth=None, *, params: dict | None = None) -> None" in signatures


def test_the_template_environment_is_made_once_per_process() -> None:
    """A new Jinja environment per page compiles every template again: a misplaced decorator once made the
    files stage of a 12k-file build 4x slower with the same output."""
    from generator.pages.render_markdown import _environment

    assert _environment() is _environment()
    assert _environment().get_template("file.md.j2") is _environment().get_template("file.md.j2")


def test_a_rule_right_after_a_code_block_is_a_rule_not_a_heading() -> None:
    import markdown

    readme = "#### Basic usage\n```c++\nint main() {}\n```\n---\n#### Next\n```c++\nint b;\n```\ntext\n"
    safe = sanitize_markdown(readme)
    assert "```\n\n---" in safe
    assert "```\n\ntext" in safe
    html = markdown.markdown(safe, extensions=["attr_list", "pymdownx.highlight", "pymdownx.superfences"])
    assert "<h2" not in html
    assert "<hr" in html
    assert sanitize_markdown("```\nx\n```\n\nafter\n") == "```\nx\n```\n\nafter\n"  # already apart: unchanged
