"""The overview that orients: entry points from manifests and code, most-used abstractions, a capped and
clickable architecture diagram, class hierarchies, escaped labels; built for real with mkdocs --strict."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from generator.analyze.entry_points import find_entry_points
from generator.analyze.facts import FileFacts, SourceFile, Symbol
from generator.build import build
from generator.pages.diagrams import NATURAL_SIZE, architecture, base_names, cap_edges, mermaid_label
from generator.pages.orientation import readme_intro
from sourcebook.config import load_config


def _facts(path: str, *names: str, kind: str = "code") -> FileFacts:
    return FileFacts(file=SourceFile(path, "python", 1, "x", kind),  # type: ignore[arg-type]
                     symbols=[Symbol(n, n, "function", path, 1, 2, f"def {n}()") for n in names])


def test_entry_points_from_manifests_and_code() -> None:
    facts = {p: _facts(p, *names) for p, names in {
        "src/tool/cli.py": ("main",), "src/tool/__main__.py": (), "web/bin/run.js": (),
        "crates/x/src/main.rs": ("main",), "cmd/server/main.go": ("main",),
        "tests/test_x.py": ("main",)}.items()}
    manifests = {
        "pyproject.toml": '[project]\nname = "tool"\n[project.scripts]\ntool = "tool.cli:main"\n'
                          'gone = "tool.nowhere:main"\n',
        "web/package.json": json.dumps({"name": "web", "bin": {"webrun": "./bin/run.js"}}),
        "crates/x/Cargo.toml": '[package]\nname = "xtool"\n',
        "setup.cfg": "[options.entry_points\nbroken",  # does not parse: no entries, no error
    }
    entries = {(e.name, e.how, e.path, e.qualname) for e in find_entry_points(manifests, facts)}
    assert ("tool", "console script (pyproject.toml)", "src/tool/cli.py", "main") in entries
    assert ("python -m tool", "__main__.py", "src/tool/__main__.py", "") in entries
    assert ("webrun", "bin in package.json", "web/bin/run.js", "") in entries
    assert ("xtool", "binary crate (src/main.rs)", "crates/x/src/main.rs", "main") in entries
    assert ("cmd/server", "main() under cmd/", "cmd/server/main.go", "main") in entries
    assert not any(e[0] == "gone" for e in entries)  # a script whose module is not in the repository


CLICK = '''import click


class ToolGroup(click.Group):
    def __init__(self, **extra):
        super().__init__(**extra)
        self.add_command(run_command)
        self.add_command(ep.load(), ep.name)


@click.command("run", short_help="Run it.")
def run_command():
    pass


@click.command()
def show_routes_command():
    pass


cli = ToolGroup(
    name="tool",
    help="The tool.",
)
cli.add_command(show_routes_command)


@click.group()
def db():
    """Database commands."""


@db.command()
@click.option("--force")
def init_db(force):
    pass


@db.command("drop")
def drop_everything():
    pass
'''
TYPER = "import typer\n\napp = typer.Typer()\n\n\n@app.command()\ndef hello(name: str):\n    pass\n"
ARGPARSE = ("import argparse\n\n\ndef main():\n    parser = argparse.ArgumentParser(prog='mk')\n"
            "    sub = parser.add_subparsers()\n    sub.add_parser('build')\n    sub.add_parser('clean')\n")


def test_command_line_groups_are_entry_points() -> None:
    from generator.analyze.entry_points import cli_sources
    from generator.analyze.parse import extract

    files = {"src/tool/cli.py": CLICK, "src/tool/app.py": TYPER, "src/tool/make.py": ARGPARSE,
             "tests/test_cli.py": TYPER, "src/tool/plain.py": "def f():\n    pass\n"}
    facts = {p: extract(SourceFile(p, "python", len(t), "x", "test" if p.startswith("tests/") else "code"),
                        t.encode()) for p, t in files.items()}
    assert cli_sources(facts) == ["src/tool/app.py", "src/tool/cli.py", "src/tool/make.py"]
    entries = {(e.name, e.how, e.path, e.qualname) for e in find_entry_points({}, facts, sources=files)}
    assert entries == {
        # a Group subclass instantiated with name=: the commands its __init__ adds, then those added to it
        ("tool", "click command group: run, show-routes", "src/tool/cli.py", ""),
        ("db", "click command group: init-db, drop", "src/tool/cli.py", "db"),
        ("app", "typer command group: hello", "src/tool/app.py", ""),
        ("mk", "argparse sub-commands: build, clean", "src/tool/make.py", "main"),
    }  # nothing from tests/: a test's Typer app is nobody's entry point


def test_many_option_lines_with_parentheses_do_not_stall_the_command_scan() -> None:
    # The shape of a real CLI module (sourcebook/cli/build.py) that made the earlier one-regex
    # scan backtrack without end: many continuation lines each holding several ')', then one holding none.
    from generator.analyze.entry_points import cli_groups
    from generator.analyze.parse import extract

    option = '@click.option("--o{}", type=click.IntRange(0, 9),\n              help="a (b) c (d)")\n'
    options = "".join(option.format(i) for i in range(30))
    text = ("import click\n\n\n@click.group()\ndef cli():\n    pass\n\n\n@cli.command(\"build\")\n"
            f"{options}@click.option(\"--mail\",\n              help=\"who \"\n              \"is\")\n"
            "def build_command(**kw):\n    pass\n\n\n@cli.command()\n@click.argument(\"x\")\n"
            "async def check_cmd(x):\n    pass\n")
    facts = extract(SourceFile("src/t/cli.py", "python", len(text), "x", "code"), text.encode())
    assert [(e.name, e.how) for e in cli_groups("src/t/cli.py", text, facts)] == [
        ("cli", "click command group: build, check")]


def test_readme_intro_drops_title_badges_and_rest_images() -> None:
    rst = ("======\npytest\n======\n\n.. image:: https://x/logo.svg\n   :target: https://x\n"
           "   :align: center\n\n[![ci](https://b/ci.svg)](https://ci)\n\nThe pytest framework.\n\n"
           "Features\n--------\n\n- a\n")
    assert readme_intro(rst) == "The pytest framework."
    assert readme_intro("# T\n\nOne.\n\n## Two\n\nNo.") == "One."


def test_labels_stay_literal_and_edges_are_capped() -> None:
    assert mermaid_label("__init__.py") == '"#95;#95;init#95;#95;.py"'
    assert mermaid_label('a"<b>') == '"a#quot;#lt;b#gt;"'
    edges = {(f"a{i}", f"b{i % 7}"): 1 + (i % 3) for i in range(100)}
    kept, cut = cap_edges(edges, 60)
    assert len(kept) == 60
    assert cut == 40
    assert all(edges[e] >= 2 for e in kept)  # the strongest first
    assert base_names("class Flask(App, metaclass=M):", "python") == ["App"]
    assert base_names("class A extends B implements C, D<E> {", "typescript") == ["B", "C", "D"]


def test_architecture_is_at_most_25_clustered_clickable_nodes() -> None:
    modules = {d: f"modules/{d}/index.md" for d in [f"pkg/m{i}" for i in range(40)] + ["pkg"]}
    depends = {f"pkg/m{i}/f.py": [f"pkg/m{(i + 1) % 40}/f.py", "pkg/core.py"] for i in range(40)}
    depends["pkg/core.py"] = []
    importance = {d: 1.0 / (1 + int(d[5:] or 0)) if d != "pkg" else 2.0 for d in modules}
    graph = architecture(modules, depends, importance, lambda p: p.rsplit("/", 1)[0], "index.md")
    assert graph is not None
    text = graph.mermaid()
    assert len(graph.nodes) <= 25
    assert "smaller packages not shown" in graph.left_out
    assert 'subgraph c1["pkg"]' in text or 'subgraph c0["pkg"]' in text
    assert re.search(r'click p\d+ href "modules/pkg/m0/index.html"', text)


REPO: dict[str, str | bytes] = {
    "README.md": "# Shapes\n\nShapes draws shapes.\n\n## Install\n\npip install shapes\n",
    "pyproject.toml": '[project]\nname = "shapes"\n[project.scripts]\nshapes = "shapes.cli:main"\n',
    "shapes/__init__.py": "from .base import Shape\n",
    "shapes/base.py": 'class Shape:\n    """A shape."""\n\n    def area(self):\n        return 0\n',
    "shapes/circle.py": ("from .base import Shape\n\n\nclass Circle(Shape):\n    def area(self):\n"
                         "        return 3\n"),
    "shapes/square.py": "from .base import Shape\n\n\nclass Square(Shape):\n    pass\n",
    "shapes/cli.py": "from .circle import Circle\n\n\ndef main():\n    print(Circle().area())\n",
    "shapes/__main__.py": "from .cli import main\n\nmain()\n",
}


def test_overview_and_module_pages_orient(make_repo: Callable[..., Path]) -> None:
    root = make_repo(REPO)
    config = load_config(root)
    report = build(config, index=False)  # mkdocs build --strict
    assert report.site_dir is not None
    home = (config.docs_dir / "index.md").read_text(encoding="utf-8")
    intro = home.split("## What it is\n")[1].split("\n## ")[0]
    assert "Shapes draws shapes." in intro
    assert "pip install" not in intro
    assert ("- `shapes` — console script (pyproject.toml): "
            "[shapes/cli.py: main](files/shapes/cli.py.md#sym-main)") in home
    # `Shape`, re-exported by `__init__`, under the name users import it by; once on the page: the most-used
    # abstractions do not list it again
    assert "| [<code>shapes.Shape</code>](files/shapes/base.py.md#sym-shape) | class | A shape. |" in home
    assert "(class in `shapes/base.py`, used from 2 files)" not in home
    start = home.split("## Where to start reading\n\n")[1].split("\n## ")[0]
    # the public API (`Shape`, re-exported by `__init__`) first, then the console script's file; the
    # three-line `__main__.py` is read through the file it runs, which is already listed
    assert re.findall(r"^\d+\. \[([^\]]+)\]", start, re.M)[:2] == ["shapes/base.py", "shapes/cli.py"]
    assert "shapes/&#95;&#95;main&#95;&#95;.py" not in start
    module = (config.docs_dir / "modules/shapes/index.md").read_text(encoding="utf-8")
    hierarchy = module.split("## Class hierarchy")[1].split("```mermaid\n")[1].split("```")[0]
    assert hierarchy.startswith(NATURAL_SIZE + "\ngraph BT")  # drawn full size, not shrunk to fit
    assert re.search(r'click k\d+ href "../../files/shapes/base.py.html#sym-shape"', hierarchy)
    assert len(re.findall(r"k\d+ --> k\d+", hierarchy)) == 2  # Circle -> Shape, Square -> Shape
    assert re.search(r'click n\d+ href "../../files/shapes/circle.py.html"', module)  # clickable import graph
    assert "#95;#95;init#95;#95;.py" in module  # `__init__.py` stays itself in the diagram


def test_diagram_page_url_is_the_anchors_link_as_html() -> None:
    from generator.pages.diagrams import page_url

    assert page_url("files/pkg/a b#c.py.md", "modules/pkg.md") == "../files/pkg/a%20b%23c.py.html"
    assert page_url("modules/pkg.md", "index.md") == "modules/pkg.html"


def test_a_big_package_import_diagram_is_capped_and_clustered() -> None:
    from generator.pages.diagrams import module_imports

    files = [f"big/m{i:02d}.py" for i in range(40)]
    # every file imports the next three, the subpackage and, for a few, two outside packages
    depends_on = {f: [files[(i + k) % 40] for k in (1, 2, 3)] + ["big/sub/deep/x.py"]
                  + (["lib/a/y.py", "other/z.py"] if i % 5 == 0 else []) for i, f in enumerate(files)}
    depends_on["big/sub/deep/x.py"] = ["big/m00.py"]
    depends_on.update({f"ext{i}/q.py": [] for i in range(12)})
    for i in range(12):  # twelve more outside packages, each imported once
        depends_on[files[i]].append(f"ext{i}/q.py")
    pages = {p: f"files/{p}.md" for p in depends_on}
    modules = {d: f"modules/{d}/index.md" for d in ("big", "big/sub", "lib/a", "other")}
    g = module_imports("big", files=files, subdirs=["big/sub"], depends_on=depends_on, pages=pages,
                       modules=modules, from_page="modules/big/index.md")
    assert g is not None
    assert len(g.nodes) <= 25
    assert len(g.edges) <= 60
    outside = [n for n in g.nodes if n[3].startswith("elsewhere")]
    assert 0 < len(outside) <= 8
    assert ("sub/" in [n[1] for n in g.nodes if n[3] == "subpackages"])  # its files folded into one box
    assert "not shown" in g.left_out
    assert "weaker import arrows left out" in g.left_out
    text = g.mermaid()
    assert 'subgraph c1["elsewhere: lib/"]' in text or '"elsewhere: lib/"' in text
    assert 'href "../../files/big/m00.py.html"' in text  # boxes link to their pages
    assert module_imports("big", files=["big/a.py"], subdirs=[], depends_on={"big/a.py": []}, pages=pages,
                          modules=modules, from_page="modules/big/index.md") is None


# A src-layout library shaped like requests: a title-underlined docstring on every module, an ASCII-art
# banner, an `__init__` re-exporting its API, a thin API module calling a session calling models
LIBRARY: dict[str, str | bytes] = {
    "README.md": "# Pkg\n\nPkg fetches things.\n",
    "pyproject.toml": '[project]\nname = "pkg"\n',
    ".github/workflows/ci.yml": "on: push\njobs: {}\n",
    "ext/LICENSE": "Logos: all rights reserved.\n",
    ".github/tool.py": "import os\n\n\ndef tool():\n    return os.sep\n",
    "docs/index.md": "# Docs\n\nHow to use pkg.\n",
    "tests/test_api.py": ("from pkg.api import get\nfrom pkg.utils import helper\n\n\n"
                          "def test_get():\n    assert get('x') and helper()\n"),
    "src/pkg/__init__.py": ('"""\nPkg HTTP Library\n~~~~~~~~~~~~~~~~\n\nPkg is a library for humans.\n'
                            'Basic usage:\n\n   >>> import pkg\n"""\n\nfrom . import utils\n'
                            "from .__version__ import __version__\nfrom .api import get\n"
                            "from .models import Response\nfrom .sessions import Session\n"),
    "src/pkg/__version__.py": "# .-. .-. .-.\n# |(  |-  |.|\n\n__version__ = '1.0'\n",
    "src/pkg/api.py": ('"""\npkg.api\n=======\n\nThis module implements the API.\n"""\n\n'
                       "from .sessions import Session\n\n\ndef get(url):\n"
                       '    """Send a GET request."""\n    return Session().request(url)\n'),
    "src/pkg/sessions.py": ('"""\npkg.sessions\n~~~~~~~~~~~~\n\nThis module provides a Session object.\n'
                            '"""\n\n'
                            "from .models import Response\nfrom .structures import CaseDict\n"
                            "from .utils import helper\n\n\nclass Session:\n"
                            '    """A session."""\n\n    def request(self, url):\n'
                            "        helper()\n        return Response(CaseDict())\n"),
    "src/pkg/models.py": ('"""\npkg.models\n~~~~~~~~~~\n\nThe primary objects.\n"""\n\n'
                          "from .structures import CaseDict\nfrom .utils import helper\n\n\n"
                          "class Response:\n    def __init__(self, headers):\n"
                          "        self.headers = CaseDict()\n        helper()\n"),
    "src/pkg/structures.py": ('"""\npkg.structures\n~~~~~~~~~~~~~~\n\nData structures that power pkg.\n'
                              '"""\n\n\n'
                              "class CaseDict(dict):\n"
                              '    """A case-insensitive dict."""\n'),
    "src/pkg/utils.py": ('"""\npkg.utils\n~~~~~~~~~\n\nUtilities.\n"""\n\n'
                         "from .structures import CaseDict\n\n\n"
                         "def helper():\n    return CaseDict()\n"),
}


def test_home_page_of_a_small_library_orients(make_repo: Callable[..., Path]) -> None:
    root = make_repo(LIBRARY)
    config = load_config(root)
    report = build(config, index=False)  # mkdocs build --strict
    assert report.site_dir is not None
    home = (config.docs_dir / "index.md").read_text(encoding="utf-8")

    def section(title: str) -> str:
        return home.split(f"## {title}\n")[1].split("\n## ")[0]

    # 1. `src/` (no files, one child) is its child; tooling is not a module to know; source before tests/docs
    modules = re.findall(r"^\| \[([^\]]+)\]\(", section("Most important modules"), re.M)
    assert modules[0] == "src/pkg/"
    assert "src/" not in modules
    assert not any(m.startswith((".github", "ext")) for m in modules)  # tooling; a folder of no code
    assert set(modules[1:]) == {"docs/", "tests/"}
    files = re.findall(r"^\| \[([^\]]+)\]\(", section("Most important files"), re.M)
    assert all(f.startswith("src/pkg/") for f in files[:7])  # its 7 files, then the rest
    assert not any(f.startswith("src/pkg/") for f in files[7:])
    # 2. module docstrings describe by their first sentence, never by a title and its underline
    assert "~~~" not in home
    assert "===" not in home
    assert ".-." not in home
    assert "Data structures that power pkg." in home
    assert ("| [src/pkg/](modules/src/pkg/index.md) | Pkg is a library for humans. <code>src/pkg/</code> "
            "contains") in home  # the `__init__` docstring, without its lead-in to the example
    file_page = (config.docs_dir / "files/src/pkg/sessions.py.md").read_text(encoding="utf-8")
    assert "This module provides a Session object." in file_page.split("\n## ")[0]
    # 3. one package: drawn file by file, clickable, `__init__` literal
    arch = section("Architecture")
    assert arch.startswith("\nThe main package file by file")
    diagram = arch.split("```mermaid\n")[1].split("```")[0]
    assert re.search(r'click f\d+ href "files/src/pkg/sessions.py.html"', diagram)
    assert '["#95;#95;init#95;#95;.py"]' in diagram
    assert '["__init__' not in diagram
    names = dict(re.findall(r'(f\d+)\["([^"]+)"\]', diagram))
    edges = {(names[a], names[b]) for a, b in re.findall(r"(f\d+) --> (f\d+)", diagram)}
    assert ("api.py", "sessions.py") in edges
    assert ("sessions.py", "models.py") in edges
    assert not any("tool.py" in n or "test" in n for n in names.values())
    # 4. reading starts at the API surface, callers before what they call, then the abstractions
    start = re.findall(r"^\d+\. \[([^\]]+)\]", section("Where to start reading"), re.M)
    assert start[:3] == ["src/pkg/api.py", "src/pkg/sessions.py", "src/pkg/models.py"]
    assert "src/pkg/structures.py" in start[3:]
    assert "public API" in section("Where to start reading").split("\n\n")[0]
    html = (report.site_dir / "index.html").read_text(encoding="utf-8")
    assert "files/src/pkg/api.py.html" in html
    assert "~~~" not in html


def test_big_package_graphs_stay_at_package_level() -> None:
    from generator.pages.diagrams import file_architecture

    files = [f"pkg/m{i:02d}.py" for i in range(40)]
    depends_on = {f: [files[(i + k) % 40] for k in (1, 2, 5)] for i, f in enumerate(files)}
    g = file_architecture(files, depends_on, {f: f"files/{f}.md" for f in files}, "index.md")
    assert g is not None
    assert len(g.nodes) == 25
    assert len(g.edges) <= 60
    assert "15 less connected files not shown" in g.left_out
    assert file_architecture(files[:3], {}, {}, "index.md") is None  # no imports: nothing to draw


def test_container_folders_rank_below_the_packages_they_hold() -> None:
    from generator.pages.orientation import orientation_folders

    # pytest's shape: src/ holds a one-file shim and two packages; docs live in doc/en/ (doc/ passes through)
    children: dict[str, tuple[list[str], list[str]]] = {
        "": (["README.md"], ["src", "doc", "testing", ".github"]),
        "src": (["src/py.py"], ["src/_pytest", "src/pytest"]),
        "src/_pytest": ([f"src/_pytest/m{i}.py" for i in range(9)], ["src/_pytest/config"]),
        "src/_pytest/config": (["src/_pytest/config/__init__.py"], []),
        "src/pytest": (["src/pytest/__init__.py"], []),
        "doc": ([], ["doc/en"]), "doc/en": (["doc/en/index.rst"], ["doc/en/announce"]),
        "doc/en/announce": (["doc/en/announce/r1.rst"], []),
        "testing": (["testing/test_a.py"], []), ".github": (["CI.yml"], []),
    }
    rank = {f: 1.0 for files, _ in children.values() for f in files} | {"src/py.py": 0.1}
    importance = {d: sum(rank[f] for e, (files, _) in children.items() if e == d or e.startswith(d + "/")
                         for f in files) for d in children}
    code = {"src", "src/_pytest", "src/_pytest/config", "src/pytest", "testing"}
    assert orientation_folders(children, importance, rank, code) == [
        "src/_pytest", "src/_pytest/config", "src/pytest", "src", "doc/en", "testing"]
    three = orientation_folders(children, importance, rank, code, limit=3)
    assert three == ["src/_pytest", "doc/en", "testing"]


def test_a_monorepos_nested_tests_and_docs_are_not_source_packages() -> None:
    from generator.pages.orientation import folder_group, path_group

    assert folder_group("pylint/tests/functional") == "tests"
    assert folder_group("sqlfluff/test/fixtures/dialects") == "tests"
    assert folder_group("pylint/doc/data") == "docs"
    assert folder_group("src/_pytest/config") == "source"  # a tooling-like name inside code is code
    assert folder_group("src/pkg/.cache") == "tooling"
    assert path_group("setup.py") == "tooling"
    assert path_group("xarray/xarray/tests/test_x.py") == "tests"


# a library whose root module re-exports nothing: what its README's code uses is its API; the console script
# prints (its helpers are what most files call), a private helper module is the most-used abstraction
NO_REEXPORTS: dict[str, str | bytes] = {
    "README.md": ("# Fetch\n\nFetches things.\n\n## Use\n\n```python\nfrom fetch.client import Client\n\n"
                  "client = Client(retries=2)\nfetch.connect('x')\n```\n"),
    "pyproject.toml": '[project]\nname = "fetch"\n[project.scripts]\nfetch = "fetch.cli:main"\n',
    "fetch/__init__.py": '"""Fetch."""\n',
    "fetch/_util.py": "def quote(x):\n    return repr(x)\n",
    "fetch/printing.py": ("from ._util import quote\n\n\ndef show(x):\n    print(quote(x))\n\n\n"
                          "def warn(x):\n    print('!', quote(x))\n"),
    "fetch/cli.py": ("from .printing import show, warn\nfrom ._util import quote\n"
                     "from .client import Client\n\n\ndef main():\n"
                     "    show(Client().get(quote('a')))\n    warn('done')\n"),
    "fetch/client.py": ("from ._util import quote\nfrom .transport import connect\n\n\nclass Client:\n"
                        "    def __init__(self, retries=0):\n        self.t = connect(quote('h'))\n\n"
                        "    def get(self, url):\n        return self.t.send(url)\n"),
    "fetch/transport.py": ("from ._util import quote\n\n\nclass Transport:\n    def send(self, url):\n"
                           "        return quote(url)\n\n\ndef connect(host: str) -> Transport:\n"
                           "    return Transport()\n"),
}


def test_reading_starts_at_what_the_readme_uses_not_at_cli_print_helpers(
        make_repo: Callable[..., Path]) -> None:
    from generator.analyze.analysis import analyze
    from generator.pages.overview_stage import overview_orientation, root_readme

    config = load_config(make_repo(NO_REEXPORTS))
    a = analyze(config, save_cache=False)
    orient = overview_orientation(config, a.plan, a.facts, a.graph, root_readme(config, a.plan)[1])
    start = list(orient.start_reading)
    # the README's Client first, then what its `fetch.connect` names (and the type connect returns lives
    # in the same file), then the console script's file; the private `_util.py` never, though most used
    assert start[:3] == ["fetch/client.py", "fetch/transport.py", "fetch/cli.py"]
    assert "fetch/_util.py" not in start


SBT_LIBRARY: dict[str, str | bytes] = {
    "README.md": ("# Flags\n\nFlags parses command lines.\n\n```scala\nval parser = new Parser(\"app\")\n"
                  "parser.parse(args)\n```\n"),
    "build.sbt": 'lazy val root = project.in(file(".")).settings(name := "flags")\n',
    "project/Dependencies.scala": ("object Dependencies {\n"
                                   "  val munit = \"org.scalameta\" %% \"munit\" % \"1.0\"\n}\n"),
    "project/plugins.sbt": 'addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2.5.2")\n',
    "notes/1.0.0.markdown": "Flags 1.0.0 adds `Parser`.\n",
    "notes/about.markdown": "Release notes of [Flags](https://example.org).\n",
    "src/main/scala/flags/ParseError.scala": (
        "package flags\n\n/** A command line that does not parse. */\n"
        "class ParseError(message: String) extends Exception(message)\n"),
    "src/main/scala/flags/MissingValue.scala": (
        "package flags\n\n/** An option given without its value. */\n"
        "class MissingValue(name: String) extends ParseError(name)\n"),
    "src/main/scala/flags/Read.scala": ("package flags\n\n/** Reads an option's value. */\n"
                                        "trait Read[A] {\n  def read(text: String): A\n}\n"),
    "src/main/scala/flags/Parser.scala": (
        "package flags\n\n/** Parses a command line. */\nclass Parser(name: String) {\n"
        "  def parse(args: Seq[String]): Map[String, String] = {\n"
        "    if (args.isEmpty) throw new ParseError(name)\n"
        "    if (args.head == \"-\") throw new MissingValue(name)\n"
        "    Map.empty\n  }\n}\n"),
    "src/main/scala/flags/Options.scala": (
        "package flags\n\n/** The options of a parser. */\nclass Options(parser: Parser) {\n"
        "  def fail(): Nothing = throw new ParseError(\"x\")\n"
        "  def missing(): Nothing = throw new MissingValue(\"y\")\n}\n"),
}


def test_sbt_library_orients_without_its_build_and_lists_exceptions_after_its_types(
        make_repo: Callable[..., Path]) -> None:
    root = make_repo(SBT_LIBRARY)
    config = load_config(root)
    build(config, index=False, site=False)
    home = (config.docs_dir / "index.md").read_text(encoding="utf-8")

    def section(title: str) -> str:
        return home.split(f"## {title}\n")[1].split("\n## ")[0] if f"## {title}\n" in home else ""

    api = re.findall(r"^\| \[<code>([^<]+)</code>\]", section("Public API"), re.M)
    assert api[0] == "flags.Parser"  # the type the README uses, the most thrown exception ranked above it
    assert set(api[-2:]) == {"flags.ParseError", "flags.MissingValue"}
    for title in ("Architecture", "Where to start reading", "Most important modules", "Public API"):
        assert "project/" not in section(title), title
        assert "Dependencies" not in section(title), title
    assert "notes/" not in section("Architecture")


def test_overloads_are_one_entry_point_shown_by_their_name(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "conv").mkdir(parents=True)
    (root / "conv" / "Types.kt").write_text(
        "package conv\n\n/** Reads an int. */\nfun int(text: String): Int = text.toInt()\n\n"
        "/** Reads an int with a radix. */\nfun int(text: String, radix: Int): Int = text.toInt(radix)\n\n"
        "/** Reads a float. */\nfun float(text: String): Float = text.toFloat()\n", encoding="utf-8")
    (root / "conv" / "Use.kt").write_text(
        "package conv\n\nfun use(): Int = int(\"1\") + int(\"2\", 8) + float(\"1\").toInt()\n",
        encoding="utf-8")
    out = tmp_path / "out"
    build(load_config(root, overrides={"out_dir": str(out)}), index=False)
    page = (out / "docs" / "modules" / "conv" / "index.md").read_text(encoding="utf-8")
    line = next(ln for ln in page.splitlines() if "Main entry points" in ln)
    assert "~" not in line
    assert line.count("`int`") == 1
