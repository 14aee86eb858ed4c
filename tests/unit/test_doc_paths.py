"""Docstrings, comments and docs keep pointing at modules that exist.

Every module the README, docs/*.md, or a docstring or comment in sourcebook/, generator/, answer/, bench/ or
tests/ names must exist in this checkout: a path (`answer/serving/tools.py`), a dotted name
(`generator.pages.stages`, `sourcebook.config.load_config`: the module, then a name it defines) or a bare file
name (`page_sink.py`: some module of the project has it, unless it is a file of another project the prose
talks about, tests/support/doc_refs.py's FOREIGN). A moved or renamed module otherwise leaves the prose
pointing at nothing, silently.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.doc_refs import (
    FOREIGN,
    ROOT,
    bare_files,
    cited_paths,
    dotted_exists,
    dotted_names,
    project_files,
    prose,
    prose_files,
)


def test_every_module_named_in_docstrings_comments_and_docs_exists() -> None:
    missing = []
    for path in prose_files():
        where = path.relative_to(ROOT)
        for line, text in prose(path):
            missing += [f"{where}:{line}: {cited}" for cited in sorted(cited_paths(text))
                        if not (ROOT / cited).is_file()]
            missing += [f"{where}:{line}: {name}" for name in sorted(dotted_names(text))
                        if not dotted_exists(name)]
            missing += [f"{where}:{line}: {name} (write its path)" for name in sorted(bare_files(text))
                        if name not in project_files() and name not in FOREIGN]
    assert not missing, "modules named that do not exist:\n" + "\n".join(missing)


def test_the_check_reads_docstrings_and_comments_but_not_other_strings(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""Module doc (a.py)."""\n\n\ndef f():\n    """Function doc."""\n'
                      '    return "generator/not_prose.py"  # a comment\n', encoding="utf-8")
    assert [text for _, text in prose(module)] == ["Module doc (a.py).", "Function doc.", "# a comment"]
    assert [line for line, _ in prose(module)] == [1, 5, 6]


def test_names_are_resolved_to_modules_and_the_names_they_define() -> None:
    assert dotted_names("see generator.pages.stages, sourcebook.toml and answer.serving.tools.Tools.") == {
        "generator.pages.stages", "answer.serving.tools.Tools"}
    assert dotted_exists("generator.pages.stages")
    assert dotted_exists("answer.serving.tools.Tools.search_codebase")  # past the name: not checked
    assert dotted_exists("sourcebook.config.load_config")
    assert not dotted_exists("generator.pages.markdown")  # renamed to render_markdown
    assert not dotted_exists("answer.engine")  # moved into answer/answering/
    assert not dotted_exists("sourcebook.config.no_such_name")
    assert bare_files("the state (page_sink.py), not generator/pages/stages.py nor *.py") == {"page_sink.py"}
    assert "page_sink.py" in project_files()
    assert "markdown.py" not in project_files()
