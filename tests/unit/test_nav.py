"""Navigation a reader would design: source first, then docs, tests, examples, tooling; one-child folders
collapsed; every file in the nav (what each page shows of it is capped:
tests/integration/test_light_nav.py)."""

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
    assert _titles(nav) == ["Overview", "root package/", "src/pkg/", "docs/", "Tests", "examples/tutorial/",
                            "Repository and tooling"]
    # the root's own source file is in a folder node whose page is the root's page (it lists the file)
    assert nav[1] == {"root package/": [plan.modules[""], {"cli.py": plan.files["cli.py"]}]}
    src = nav[2]["src/pkg/"]
    assert src[0] == plan.modules["src/pkg"]  # the collapsed folder's page is its section's index
    assert {"sub/": [plan.modules["src/pkg/sub"], {"deep.py": plan.files["src/pkg/sub/deep.py"]}]} in src
    tests = nav[4]["Tests"]
    assert _titles(tests) == ["testing/", "tests/"]
    # all 60 files are in the nav (each page shows its path); generator/site/light_nav.py caps what a page
    # shows
    assert tests[0]["testing/"][0] == plan.modules["testing"]
    assert len(tests[0]["testing/"]) == 61
    tooling = nav[-1]["Repository and tooling"]
    assert _titles(tooling) == [".devcontainer/", ".github/workflows/", "scripts/", "README.md", "setup.py"]
    # without source files at the root, the root's page opens the tooling group
    plain = plan_pages([p for p in PATHS if p != "cli.py"])
    nav = build_nav(modules=plain.modules, files=plain.files, children=plain.children, kinds=kinds)
    assert _titles(nav)[1] == "src/pkg/"
    assert nav[-1]["Repository and tooling"][0] == plain.modules[""]


def test_a_go_root_package_is_a_folder_node_named_for_the_module() -> None:
    paths = ["go.mod", "chi.go", "mux.go", "mux_test.go", "middleware/logger.go", "Makefile", "README.md",
             ".golangci.yml", "_examples/hello/main.go"]
    plan = plan_pages(paths)
    kinds = {"mux_test.go": "test", "README.md": "doc", "go.mod": "config", ".golangci.yml": "config"}
    nav = build_nav(modules=plan.modules, files=plan.files, children=plan.children, kinds=kinds,
                    root_name="chi")
    assert _titles(nav) == ["Overview", "chi/", "middleware/", "Tests", "_examples/hello/",
                            "Repository and tooling"]
    assert nav[1]["chi/"] == [plan.modules[""], {"chi.go": plan.files["chi.go"]},
                              {"mux.go": plan.files["mux.go"]}]
    assert _titles(nav[-1]["Repository and tooling"]) == [".golangci.yml", "Makefile", "README.md", "go.mod"]


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
