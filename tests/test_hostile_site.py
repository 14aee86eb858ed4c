"""A page whose Markdown Python-Markdown would take hours over (generator/site_engine.py's page budget): the
build goes on and shows that page's text, escaped; the other pages are rendered as usual."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from generator.build import build
from generator.site_engine import PAGE_CPU_ENV
from sourcebook.config import load_config


def test_a_page_over_its_cpu_budget_is_its_escaped_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(PAGE_CPU_ENV, "1")  # the bomb takes minutes: over 1 s as surely as over 10
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
