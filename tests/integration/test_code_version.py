"""Cache keys follow the code: every code version is the hash of its stage's import closure (read with ast),
so editing any module a stage imports changes its key, and editing any other module does not."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import generator.analyze.factcache
import generator.index.fingerprint
import generator.markup.doc_html
import generator.pages.index_inputs
import generator.pages.render_markdown
import generator.pages.writer
import generator.site.material.engine
from generator import build as build_module
from generator.build import build
from sourcebook import code_version
from sourcebook.code_version import PACKAGES, import_closure, module_name
from sourcebook.config import load_config
from tests.support.repo_files import DEMO, write_files

ROOT = Path(__file__).resolve().parents[2]
_CACHED = (code_version.stage_version, generator.pages.render_markdown.render_version,
           generator.analyze.factcache.parser_version, generator.pages.index_inputs.code_version,
           generator.index.fingerprint._code_version, generator.pages.writer._module_hash)


def _forget() -> None:
    for function in _CACHED:
        function.cache_clear()


@pytest.fixture
def packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the project's packages the code versions are computed from (BASE), caches cleared."""
    base = tmp_path / "code"
    for package in PACKAGES:
        shutil.copytree(ROOT / package, base / package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(code_version, "BASE", base)
    _forget()
    yield base
    monkeypatch.undo()
    _forget()


def _modules(base: Path) -> dict[str, Path]:
    return {name: path for path in sorted(base.rglob("*.py")) if (name := module_name(path, base))}


def _hooks(base: Path) -> list[str]:
    return [str(base / "generator" / "site" / "hooks" / "mkdocs_hooks.py")]


# each key that generated output is stored under, and the roots whose closure it must follow
KEYS: dict[str, tuple[Callable[[Path], object], tuple[str, ...]]] = {
    "page markdown": (lambda base: generator.pages.render_markdown.render_version(),
                      generator.pages.render_markdown.PAGE_STAGES),
    "facts cache": (lambda base: generator.analyze.factcache.parser_version(),
                    ("generator.analyze.parse", "generator.analyze.factcache")),
    "index memo": (lambda base: generator.pages.index_inputs.code_version(),
                   ("generator.pages.index_inputs", "generator.index.writer", "generator.index.build_cache")),
    "index rows": (lambda base: generator.index.fingerprint._code_version(),
                   ("generator.index.writer", "generator.index.build_cache")),
    "documents": (lambda base: generator.markup.doc_html._code_version(),
                  ("generator.markup.doc_html", "generator.markup.md_html")),
    "site stamp": (lambda base: build_module.site_code_version(),
                   ("generator.site.publish", "generator.site.hooks.mkdocs_hooks")),
    "site engine": (lambda base: generator.site.material.engine._code_digest(_hooks(base)),
                    ("generator.site.material.engine", "generator.site.hooks.mkdocs_hooks")),
    "extractive writer": (lambda base: generator.pages.writer._module_hash(), ("generator.pages.writer",)),
}


def test_closures_hold_the_modules_each_stage_really_imports() -> None:
    pages = import_closure(list(generator.pages.render_markdown.PAGE_STAGES))
    # the module a hand-kept list once missed, and the page layout's other helpers
    for name in ("generator.markup.safe_markdown", "generator.pages.render_markdown",
                 "generator.markup.docstrings",
                 "generator.markup.rst", "generator.pages.name_links", "generator.pages.diagrams",
                 "generator.pages.orientation", "generator.pages.writer"):
        assert name in pages, name
    # the site is its own stage: its code re-renders no Markdown. The LLM writer is a plug-in the build passes
    # in: its drafts are keyed by its id (model and prompt versions) and rendered by the pages' own code
    assert "generator.site.material.engine" not in pages
    assert not {m for m in pages if m.startswith("generator.pages.llm")}
    site = import_closure(["generator.site.publish", "generator.site.hooks.mkdocs_hooks"])
    # the engine runs as `python -m generator.site.material.engine`, raw_blocks as a Markdown extension by
    # name
    assert {"generator.site.material.engine", "generator.site.material.raw_blocks",
            "generator.markup.html_sanitize"} <= set(site)
    index = import_closure(["generator.index.writer"])
    assert {"generator.index.chunks", "generator.index.tokens", "sourcebook.redaction",
            "generator.index.rows", "generator.index.store", "generator.index.table_writes",
            "generator.index.row_workers",
            "generator.index.cache_table", "generator.index.fingerprint"} <= set(index)
    assert all(path.is_file() for path in pages.values())


def test_a_closure_follows_every_way_a_module_is_loaded_and_nothing_else(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "generator/__init__.py": "",
        "generator/stage/__init__.py": "from . import top\n",
        "generator/stage/top.py": (
            "from typing import TYPE_CHECKING\nimport json\nfrom generator.helpers import name\n"
            "from .sibling import thing\nif TYPE_CHECKING:\n    from generator.typing_only import T\n"
            "else:\n    from generator import fallback\n"
            "def later():\n    from ..lazy import deep\n    return 'generator.by_name'\n"),
        "generator/helpers.py": "name = 1\n", "generator/stage/sibling.py": "thing = 2\n",
        "generator/typing_only.py": "", "generator/fallback.py": "", "generator/lazy.py": "deep = 3\n",
        "generator/by_name.py": "", "generator/unrelated.py": "import generator.helpers\n",
        "answer/__init__.py": "", "elsewhere/mod.py": "",
    })
    closure = import_closure(["generator.stage.top"], tmp_path)
    assert sorted(closure) == ["generator", "generator.by_name", "generator.fallback", "generator.helpers",
                               "generator.lazy", "generator.stage", "generator.stage.sibling",
                               "generator.stage.top"]
    assert closure["generator.stage"] == tmp_path / "generator" / "stage" / "__init__.py"
    assert module_name(tmp_path / "generator" / "stage" / "__init__.py", tmp_path) == "generator.stage"
    assert module_name(tmp_path / "elsewhere" / "mod.py", tmp_path) is None
    version = code_version.code_version(["generator.stage.top"], base=tmp_path)
    (tmp_path / "generator" / "typing_only.py").write_text("# never run\n")
    assert code_version.code_version(["generator.stage.top"], base=tmp_path) == version
    (tmp_path / "generator" / "lazy.py").write_text("deep = 4\n")
    assert code_version.code_version(["generator.stage.top"], base=tmp_path) != version


def test_the_line_scan_finds_every_import_a_full_parse_finds() -> None:
    """The fast path (each import line parsed alone) against the whole module's syntax tree, on every
    module of the project: never an import fewer; the odd shapes fall back to the full parse."""
    import ast

    def dumped(nodes: list[ast.Import | ast.ImportFrom]) -> set[str]:
        return {ast.dump(node) for node in nodes}

    modules = code_version.project_modules(ROOT)
    scanned = {name: code_version._import_statements(path.read_bytes()) for name, path in modules.items()}
    for name, path in modules.items():
        full = code_version._import_nodes(ast.parse(path.read_bytes()).body)
        fast = scanned[name]
        if fast is not None:
            assert dumped(full) <= dumped(fast), name
    assert sum(fast is None for fast in scanned.values()) <= len(modules) // 10  # the fast path is the rule
    for odd in (b"x = 1; import generator.a\n", b"if a:\n    if TYPE_CHECKING:\n        import b\n",
                b"from x \\\n    import y\n", b'"""\nfrom a import b, then c\n"""\n'):
        assert code_version._import_statements(odd) is None, odd
    scan = code_version._import_statements(
        b"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import hidden\n\n    import also\n"
        b"else:\n    import shown\ndef f():\n    from .x import (a,\n        b)\n")
    assert scan is not None
    expected = ast.parse("from typing import TYPE_CHECKING\nimport shown\nfrom .x import (a, b)\n")
    assert dumped(scan) == dumped(code_version._import_nodes(expected.body))


@pytest.mark.parametrize("root", sorted({r for _, roots in KEYS.values() for r in roots}))
def test_what_importing_a_stage_loads_is_in_its_closure(root: str) -> None:
    """The static closure against the interpreter: every project module importing the root loads is in it
    (the closure holds more: the lazy imports inside functions)."""
    code = (f"import json, sys; import {root}; "
            f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {PACKAGES!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}).stdout
    loaded = set(json.loads(out))
    assert root in loaded
    assert loaded <= set(import_closure([root])), loaded - set(import_closure([root]))


def test_each_key_changes_with_every_module_of_its_closure_and_no_other(packages: Path) -> None:
    modules = _modules(packages)
    assert len(modules) > 100
    closures = {key: set(import_closure(roots, packages)) for key, (_, roots) in KEYS.items()}
    before = {key: compute(packages) for key, (compute, _) in KEYS.items()}
    for name, path in modules.items():
        original = path.read_bytes()
        path.write_bytes(original + b"\n# an edit\n")
        _forget()
        after = {key: compute(packages) for key, (compute, _) in KEYS.items()}
        for key in KEYS:
            assert (after[key] != before[key]) == (name in closures[key]), (key, name)
        path.write_bytes(original)
    _forget()
    assert {key: compute(packages) for key, (compute, _) in KEYS.items()} == before


def test_the_parser_version_follows_its_queries(packages: Path) -> None:
    before = generator.analyze.factcache.parser_version()
    query = packages / "generator" / "analyze" / "queries" / "python.scm"
    query.write_text(query.read_text() + "\n; an edit\n")
    _forget()
    assert generator.analyze.factcache.parser_version() != before


def test_an_edit_to_safe_markdown_rerenders_every_file_page(packages: Path,
                                                            make_repo: Callable[..., Path]) -> None:
    root = make_repo(DEMO)
    config = load_config(root)
    first = build(config, site=False, index=False)
    files = sorted(p for p in first.pages_written if p.startswith("files/"))
    assert len(files) == len(DEMO)  # every file has a page
    _forget()
    assert build(config, site=False, index=False).pages_written == []  # the same code: nothing to do
    module = packages / "generator" / "site" / "material" / "engine.py"  # outside the pages' closure
    module.write_bytes(module.read_bytes() + b"\n# an edit\n")
    _forget()
    assert build(config, site=False, index=False).pages_written == []
    module = packages / "generator" / "markup" / "safe_markdown.py"
    module.write_bytes(module.read_bytes() + b"\n# an edit\n")
    _forget()
    again = build(config, site=False, index=False)
    assert files == sorted(p for p in again.pages_written if p.startswith("files/"))
