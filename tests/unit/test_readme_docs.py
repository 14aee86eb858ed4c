"""The README stays a user's page and the docs, docstrings and comments keep pointing at code that exists.

The README is held to 250 lines (the rest belongs in docs/). Every module the README, docs/*.md, or a
docstring or comment in sourcebook/, generator/, answer/, bench/ or tests/ names must exist in this checkout:
a path (`answer/serving/tools.py`), a dotted name (`generator.pages.stages`, `sourcebook.config.load_config`:
the module, then a name it defines) or a bare file name (`page_sink.py`: some module of the project has it).
A moved or renamed module otherwise leaves the prose pointing at nothing, silently.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 250
# a cited module path: one of the project's packages (or bench/, tests/), folders, a .py file name
_CITED = re.compile(r"(?<![\w./-])((?:generator|answer|sourcebook|bench|tests)/(?:[\w-]+/)*[\w-]+\.py)\b")


# a dotted module name of the three packages (a file name like sourcebook.toml is not one)
_DOTTED = re.compile(r"(?<![\w./-])((?:generator|answer|sourcebook)(?:\.[A-Za-z_]\w*)+)")
_FILE_SUFFIXES = {"py", "toml", "md", "yml", "yaml", "json", "txt", "cfg", "ini", "j2", "html", "js", "css",
                  "scm"}
# a bare module file name (not the tail of a path, not a glob)
_BARE = re.compile(r"(?<![\w./*-])([A-Za-z_]\w*\.py)\b")
PROSE_PACKAGES = ("sourcebook", "generator", "answer", "bench", "tests")
# Files of other projects the prose talks about (a repository's setup.py, flask's app.py, Python-Markdown's
# htmlparser.py, example names): a bare name that is none of these must be a module of this project.
FOREIGN = frozenset({
    "__init__.py", "__main__.py", "setup.py", "conf.py", "conftest.py", "manage.py", "app.py", "core.py",
    "util.py", "_util.py", "_utils.py", "_internal_utils.py", "_main.py", "models.py", "tool.py", "a.py",
    "sessions.py", "structures.py", "adapters.py", "globals.py", "htmlparser.py", "snippet.py", "init.py",
    "score.py", "test_requests.py",
})


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def cited_paths(text: str) -> set[str]:
    return set(_CITED.findall(text))


def dotted_names(text: str) -> set[str]:
    return {name for name in _DOTTED.findall(text) if name.rsplit(".", 1)[1] not in _FILE_SUFFIXES}


def bare_files(text: str) -> set[str]:
    return set(_BARE.findall(text))


def _prose(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of what a reader reads in `path`: a whole Markdown file; a module's docstrings (module,
    classes, functions) and comments, not its code or its other strings (tests hold made-up paths)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        yield 1, text
        return
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                yield first.lineno, first.value.value
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def _prose_files() -> list[Path]:
    modules = (path for package in PROSE_PACKAGES for path in sorted((ROOT / package).rglob("*.py")))
    return [*_documents(), *(path for path in modules if "fixtures" not in path.relative_to(ROOT).parts)]


@cache
def _top_level_names(module: Path) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name))
    return frozenset(names)


def dotted_exists(name: str, root: Path = ROOT) -> bool:
    """A package, a module, or a module (or package) followed by a name it defines or imports."""
    where = root
    for part in name.split("."):
        if (where / part).is_dir():
            where = where / part
        elif (where / f"{part}.py").is_file():
            where = where / f"{part}.py"
        elif where.is_dir():
            return (where / "__init__.py").is_file() and part in _top_level_names(where / "__init__.py")
        else:
            return part in _top_level_names(where)  # what follows is the name's own attribute: not checked
    return True


@cache
def _project_files() -> frozenset[str]:
    return frozenset(path.name for package in (*PROSE_PACKAGES, "site", "templates")
                     for path in (ROOT / package).rglob("*.py"))


def test_every_module_named_in_docstrings_comments_and_docs_exists() -> None:
    missing = []
    for path in _prose_files():
        where = path.relative_to(ROOT)
        for line, text in _prose(path):
            missing += [f"{where}:{line}: {cited}" for cited in sorted(cited_paths(text))
                        if not (ROOT / cited).is_file()]
            missing += [f"{where}:{line}: {name}" for name in sorted(dotted_names(text))
                        if not dotted_exists(name)]
            missing += [f"{where}:{line}: {name} (write its path)" for name in sorted(bare_files(text))
                        if name not in _project_files() and name not in FOREIGN]
    assert not missing, "modules named that do not exist:\n" + "\n".join(missing)


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


def test_the_prose_check_reads_docstrings_and_comments_and_resolves_names() -> None:
    module = ROOT / "tests" / "unit" / "test_readme_docs.py"
    chunks = [text for _, text in _prose(module)]
    assert any(text.startswith("# a dotted module name") for text in chunks)  # a comment
    assert any("stays a user's page" in text for text in chunks)  # the module docstring
    assert not any("generator/pages/render_markdown.py`, (sourcebook" in text for text in chunks)  # a string
    assert dotted_names("see generator.pages.stages, sourcebook.toml and answer.serving.tools.Tools.") == {
        "generator.pages.stages", "answer.serving.tools.Tools"}
    assert dotted_exists("generator.pages.stages")
    assert dotted_exists("answer.serving.tools.Tools.search_codebase")  # past the name: not checked
    assert dotted_exists("sourcebook.config.load_config")
    assert not dotted_exists("generator.pages.markdown")  # renamed to render_markdown
    assert not dotted_exists("answer.engine")  # moved into answer/answering/
    assert not dotted_exists("sourcebook.config.no_such_name")
    assert bare_files("the state (page_sink.py), not generator/pages/stages.py nor *.py") == {"page_sink.py"}


def test_the_pattern_finds_paths_as_the_docs_write_them() -> None:
    text = ("see `generator/pages/render_markdown.py`, (sourcebook/redaction.py) and "
            "answer/serving/tools.py; "
            "not site/page_budget.py, .venv/share/sourcebook/x.py or generator/pages/llm/prompts/*.vN.j2")
    assert cited_paths(text) == {"generator/pages/render_markdown.py", "sourcebook/redaction.py",
                                 "answer/serving/tools.py"}
