"""Folder pages, through a real build: the repository root's page is named for the project and lists its
package's sources apart from its papers and config; every folder table gives a file one line (its summary's
first sentence, never raw markup); the fallback import diagram is capped like every other diagram."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.build import build
from generator.pages.render_markdown import render_module_page
from generator.pages.writer import ExtractiveWriter, ModuleContext, PageLink
from sourcebook.config import load_config

pytestmark = pytest.mark.slow

GO_REPO = {
    "go.mod": "module github.com/example/chi\n\ngo 1.22\n",
    "chi.go": ("// Package chi is a small router for building HTTP services. It is built on the context\n"
               "// package, with `Mux.Route` and friends. See the README for more.\npackage chi\n\n"
               "// NewRouter returns a new Mux.\nfunc NewRouter() *Mux { return NewMux() }\n"),
    "mux.go": "package chi\n\n// Mux is a router.\ntype Mux struct{}\n\n// NewMux makes a Mux.\n"
              "func NewMux() *Mux { return &Mux{} }\n",
    "mux_test.go": "package chi\n\nimport \"testing\"\n\nfunc TestMux(t *testing.T) { NewMux() }\n",
    "Makefile": "all:\n\tgo test ./...\n",
    ".golangci.yml": "linters:\n  enable: [gofmt]\n",
    "CHANGELOG.md": ("# Changelog\n\nchi dates back to 2016 with its original implementation. It was one "
                     "of the first routers to adopt `context.Context`. Many releases followed, "
                     "e.g. v5 in 2021.\n\n"
                     "## v5.0.0\n\n- a fix. Another.\n"),
    "README.md": "# chi\n\nA router. Small and composable.\n",
    "middleware/logger.go": "// Package middleware holds handlers.\npackage middleware\n\n"
                            "// Logger logs.\nfunc Logger() {}\n",
    "_examples/README.md": "# chi examples\n\n* [hello](hello/) - Hello world\n* [rest](rest/) - REST\n",
    "_examples/hello/main.go": "package main\n\nfunc main() {}\n",
}


def _table(page: str, heading: str) -> list[tuple[str, str]]:
    """(file, summary cell) rows of the table under `## heading`."""
    body = page.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| \[([^\]]+)\]\([^)]*\) \| (.*) \|$", body, re.M)


def test_a_go_root_package_page_is_named_for_the_module_and_lists_sources_first(
        make_repo: Callable[..., Path]) -> None:
    root = make_repo(GO_REPO, name="checkout")  # the folder's name is not the project's
    config = load_config(root)
    report = build(config, index=False)
    assert report.site_dir is not None
    page = (config.docs_dir / "modules/index.md").read_text(encoding="utf-8")
    assert re.search(r"^# chi/$", page, re.M), page[:600]  # was "# (repository root)"
    assert "repository root" not in page
    assert "`chi/` contains 7 files and 2 submodules." in page  # was "`./` contains"
    headings = re.findall(r"^## (.+)$", page, re.M)
    tables = [h for h in headings if h in {"Files", "Source files", "Tests", "Repository and tooling"}]
    assert tables == ["Source files", "Tests", "Repository and tooling"]
    assert [f for f, _ in _table(page, "Source files")] == ["chi.go", "mux.go"]
    assert [f for f, _ in _table(page, "Tests")] == ["mux&#95;test.go"]
    assert {f for f, _ in _table(page, "Repository and tooling")} == {
        "CHANGELOG.md", "Makefile", "README.md", ".golangci.yml"}
    # one line each: the summary's first sentence ("e.g. v5" ends none), its code spans whole
    cells = dict(_table(page, "Source files")) | dict(_table(page, "Repository and tooling"))
    assert cells["chi.go"] == "Package chi is a small router for building HTTP services."
    assert cells["CHANGELOG.md"] == "chi dates back to 2016 with its original implementation."
    # a subfolder's "Up" link and the HTML page's title say the same name
    sub = (config.docs_dir / "modules/middleware/index.md").read_text(encoding="utf-8")
    assert "Up: [chi/](../index.md)" in sub
    html = (report.site_dir / "modules/index.html").read_text(encoding="utf-8")
    assert "<title>chi/ - chi</title>" in html or "<title>chi/ -" in html
    # a folder page's list-opening README never shows its list marks; every cell is one sentence
    examples = (config.docs_dir / "modules/_examples/index.md").read_text(encoding="utf-8")
    for _, cell in _table(examples, "Files"):
        assert not re.search(r"(?:^|\s)[*-]\s", cell), cell
        assert len(re.findall(r"[.!?](?:\s|$)", cell)) <= 1, cell
    # a submodule's row keeps its whole summary (its entry points follow the bland file count)
    for _, cell in _table(page, "Submodules"):
        assert not re.search(r"(?:^|\s)[*-]\s", cell), cell


def test_a_root_without_sources_is_the_projects_repository_root(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"pyproject.toml": '[project]\nname = "shapes"\nversion = "1"\n',
                      "README.md": "# Shapes\n\nShapes draws shapes.\n",
                      "shapes/__init__.py": '"""Shapes."""\n',
                      "shapes/circle.py": "def area():\n    return 1\n"},
                     name="checkout")
    config = load_config(root)
    assert build(config, index=False).site_dir is not None
    page = (config.docs_dir / "modules/index.md").read_text(encoding="utf-8")
    assert re.search(r"^# shapes \(repository root\)$", page, re.M), page[:400]
    assert "\n## Repository and tooling\n" in page
    assert "\n## Source files\n" not in page
    assert "\n## Files\n" in (config.docs_dir / "modules/shapes/index.md").read_text(encoding="utf-8")


def test_the_fallback_import_diagram_draws_at_most_25_boxes() -> None:
    files = tuple(PageLink(f"pkg/m{k:02}.py", f"files/pkg/m{k:02}.py.md", f"m{k:02}.py") for k in range(40))
    # every file imports the hub, and the first ten import each other's neighbour too: 40 files, 6 packages
    internal = tuple((f.path, "pkg/m00.py") for f in files[1:]) + tuple(
        (files[k].path, files[k + 1].path) for k in range(1, 10))
    external = tuple((files[k].path, f"other{k}") for k in range(6))
    ctx = ModuleContext(path="pkg", page_id="modules/pkg/index.md", title="pkg/", files=files,
                        internal_edges=internal, external_edges=external)
    md = render_module_page(ctx, ExtractiveWriter().module_page(ctx), writer_id="extractive/1")
    diagram = md.split("```mermaid\n", 1)[1].split("```", 1)[0]
    nodes = re.findall(r"^\s+(n\d+)\[", diagram, re.M)
    assert 0 < len(nodes) <= 25
    assert 'n0["m00.py"]' in diagram or '"m00.py"' in diagram  # the hub, the most connected, is kept
    hidden = 46 - len(nodes)  # 40 files and 6 other packages, less those drawn
    assert f"For readability, {hidden} less connected files or packages not shown" in md


def test_a_folder_table_cell_is_its_summarys_first_sentence_never_cut_in_code_or_a_link() -> None:
    summaries = {
        "a.py": "Calls `os.path. Join` on paths. It defines 2 functions.",  # a span holding ". J"
        "b.py": "See [the guide. It helps](guide.md) first. Then more.",  # a link holding ". I"
        "c.py": "* **Bold** lead item\n* second item",  # a list: no marks, no raw emphasis
        "d.md": "Works, e.g. With Flask. Second sentence.",  # an abbreviation ends no sentence
    }
    files = tuple(PageLink(f"pkg/{name}", f"files/pkg/{name}.md", name, text)
                  for name, text in summaries.items())
    ctx = ModuleContext(path="pkg", page_id="modules/pkg/index.md", title="pkg/", files=files,
                        submodules=(PageLink("pkg/sub", "modules/pkg/sub/index.md", "pkg/sub/",
                                             "Sub things live here. `pkg/sub/` contains 3 files."),))
    md = render_module_page(ctx, ExtractiveWriter().module_page(ctx), writer_id="extractive/1")
    cells = dict(_table(md, "Files"))
    assert cells["a.py"] == "Calls <code>os.path. Join</code> on paths."
    assert cells["b.py"] == "See the guide. It helps first."
    assert cells["c.py"] == "Bold lead item"
    assert cells["d.md"] == "Works, e.g. With Flask."
    assert dict(_table(md, "Submodules"))["pkg/sub/"] == (
        "Sub things live here. <code>pkg/sub/</code> contains 3 files.")


def test_a_short_file_without_symbols_shows_all_of_itself_escaped_and_redacted(
        make_repo: Callable[..., Path]) -> None:
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token's shape
    cargo_toml = '[package]\nname = "walk"\nversion = "1.0.0"\n# <script>alert(1)</script>\n'
    root = make_repo({"Cargo.toml": cargo_toml,
                      "deploy.toml": f'[github]\ntoken = "{key}"\n',
                      "big.cfg": "".join(f"option_{n} = {n}\n" for n in range(500)),
                      "walk/lib.py": "def go():\n    return 1\n"})
    config = load_config(root)
    site = build(config, index=False).site_dir
    assert site is not None
    cargo = (site / "files/Cargo.toml.html").read_text(encoding="utf-8")
    assert "Source (lines 1-4)" in cargo
    assert "walk" in cargo
    assert "<script>alert" not in cargo  # the file's text is shown as code, escaped
    deploy = (config.docs_dir / "files/deploy.toml.md").read_text(encoding="utf-8")
    assert "## Source" in deploy
    assert key not in deploy  # a committed token never reaches the site
    assert key not in (site / "files/deploy.toml.html").read_text(encoding="utf-8")
    big = (config.docs_dir / "files/big.cfg.md").read_text(encoding="utf-8")
    assert "## Source" not in big  # a long one is not a page of code: its forge link has it
    assert "## Source\n" not in (config.docs_dir / "files/walk/lib.py.md").read_text(encoding="utf-8")


def test_an_empty_package_marker_says_so_and_links_its_folder(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"pkg/__init__.py": "", "pkg/sub/__init__.py": "\n\n",
                      "pkg/sub/mod.py": '"""Does things."""\n\ndef run():\n    return 1\n'})
    config = load_config(root)
    assert build(config, index=False).site_dir is not None
    page = (config.docs_dir / "files/pkg/sub/__init__.py.md").read_text(encoding="utf-8")
    assert "The file is empty: it makes [pkg/sub/](../../../modules/pkg/sub/index.md) a Python" in page
    module = (config.docs_dir / "files/pkg/sub/mod.py.md").read_text(encoding="utf-8")
    assert "The file is empty" not in module
