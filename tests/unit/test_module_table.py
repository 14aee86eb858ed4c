"""docs/architecture.md's module table is the one generated from the module docstrings (`make docs`)."""

from __future__ import annotations

from pathlib import Path

from tests.support.module_table import BEGIN, END, committed, first_sentence, table, write


def test_the_committed_module_table_is_the_generated_one() -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
    assert committed(doc.read_text(encoding="utf-8")) == table(), (
        "docs/architecture.md's module table is stale: run `make docs` and commit the result")


def test_the_table_follows_a_docstring_and_a_new_module(tmp_path: Path) -> None:
    for top in ("sourcebook", "generator", "answer"):
        (tmp_path / top).mkdir()
        (tmp_path / top / "__init__.py").write_text(f'"""The {top} package.\n\nMore."""\n')
    (tmp_path / "generator" / "build.py").write_text('"""The build. It runs | the stages."""\n')
    (tmp_path / "docs").mkdir()
    doc = tmp_path / "docs" / "architecture.md"
    doc.write_text(f"# A\n\nhand-written\n\n{BEGIN}\n{END}\n\nafter\n")
    assert write(tmp_path)
    text = doc.read_text()
    assert "| `generator/build.py` | The build. |" in text
    assert "### `sourcebook/`\n\nThe sourcebook package." in text
    assert text.index("### `sourcebook/`") < text.index("### `generator/`") < text.index("### `answer/`")
    assert text.startswith("# A\n\nhand-written\n\n")
    assert text.endswith(f"{END}\n\nafter\n")
    assert not write(tmp_path)  # unchanged the second time
    (tmp_path / "answer" / "tools.py").write_text('"""The tools: a | b."""\n')
    assert write(tmp_path)
    assert "| `answer/tools.py` | The tools: a \\| b. |" in doc.read_text()


def test_the_first_sentence_ends_at_a_full_stop_before_a_new_sentence() -> None:
    assert first_sentence("Pushed files: `POST /index`.\n\nMore.") == "Pushed files: `POST /index`."
    assert first_sentence("A digest (e.g. of x.py) of it. The rest.") == "A digest (e.g. of x.py) of it."
    assert first_sentence("The build\npipeline.") == "The build pipeline."
