"""Repository text Python-Markdown would take hours over: a docstring too long or too full of markup is put on
its page as written, escaped, in a block Markdown leaves alone (generator/markup/docstrings.py); and whatever
the
cause, a page over its CPU budget (generator/site/material/engine.py) is its escaped Markdown. The build goes
on and
the other pages are rendered as usual."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from generator.build import build
from generator.markup import docstrings
from generator.site.material.engine import PAGE_CPU_ENV
from sourcebook.config import load_config


def test_a_page_over_its_cpu_budget_is_its_escaped_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(PAGE_CPU_ENV, "1")  # the bomb takes minutes: over 1 s as surely as over 10
    # the docstring goes through Markdown (set before the stages' workers fork)
    monkeypatch.setattr(docstrings, "MAX_MARKUP_CHARS", 10**9)
    monkeypatch.setattr(docstrings, "MAX_RENDERED_CHARS", 10**9)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "README.md").write_text("# Demo\n\nA demo. See [the bomb](bomb.py).\n\n## Usage\n\nCall it.\n")
    # a module docstring of 200,000 `[` (each written as &#91; by the sanitizer): minutes of Markdown
    (root / "bomb.py").write_text('"""Bomb <tag> & ' + "[" * 200_000 + '"""\n\n\ndef f():\n    return 1\n')
    (root / "calm.py").write_text('"""A calm module."""\n\n\ndef g():\n    return 2\n')
    with caplog.at_level(logging.WARNING):
        # two render processes: the pages are rendered by forked workers, where the budget holds too
        assert build(load_config(root), index=False, site_workers=2).site_built
    site = root / ".sourcebook" / "site"
    page = (site / "files" / "bomb.py.html").read_text()
    assert '<pre class="sb-md-text">' in page
    assert "Bomb &amp;#60;tag&amp;#62; &amp;amp; " + "&amp;#91;" * 1000 in page  # its Markdown, escaped
    assert "its first 100,000 characters" in page
    assert "<tag>" not in page
    assert any("bomb.py" in r.getMessage() and "CPU" in r.getMessage() for r in caplog.records)
    home, calm = (site / "index.html").read_text(), (site / "files" / "calm.py.html").read_text()
    assert "sb-md-text" not in home + calm  # rendered: a heading, a link, the docstring
    assert 'id="what-it-is"' in home
    assert '<a href="files/bomb.py.html">the bomb</a>' in home
    assert "<p>A calm module.</p>" in calm


def test_a_docstring_full_of_markup_is_shown_as_written(tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "README.md").write_text("# Demo\n\nA demo.\n")
    bomb = "Bomb <tag> & *not emphasis*\n\n" + "[" * 300_000
    (root / "bomb.py").write_text(f'"""{bomb}"""\n\n\ndef f():\n    """A *fine* docstring."""\n'
                                  "    return 1\n")
    with caplog.at_level(logging.WARNING):
        assert build(load_config(root), index=False).site_built
    page = (root / ".sourcebook" / "site" / "files" / "bomb.py.html").read_text()
    assert "sb-md-text" not in page  # not the page budget: the docstring alone
    assert not any("CPU" in r.getMessage() for r in caplog.records)
    assert "This docstring is shown as written, its first 100,000 characters" in page
    shown = "Bomb &lt;tag&gt; &amp; *not emphasis*\n\n" + "[" * 1000  # as written, not Markdown
    assert f'<pre class="sb-docstring"><code>{shown}' in page
    assert "[" * (100_000 - bomb.index("[")) + "</code></pre>" in page
    assert "<tag>" not in page
    assert "A <em>fine</em> docstring." in page  # the other docstrings are formatted
