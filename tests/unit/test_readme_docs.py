"""The README stays a user's page and the docs keep pointing at code that exists.

The README is held to 250 lines (the rest belongs in docs/), and every module path cited in the README or in
docs/*.md must name a file of this checkout: a moved or renamed module otherwise leaves the docs pointing at
nothing, silently.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.doc_refs import cited_paths

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 250


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_readme_is_at_most_250_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, (f"README.md has {lines} lines (at most {README_MAX_LINES}): move "
                                       "details into docs/")


def test_every_cited_module_path_exists() -> None:
    missing = [f"{doc.relative_to(ROOT)}: {path}" for doc in _documents()
               for path in sorted(cited_paths(doc.read_text(encoding="utf-8")))
               if not (ROOT / path).is_file()]
    assert not missing, "paths cited in the docs that do not exist:\n" + "\n".join(missing)


def test_the_docs_cite_modules_at_all() -> None:
    """The check above must see the citations: docs/architecture.md names modules of every package."""
    cited = cited_paths((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert {path.split("/")[0] for path in cited} >= {"generator", "answer", "sourcebook"}


def test_the_pattern_finds_paths_as_the_docs_write_them() -> None:
    text = ("see `generator/pages/render_markdown.py`, (sourcebook/redaction.py) and "
            "answer/serving/tools.py; "
            "not site/page_budget.py, .venv/share/sourcebook/x.py or generator/pages/llm/prompts/*.vN.j2")
    assert cited_paths(text) == {"generator/pages/render_markdown.py", "sourcebook/redaction.py",
                                 "answer/serving/tools.py"}
