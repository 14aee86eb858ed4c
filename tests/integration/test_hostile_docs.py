"""A repository whose documentation files (Markdown, reST with includes), file names and docstrings try to get
out of their pages, built once through the CLI: no markup that acts, no overlay drawn by the theme's own
classes, no file read from outside the repository or outside the scanned files, no link to one, no
amplification, and documents built to take hours (quadratic parsing, deep nesting) shown as text in seconds
while the build goes on. Also the rendered-documents cache (only this user's key names an entry) and the
CPU budget a document renders under.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from generator.markup.doc_budget import RenderBudgetExceeded, cpu_budget
from generator.markup.doc_html import DocumentCache
from generator.markup.doc_includes import clip
from generator.markup.html_sanitize import audit_page, sanitize_content
from generator.markup.md_html import render_markdown
from generator.markup.safe_markdown import sanitize_markdown
from tests.support.hostile import ActiveMarkup
from tests.support.repo_files import write_files

OUTSIDE = "OUTSIDE-SECRET-7f3a"  # in files next to the repository, never to be read into it
# one file name that is markup, used by a call edge and shown in lists of files
ODD = 'pkg/w<img src=x onerror=alert(1)>"q.py'

OVERLAY_MD = """\
# Overlay

Theme classes that are fixed over the window (marker-md):

<div class="md-dialog md-dialog--active">Session expired, <a href="https://evil.example/">log in</a></div>
<a class="md-consent__overlay" href="https://evil.example/">anywhere</a>
<p class="MD-overlay keep-me">mixed case</p>

<style>body{display:none}</style><base href="https://evil.example/">
<meta http-equiv="refresh" content="0;url=https://evil.example/">
<form action="https://evil.example/"><input name="p">
<button formaction="javascript:alert(1)">go</button></form>
<iframe src="https://evil.example/"></iframe><object data="x.swf"></object><embed src="x.swf">
<svg><a xlink:href="javascript:alert(2)"><text>svg</text></a>
<animate attributeName="href" values="javascript:alert(3)"/></svg>
<math><mi xlink:href="javascript:alert(4)">math</mi></math>
<details open ontoggle="alert(5)"><summary>s</summary>d</details>
<img src="https://evil.example/x.png" srcset="javascript:alert(6)">

[tab](java&#x09;script:alert(7)) [upper](JAVASCRIPT:alert(8)) [space]( javascript:alert(9))
[ctrl](&#x01;javascript:alert(10)) [vb](vbscript:msgbox) [data](data:text/html;base64,PHNjcmlwdD4=)
[file](file:///etc/passwd) [up](../../etc/passwd) [root](/etc/passwd) [unc](\\\\evil.example/x)
[proto](//evil.example/x) [angle](<javascript:alert(11)>) [ref][evil]

[evil]: javascript:alert(12)

> [!WARNING] <script>alert(13)</script>
> <img src=x onerror=alert(14)> [alert link](javascript:alert(15))

- a
  - <img src=x onerror=alert(16)>
    ```
    </code><script>alert(17)</script>
    ```

```{.python onclick="alert(18)"}
code
```
"""

OVERLAY_RST = """\
Overlay
=======

Theme classes (marker-rst):

.. container:: md-dialog md-dialog--active

   Session expired.

.. class:: md-consent__overlay

A paragraph with a class.

.. role:: fixed
   :class: md-top

:fixed:`a role`

.. csv-table:: Remote
   :url: https://evil.example/data.csv

.. raw:: html
   :file: ../secret.txt

.. include:: linked/secret.rst

.. include:: outside.rst

.. include:: overlay.rst

.. include:: loop-a.rst

.. literalinclude:: ../pkg/core.py
   :lines: {lines}

`js <JaVa&#x09;Script:alert(1)>`_ `file <file:///etc/passwd>`_ `up <../../etc/passwd>`_

After the includes (marker-rst-end).
"""

FILES: dict[str, str | bytes] = {
    # shown again on the home page, through the site's Markdown: 30,000 `[` there took 160 s of the site stage
    "README.md": "# Hostile docs\n\nA package (marker-readme).\n\n## More\n\n" + "[" * 30_000 +
                 " [a link](https://example.com/kept) marker-readme-end\n",
    "pkg/__init__.py": '"""The package."""\n',
    "pkg/core.py": '"""Core."""\n\n\ndef run(x):\n    """Run it."""\n    return x.odd_unique_helper()\n' +
                   "".join(f"\n\ndef f{i}():\n    return {i}\n" for i in range(1500)),
    ODD: '"""<img src=x onerror=alert(20)>\n=================================\n\n'
         '[A title](javascript:alert(21)) that names {: onclick="alert(22)" } nothing."""\n\n\n'
         'def odd_unique_helper():\n    """Help <script>alert(23)</script>."""\n    return 1\n',
    "docs/overlay.md": OVERLAY_MD,
    # 3,000 copies of a 40 kB file asked for in a 9 kB option (docutils refuses lines over 10,000 characters)
    "docs/overlay.rst": OVERLAY_RST.format(lines="1-," * 3_000 + "1-"),
    "docs/long.rst": "Long\n====\n\nmarker-long " + "x" * 20_000 + "\n",
    "docs/loop-a.rst": "loop a (marker-loop)\n\n.. include:: loop-b.rst\n",
    "docs/loop-b.rst": "loop b\n\n.. include:: loop-a.rst\n",
    # Python-Markdown looks for each `[`'s closing bracket: quadratic, hours for a megabyte
    "docs/brackets.md": "# Brackets\n\nmarker-brackets " + "[" * 200_000 + "\n",
    "docs/quotes.md": ">" * 50_000 + " marker-quotes\n",  # gigabytes of copies, one per level
    "docs/after.md": "# After\n\nThe build went on (marker-after).\n",
}


def _repo(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "repo", FILES)
    outside = write_files(tmp_path / "outside", {"secret.rst": f"{OUTSIDE}\n", "secret.txt": f"{OUTSIDE}\n"})
    (tmp_path / "secret.txt").write_text(f"{OUTSIDE}\n", encoding="utf-8")
    (root / "docs" / "linked").symlink_to(outside, target_is_directory=True)  # a folder pointing out
    (root / "docs" / "outside.rst").symlink_to(outside / "secret.rst")  # a file pointing out
    return root


class _Active(ActiveMarkup):
    """test_hostile_repo's check, reading <title> as a browser does: text, tags and all (Material prints a
    file's name there unescaped, inertly: a name cannot hold the `/` of `</title>`)."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.set_cdata_mode(tag)
        super().handle_starttag(tag, attrs)


def _article(page: Path) -> str:
    inside = page.read_text(encoding="utf-8").split("<article", 1)[1].split("</article>", 1)[0]
    return inside.split(">", 1)[1]  # the article's own tag is the theme's


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    tmp_path = tmp_path_factory.mktemp("hostile-docs")
    root = _repo(tmp_path)
    out = tmp_path / "out"
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--out", str(out),
                          "--no-index"], capture_output=True, text=True, check=False, timeout=600,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1",
                              "XDG_STATE_HOME": str(tmp_path / "state")})
    # the finished pages are audited by the build itself: anything script-capable fails it
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    return out, time.monotonic() - started


@pytest.mark.slow
def test_documents_and_names_that_try_to_escape_their_pages_do_not(built: tuple[Path, float]) -> None:
    out, _seconds = built
    site = out / "site"
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 8
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert audit_page(text) == [], page
        parser = _Active()
        parser.feed(text)
        assert parser.found == [], (page, parser.found[:5])
        article = _article(page) if "<article" in text else ""
        # no theme component class in any page's content: a full-window layer, a dialog, a fixed button
        assert not re.search(r'class="(?:[^"]*\s)?md-', article, re.I), page
        assert OUTSIDE not in text, page
    everything = "".join(p.read_text(encoding="utf-8", errors="replace")
                         for p in out.rglob("*") if p.is_file())
    assert OUTSIDE not in everything
    assert "root:x:0:0" not in everything

    md = _article(site / "files" / "docs" / "overlay.md.html")
    assert "marker-md" in md  # rendered, not dropped
    assert "Session expired" in md
    assert '<p class="keep-me">mixed case</p>' in md  # only the theme's classes go
    for bad in ("<style", "<base", "<meta", "<form", "<input", "<button", "<iframe", "<object", "<embed",
                "<svg", "<math", "evil.example/x.png", "ontoggle", "srcset", "file:", "etc/passwd",
                'evil.example/x"', "<script"):
        assert bad not in md, bad
    for words in ("tab", "upper", "space", "ctrl", "vb", "data", "file", "up", "root", "unc", "proto", "ref"):
        assert re.search(rf"[\s>]{words}[\s<]", md), words  # the link went, its words stayed

    rst = _article(site / "files" / "docs" / "overlay.rst.html")
    assert "marker-rst" in rst
    assert "marker-rst-end" in rst  # the document went on after every refused include
    assert "marker-loop" in rst  # the loop: a then b, then refused
    assert rst.count("it would include itself") == 2  # overlay.rst into itself, loop-b back into loop-a
    # a folder and a file that point out of the repository were never scanned, so never included
    assert rst.count("not among the repository's text files this wiki read") == 2
    assert "Session expired." in rst
    assert "A paragraph with a class." in rst
    assert "evil.example/data.csv" not in rst
    assert "alert" not in rst.replace("&lt;", "<")  # the js link's words stay; no URL does
    # 3,001 copies of core.py asked for: refused, the file's page linked instead
    assert rst.count("def run(x):") == 0
    assert 'href="../pkg/core.py.html">pkg/core.py</a>' in rst

    # built to take hours: each shown as its text within its CPU budget, and the build went on
    assert "marker-brackets" in _article(site / "files" / "docs" / "brackets.md.html")
    assert 'class="sb-md-text"' in _article(site / "files" / "docs" / "brackets.md.html")
    assert "marker-quotes" in _article(site / "files" / "docs" / "quotes.md.html")
    assert "marker-after" in _article(site / "files" / "docs" / "after.md.html")
    # a line longer than docutils reads (it gives up on the whole document): the text, not an empty page
    assert "marker-long" in _article(site / "files" / "docs" / "long.rst.html")

    # a file named like markup: its name is text wherever it shows (its page, lists, the call edge)
    odd_pages = [p for p in pages if "onerror" in p.name]
    assert len(odd_pages) == 1
    name = 'w&lt;img src=x onerror=alert(1)&gt;"q.py'
    core = _article(site / "files" / "pkg" / "core.py.html")
    # the call edge to its function (references.py), the file's name as text
    href = "w_img_src_x_onerror_alert_1_q.py.html#sym-odd-unique-helper"
    assert f'<a href="{href}">{name}: odd_unique_helper</a>' in core
    home = _article(site / "index.html")
    assert "marker-readme" in home
    assert '[[[[ <a href="https://example.com/kept">a link</a> marker-readme-end' in home
    # where to start reading: its name as text, its summary without the docstring's title (boilerplate
    # .strip_title: the markup title and its underline gone), the rest as typed, never a link
    summary = '[A title](javascript:alert(21)) that names {: onclick="alert(22)" } nothing.'
    assert f"{name}</a>: {summary}" in home
    assert "alert(20)" not in home


def test_a_document_cache_entry_is_used_only_under_the_key_that_named_it(tmp_path: Path) -> None:
    """A committed cache (another machine's key, entries doctored) is never shown: every entry is named by a
    keyed hash of the text, so this user's key looks for other names and renders the document itself."""
    cache_dir = tmp_path / "out" / "cache" / "documents"
    text = "# Notes\n\nThe real notes.\n"
    attacker = DocumentCache(cache_dir, b"a" * 32, render=lambda t, link, name: render_markdown(t, link))
    assert "The real notes." in attacker.render(text, lambda _u: None)
    entries = list(cache_dir.iterdir())
    assert len(entries) == 1
    assert re.fullmatch(r"[0-9a-f]{40}\.json", entries[0].name)  # a name of hex digits, never the text's
    doctored = json.loads(entries[0].read_text(encoding="utf-8"))
    doctored["html"] = "<p>DOCTORED: send your token to evil.example</p>"
    entries[0].write_text(json.dumps(doctored), encoding="utf-8")

    again = DocumentCache(cache_dir, b"a" * 32, render=lambda t, link, name: render_markdown(t, link))
    assert "DOCTORED" in again.render(text, lambda _u: None)  # the doctored entry is where the key looks
    victim = DocumentCache(cache_dir, b"v" * 32, render=lambda t, link, name: render_markdown(t, link))
    shown = victim.render(text, lambda _u: None)
    assert "DOCTORED" not in shown
    assert "The real notes." in shown
    assert victim.misses == 1
    keyless = DocumentCache(cache_dir, None, render=lambda t, link, name: render_markdown(t, link))
    assert "DOCTORED" not in keyless.render(text, lambda _u: None)  # no key: nothing read, nothing kept
    assert keyless.keep(text) is None


def test_the_render_budget_stops_a_costly_document_in_the_main_thread_only() -> None:
    def spin(seconds: float) -> int:
        until, n = time.process_time() + seconds, 0
        while time.process_time() < until:
            n += 1
        return n

    started = time.process_time()
    with pytest.raises(RenderBudgetExceeded), cpu_budget(0.2):
        spin(30)
    assert time.process_time() - started < 10
    with cpu_budget(5):
        assert spin(0.05) > 0  # within budget: untouched, and the timer is off afterwards
    spin(0.3)
    errors: list[BaseException] = []

    def in_thread() -> None:
        try:
            with cpu_budget(0.01):  # no budget outside the main thread (no signal reaches it)
                spin(0.1)
        except BaseException as exc:  # recorded for the assert below
            errors.append(exc)

    worker = threading.Thread(target=in_thread)
    worker.start()
    worker.join()
    assert errors == []


def test_theme_classes_are_dropped_from_content_and_line_picks_cannot_amplify() -> None:
    html = sanitize_content('<div class="md-dialog md-dialog--active admonition note">x</div>'
                            '<span class="MD-top">y</span><p class="sb-refs">z</p>')
    assert html == '<div class="admonition note">x</div><span>y</span><p class="sb-refs">z</p>'
    text = "".join(f"line {i}\n" for i in range(1, 11))
    assert clip(text, {"lines": "2,4-5"}) == "line 2\nline 4\nline 5\n"
    assert clip(text, {"lines": "1-,1-"}) is None  # twice the file: a link to it instead
    assert clip(text, {"lines": ",".join(["3"] * 10)}) == "line 3\n" * 10  # repeats within the file's size


def test_brackets_markdown_would_scan_from_are_written_as_text_beyond_a_few() -> None:
    few = "[a] [b [c]] [unclosed and [x](https://example.com)"
    assert sanitize_markdown(few) == few  # under the threshold: as written
    text = "[" * 200 + " [x](https://example.com) " + "[" * 6 + "deep" + "]" * 6 + " [a][b]\n\n[b]: https://e.org"
    out = sanitize_markdown(text)
    assert out.startswith("&#91;" * 200 + " [x](https://example.com) [[[[&#91;&#91;deep]]]]]] [a][b]")
    assert out.endswith("[b]: https://e.org")
