"""Navigation a reader would design: source first, then docs, tests, examples, tooling; one-child folders
collapsed; every file in the nav (what each page shows of it is capped: tests/test_light_nav.py)."""

from __future__ import annotations

from generator.analyze.groups import dir_group, file_group
from generator.analyze.plan import plan_pages
from generator.site.nav import build_nav

PATHS = [
    ".github/workflows/ci.yml", ".devcontainer/setup.sh", "src/pkg/__init__.py", "src/pkg/app.py",
    "src/pkg/sub/deep.py", "docs/index.md", "docs/api.rst", "tests/test_app.py", "tests/conftest.py",
    "examples/tutorial/app.py", "scripts/release.py", "setup.py", "README.md", "cli.py",
    *[f"testing/case_{i:03}.py" for i in range(60)],
]


def _titles(items: list) -> list[str]:  # type: ignore[type-arg]
    return [next(iter(i)) if isinstance(i, dict) else i for i in items]


def test_source_first_tooling_last_and_collapsed() -> None:
    plan = plan_pages(PATHS)
    kinds = {p: ("test" if p.startswith(("tests/", "testing/")) else "code") for p in PATHS}
    kinds.update({"README.md": "doc", "docs/index.md": "doc", "docs/api.rst": "doc"})
    nav = build_nav(modules=plan.modules, files=plan.files, children=plan.children, kinds=kinds)
    assert _titles(nav) == ["Overview", "src/pkg/", "cli.py", "docs/", "Tests", "examples/tutorial/",
                            "Repository and tooling"]
    src = nav[1]["src/pkg/"]
    assert src[0] == plan.modules["src/pkg"]  # the collapsed folder's page is its section's index
    assert {"sub/": [plan.modules["src/pkg/sub"], {"deep.py": plan.files["src/pkg/sub/deep.py"]}]} in src
    tests = nav[4]["Tests"]
    assert _titles(tests) == ["testing/", "tests/"]
    # all 60 files are in the nav (each page shows its path); generator/site/light_nav.py caps what a page
    # shows
    assert tests[0]["testing/"][0] == plan.modules["testing"]
    assert len(tests[0]["testing/"]) == 61
    tooling = nav[-1]["Repository and tooling"]
    assert tooling[0] == plan.modules[""]
    assert _titles(tooling[1:]) == [".devcontainer/", ".github/workflows/", "scripts/", "README.md",
                                    "setup.py"]


def test_groups_by_name_and_kind() -> None:
    assert dir_group("src") == "source"
    assert dir_group("flask") == "source"
    assert dir_group(".github") == "tooling"
    assert dir_group("doc") == "docs"
    assert dir_group("testing") == "tests"
    assert dir_group("bench") == "examples"
    assert file_group("setup.py") == "tooling"
    assert file_group("pyproject.toml", "config") == "tooling"
    assert file_group("CHANGES.rst", "doc") == "tooling"
    assert file_group("LICENSE") == "tooling"
    assert file_group("main.go") == "source"
