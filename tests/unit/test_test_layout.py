"""The test suite's own layout: every test file in a tier folder, helpers only in tests/support/, and the unit
tier free of what makes a test slow.

A test file importing another one runs that file's module-level setup and couples two files nobody reads
together; a helper two files need belongs in tests/support/. The unit tier is what `make test-fast` runs:
a file there that starts a server, opens LanceDB or needs a real repository or chromium belongs in
tests/integration or tests/e2e.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
TIERS = ("unit", "integration", "e2e")
# what a unit test may not import (servers, LanceDB, real repositories, the browser) ...
SLOW_IMPORTS = ("lancedb", "lance", "tests.support.fake_llm", "tests.support.object_store",
                "tests.support.servers", "tests.support.browser", "tests.support.real_repos",
                "answer.serving.http_api", "answer.serving.mcp_server", "generator.site.publish",
                "generator.index.store")
# ... nor ask for as a fixture (tests/conftest.py)
SLOW_FIXTURES = {"fake_llm", "moto_s3", "s3_env", "flask_repo", "requests_repo", "flask_wiki", "browser"}


def _imports(source: str, package: str) -> Iterator[tuple[int, str]]:
    """(line, module) for every import in `source`, a module of `package`, inside functions too: the module
    and each name imported from it (it may be a module), relative imports resolved."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            yield node.lineno, base
            yield from ((node.lineno, f"{base}.{alias.name}") for alias in node.names)


def _file_imports(path: Path) -> Iterator[tuple[int, str]]:
    return _imports(path.read_text(encoding="utf-8"), ".".join(path.relative_to(ROOT).parent.parts))


def _is_test_module(module: str) -> bool:
    last = module.rsplit(".", 1)[-1]
    return module.startswith("tests.") and (last.startswith("test_") or last == "conftest")


def test_no_file_imports_a_test_file() -> None:
    offenders = [f"{path.relative_to(ROOT)}:{line} imports {module}"
                 for folder in ("tests", "bench") for path in sorted((ROOT / folder).rglob("*.py"))
                 if "fixtures" not in path.relative_to(ROOT).parts
                 for line, module in _file_imports(path) if _is_test_module(module)]
    assert not offenders, ("move what is shared into tests/support/:\n" + "\n".join(offenders))


def test_every_test_file_is_in_a_tier_folder() -> None:
    stray = sorted(str(path.relative_to(ROOT)) for path in TESTS.rglob("test_*.py")
                   if "fixtures" not in path.parts
                   and (path.parent.parent != TESTS or path.parent.name not in TIERS))
    assert not stray, "put each test file in tests/unit, tests/integration or tests/e2e:\n" + "\n".join(stray)


def test_the_unit_tier_starts_no_server_and_opens_no_index() -> None:
    offenders = []
    for path in sorted((TESTS / "unit").glob("test_*.py")):
        for line, module in _file_imports(path):
            if any(module == slow or module.startswith(slow + ".") for slow in SLOW_IMPORTS):
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                offenders += [f"{path.relative_to(ROOT)}:{node.lineno} {node.name} uses the {arg.arg} fixture"
                              for arg in node.args.args if arg.arg in SLOW_FIXTURES]
    assert not offenders, ("tests/unit is `make test-fast`: move these files to tests/integration or "
                           "tests/e2e:\n" + "\n".join(offenders))


def test_the_checks_see_what_they_check() -> None:
    """Relative imports are resolved and imports inside functions found; support modules are not tests."""
    code = ("from tests.support.repo_files import write_files\n"
            "def f():\n    from .test_other import x\n    from . import conftest\n    import lancedb\n")
    found = [module for _, module in _imports(code, "tests.unit")]
    assert {m for m in found if _is_test_module(m)} == {"tests.unit.test_other", "tests.unit.conftest"}
    assert "lancedb" in found
    assert not _is_test_module("tests.support.repo_files")
    assert not _is_test_module("bench.test_like")


def test_test_file_names_are_unique_across_tiers() -> None:
    # the tiers are folders without __init__.py, so pytest imports each test file under its bare name: two
    # tiers' files of one name stop the whole suite's collection ("import file mismatch")
    seen: dict[str, list[str]] = {}
    for tier in TIERS:
        for path in sorted((TESTS / tier).rglob("test_*.py")):
            seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"rename one of each: {clashes}"
