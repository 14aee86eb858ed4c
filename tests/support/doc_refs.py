"""What the docs, docstrings and comments name: module paths (`answer/serving/tools.py`), dotted module names
(`generator.pages.stages`, `sourcebook.config.load_config`) and bare module file names (`page_sink.py`), and
whether each exists in this checkout. Used by tests/unit/test_readme_docs.py and tests/unit/test_doc_paths.py.
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


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def cited_paths(text: str) -> set[str]:
    return set(_CITED.findall(text))


def dotted_names(text: str) -> set[str]:
    return {name for name in _DOTTED.findall(text) if name.rsplit(".", 1)[1] not in _FILE_SUFFIXES}


def bare_files(text: str) -> set[str]:
    return set(_BARE.findall(text))


def prose(path: Path) -> Iterator[tuple[int, str]]:
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


def prose_files() -> list[Path]:
    modules = (path for package in PROSE_PACKAGES for path in sorted((ROOT / package).rglob("*.py")))
    return [*documents(), *(path for path in modules if "fixtures" not in path.relative_to(ROOT).parts)]


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
def project_files() -> frozenset[str]:
    return frozenset(path.name for package in (*PROSE_PACKAGES, "site", "templates")
                     for path in (ROOT / package).rglob("*.py"))
