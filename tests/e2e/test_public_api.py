"""The public API from the names users import (generator/analyze/exports.py): Python's `__all__` and
re-exports, JS/TS package entries, Go's root package, Rust's lib.rs, Java's public classes; console scripts
followed through re-exports and ImportError fallbacks; the home page's section and the full page, on flask
and on small repositories built for real."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from generator.analyze.analysis import analyze
from generator.analyze.entry_points import find_entry_points
from generator.pages.api_stage import api_names_of
from generator.pages.orientation import ApiName
from sourcebook.config import load_config
from tests.support.repo_files import write_files


def _api(tmp_path: Path, files: dict[str, str | bytes]) -> dict[str, ApiName]:
    root = write_files(tmp_path / "repo", files)
    config = load_config(root, overrides={"out_dir": str(tmp_path / "out")})
    a = analyze(config, save_cache=False)
    return {n.name: n for n in api_names_of(config, a.plan, a.facts, a.graph)}


PYTHON = {
    "pyproject.toml": '[project]\nname = "tool"\n[project.scripts]\ntool = "tool:main"\n',
    "src/tool/__init__.py": (
        '"""The tool."""\nfrom .client import Client as Client\nfrom .models import *\nfrom . import util\n'
        "from ._impl import helper as public_helper\n"
        "__all__ = ['Client', 'Model', 'public_helper', 'util', 'main', 'VERSION', 'missing']\n"
        "VERSION = '1'\n"
        "try:\n    from .cli import main\nexcept ImportError:\n    def main():\n"
        '        """The fallback: the CLI needs click."""\n        raise SystemExit(1)\n'),
    "src/tool/client.py": 'class Client:\n    """Talks to the <server> *fast*."""\n',
    "src/tool/models.py": 'class Model:\n    """A row."""\n\n\nclass _Hidden:\n    pass\n',
    "src/tool/_impl.py": "from .deep import helper\n",
    "src/tool/deep.py": 'def helper():\n    """Helps, two re-exports down."""\n',
    "src/tool/util.py": '"""Small utilities."""\n\n\ndef x():\n    pass\n',
    "src/tool/cli.py": 'def main():\n    """Run the command line."""\n',
    "tests/test_tool.py": "from tool import Client\n\n\ndef test_it():\n    Client()\n",
}


def test_python_all_and_reexports_followed_to_their_definitions(tmp_path: Path) -> None:
    api = _api(tmp_path, PYTHON)
    assert set(api) == {f"tool.{n}" for n in ("Client", "Model", "public_helper", "util", "main", "VERSION",
                                              "missing")}  # exactly __all__
    assert (api["tool.Client"].path, api["tool.Client"].qualname) == ("src/tool/client.py", "Client")
    assert api["tool.Client"].summary == "Talks to the <server> *fast*."  # raw here: escaped by the page
    assert (api["tool.public_helper"].path, api["tool.public_helper"].qualname) == ("src/tool/deep.py",
                                                                                    "helper")
    assert (api["tool.util"].path, api["tool.util"].kind) == ("src/tool/util.py", "module")
    assert api["tool.util"].summary == "Small utilities."
    # the try/except ImportError: the real function, not the fallback stub in __init__.py
    assert (api["tool.main"].path, api["tool.main"].summary) == ("src/tool/cli.py", "Run the command line.")
    assert api["tool.missing"].path == ""  # named in __all__, defined nowhere: listed, linked nowhere
    assert api["tool.Model"].path == "src/tool/models.py"


def test_without_all_the_imported_and_defined_public_names(tmp_path: Path) -> None:
    files = dict(PYTHON)
    files["src/tool/__init__.py"] = re.sub(r"__all__ = .*\n", "", files["src/tool/__init__.py"])
    api = _api(tmp_path, files)
    assert {"tool.Client", "tool.Model", "tool.public_helper", "tool.util", "tool.main"} <= set(api)
    assert "tool._Hidden" not in api  # `import *` brings public names only
    assert api["tool.main"].path == "src/tool/cli.py"


def test_console_script_follows_the_reexport_past_the_fallback(tmp_path: Path) -> None:
    root = write_files(tmp_path / "repo", PYTHON)
    a = analyze(load_config(root, overrides={"out_dir": str(tmp_path / "out")}), save_cache=False)
    entries = find_entry_points({"pyproject.toml": PYTHON["pyproject.toml"]}, a.facts)
    script = next(e for e in entries if e.name == "tool")
    assert (script.path, script.qualname) == ("src/tool/cli.py", "main")


TYPESCRIPT = {
    "package.json": json.dumps({"name": "widgets", "main": "./dist/index.js", "types": "./dist/index.d.ts"}),
    "src/index.ts": ("export { Widget, makeWidget as create } from './widget';\nexport * from './shapes';\n"
                     "export * as colors from './colors';\nimport { Store } from './store';\n"
                     "export { Store };\n"
                     "export default function widgets(): void {}\nfunction internal(): void {}\n"
                     "export * from './hooks';\n"),
    "src/widget.ts": ("/** A widget on the page. */\nexport class Widget {\n"
                      "  constructor(public name: string) {}\n}\n"
                      "/** Makes a widget. */\nexport function makeWidget(name: string): Widget {\n"
                      "  return new Widget(name);\n}\n"),
    "src/shapes/index.ts": "export * from './circle';\n",
    "src/shapes/circle.ts": ("/** A round shape. */\nexport class Circle {}\nclass Hidden {}\n"
                             "export interface Radius { r: number }\n"),
    "src/colors.ts": "export const red = '#f00';\n",
    "src/hooks.ts": ("export const useWidget = (<T>(init: T) => init) as Hook;\n"
                     "export const area = (2 * 3);\nexport const double = (x: number) => 2 * x;\n"),
    "src/store.ts": "/** Keeps state. */\nexport class Store {}\n",
}


def test_typescript_package_entry_and_reexports(tmp_path: Path) -> None:
    api = _api(tmp_path, TYPESCRIPT)
    assert (api["widgets.Widget"].path, api["widgets.Widget"].qualname) == ("src/widget.ts", "Widget")
    assert api["widgets.Widget"].summary == "A widget on the page."
    assert (api["widgets.create"].path, api["widgets.create"].qualname) == ("src/widget.ts", "makeWidget")
    assert (api["widgets.Circle"].path, api["widgets.Circle"].qualname) == ("src/shapes/circle.ts", "Circle")
    assert "widgets.Radius" in api
    assert "widgets.Hidden" not in api
    assert "widgets.internal" not in api
    assert (api["widgets.colors"].path, api["widgets.colors"].kind) == ("src/colors.ts", "module")
    assert api["widgets.Store"].path == "src/store.ts"
    # zustand's `export const create = (<T>(...) => ...)`: a function the parser has no symbol for
    assert (api["widgets.useWidget"].path, api["widgets.useWidget"].kind) == ("src/hooks.ts", "function")
    assert api["widgets.area"].kind == "constant"
    assert api["widgets"].qualname == "widgets"  # the default export is the package itself


def test_go_root_package_exported_names(tmp_path: Path) -> None:
    api = _api(tmp_path, {
        "go.mod": "module github.com/acme/chime/v2\n\ngo 1.21\n",
        "chime.go": ("package chime\n\n// Router routes requests.\ntype Router struct{}\n\n"
                     "// NewRouter returns a router.\nfunc NewRouter() *Router { return &Router{} }\n\n"
                     "func (r *Router) Get() {}\n\nfunc helper() {}\n"),
        "chime_test.go": "package chime\n\nfunc TestX() {}\n",
        "middleware/logger.go": "package middleware\n\nfunc Logger() {}\n",
    })
    assert set(api) == {"chime.Router", "chime.NewRouter"}  # not methods, unexported names or tests
    assert api["chime.NewRouter"].summary == "NewRouter returns a router."


def test_rust_lib_pub_use_and_pub_mod(tmp_path: Path) -> None:
    api = _api(tmp_path, {
        "Cargo.toml": '[package]\nname = "fast-http"\nversion = "0.1.0"\n',
        "src/lib.rs": ("//! A fast HTTP client.\npub mod client;\nmod error;\n"
                       "pub use crate::client::{Client, Builder as ClientBuilder};\npub use error::*;\n"
                       "/// Gets a URL.\npub fn get(url: &str) {}\nfn private() {}\n"
                       # for the crate's macros, not its users (anyhow's shape)
                       "#[doc(hidden)]\npub use crate::client::Secret;\n"
                       "#[doc(hidden)]\npub mod __private {\n    pub use core::format;\n}\n"),
        "src/client.rs": ("/// A client.\npub struct Client;\n\nimpl Client {\n"
                          "    pub fn new() -> Self { Client }\n}\n\n"
                          "pub struct Builder;\n"),
        "src/error.rs": "/// What went wrong.\npub enum Error { Io }\n",
    })
    assert set(api) == {"fast_http::client", "fast_http::Client", "fast_http::ClientBuilder",
                        "fast_http::Error", "fast_http::get"}
    assert (api["fast_http::Client"].path, api["fast_http::Client"].qualname) == ("src/client.rs", "Client")
    assert api["fast_http::ClientBuilder"].qualname == "Builder"
    assert (api["fast_http::client"].path, api["fast_http::client"].kind) == ("src/client.rs", "module")
    assert api["fast_http::Error"].path == "src/error.rs"


def test_java_public_classes_of_each_package(tmp_path: Path) -> None:
    api = _api(tmp_path, {
        "pom.xml": "<project><artifactId>x</artifactId></project>\n",
        "src/main/java/com/acme/Client.java": ("package com.acme;\n\n/** The client. */\n"
                                               "public class Client {\n  public Client(String url) {}\n}\n"
                                               "class Helper {}\n"),
        "src/main/java/com/acme/net/Pool.java": "package com.acme.net;\n\npublic interface Pool {}\n",
        "src/test/java/com/acme/ClientTest.java": "package com.acme;\n\npublic class ClientTest {}\n",
    })
    assert set(api) == {"com.acme.Client", "com.acme.net.Pool"}


def test_flask_public_api_on_the_home_page_and_its_own_page(flask_wiki: Path) -> None:
    """flask's `__init__.py` re-exports 39 names (`from .app import Flask as Flask`...): the home page
    shows the 30 most used, each linked to its section where it is defined, and links the page of all."""
    docs = flask_wiki / "docs"
    home = (docs / "index.md").read_text(encoding="utf-8")
    section = home.split("## Public API\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| Name")]
    assert len(rows) == 30
    assert "the 30 most used of 39, all on the [Public API](api.md) page" in section
    # the first sentence of each summary: a line a name
    assert rows[0] == ("| [<code>flask.Flask</code>](files/src/flask/app.py.md#sym-flask) | class | "
                       "The flask object implements a WSGI application and acts as the central object. |")
    assert ("| [<code>flask.url&#95;for</code>](files/src/flask/helpers.py.md#sym-url-for) | function | "
            "Generate a URL") in section
    assert home.index("## Public API") < home.index("## Entry points") < home.index("## Where to start")
    # each name once on the home page: the abstractions list what the API section does not already show
    abstractions = home.split("## Most-used abstractions\n", 1)[1].split("\n## ", 1)[0]
    assert "files/src/flask/app.py.md#sym-flask)" not in abstractions
    # the console script `flask = "flask.cli:main"` links to the function; reading starts at the library
    # (app.py imports click for `app.cli`: no command line for that), the command line after it
    assert "[src/flask/cli.py: main](files/src/flask/cli.py.md#sym-main)" in home
    start = home.split("## Where to start reading\n\n")[1].split("\n## ")[0]
    assert re.findall(r"^\d+\. \[([^\]]+)\]", start, re.M) == [
        "src/flask/app.py", "src/flask/ctx.py", "src/flask/templating.py", "src/flask/cli.py",
        "src/flask/sansio/app.py"]
    page = (docs / "api.md").read_text(encoding="utf-8")
    names = re.findall(r"^\| \[?<code>(flask\.[^<]+)</code>", page, re.M)
    assert len(names) == 39
    assert names == sorted(names, key=str.lower)
    # a module-level variable has no section: its name is code, its file is linked, never its page's top
    assert ("| <code>flask.g</code> | name | [src/flask/globals.py](files/src/flask/globals.py.md) |"
            in page)
    assert "| [<code>flask.json</code>](files/src/flask/json/__init__.py.md) | module |" in page
    site = flask_wiki / "site"
    assert 'href="api.html" class="md-nav__link"' in (site / "index.html").read_text(encoding="utf-8")
    assert '<a href="files/src/flask/app.py.html#sym-flask"><code>flask.Flask</code></a>' in (
        site / "api.html").read_text(encoding="utf-8")
    assert '"api.html' not in (site / "search" / "search_index.json").read_text(encoding="utf-8")


def test_typescript_api_on_a_built_home_page(tmp_path: Path) -> None:
    files = dict(TYPESCRIPT)
    files["README.md"] = "# Widgets\n\nWidgets for pages.\n"
    files["src/widget.ts"] = files["src/widget.ts"].replace("A widget on the page.",
                                                            "A <img src=x onerror=alert(1)> widget.")
    root = write_files(tmp_path / "repo", files)
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--out", str(out),
                          "--no-index"], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr  # mkdocs build --strict
    home = (out / "docs" / "index.md").read_text(encoding="utf-8")
    assert "| [<code>widgets.Widget</code>](files/src/widget.ts.md#sym-widget) | class | A &lt;img" in home
    assert "[<code>widgets.Circle</code>](files/src/shapes/circle.ts.md#sym-circle)" in home
    assert not (out / "docs" / "api.md").exists()  # all fit on the home page: no page of them all
    html = (out / "site" / "index.html").read_text(encoding="utf-8")
    assert "A &lt;img src=x onerror=alert(1)&gt; widget." in html
    assert "<img src=x" not in html


HTTPX_LIKE: dict[str, str | bytes] = {
    "README.md": "# pkg\n\nA client library.\n",
    "pyproject.toml": '[project]\nname = "pkg"\n[project.scripts]\npkg = "pkg:main"\n',
    "pkg/__init__.py": ('"""A client library."""\nfrom ._client import Client\n'
                        "from ._models import Response\n\n"
                        "try:\n    from ._main import main\nexcept ImportError:\n    def main():\n"
                        '        print("The pkg command line requires click.")\n\n'
                        '__all__ = ["Client", "Response", "main"]\n'),
    "pkg/_client.py": ('from ._models import Response\n\n\nclass Client:\n    """An HTTP client."""\n\n'
                       "    def get(self, url):\n        return Response(url)\n"),
    "pkg/_models.py": ('class Response:\n    """A response."""\n\n    def __init__(self, url):\n'
                       "        self.url = url\n"),
    # the command line: a dozen print helpers, importing the library (so it "leads to" the other files)
    "pkg/_main.py": "import click\nfrom ._client import Client\nfrom ._models import Response\n\n" + "".join(
        f'\ndef print_part_{i}(r: Response) -> None:\n    """Print part {i}."""\n    click.echo(r.url)\n'
        for i in range(12)) + '\n@click.command()\ndef main(url):\n    """The command line."""\n'
                              "    print_part_0(Client().get(url))\n",
}


def test_library_before_its_command_line_in_where_to_start(tmp_path: Path) -> None:
    """httpx's shape: `__init__` re-exports the client and, in a try/except ImportError, the CLI's main. The
    console script links to the real main (in _main.py), and reading starts at the library, the CLI after."""
    from generator.build import build

    root = write_files(tmp_path / "repo", HTTPX_LIKE)
    config = load_config(root, overrides={"out_dir": str(tmp_path / "out")})
    build(config, index=False, site=False)
    home = (config.docs_dir / "index.md").read_text(encoding="utf-8")
    assert ("- `pkg` — console script (pyproject.toml): "
            "[pkg/&#95;main.py: main](files/pkg/_main.py.md#sym-main)") in home
    assert ("| [<code>pkg.main</code>](files/pkg/_main.py.md#sym-main) | function | The command line. |"
            in home)
    start = home.split("## Where to start reading\n\n")[1].split("\n## ")[0]
    assert re.findall(r"^\d+\. \[([^\]]+)\]", start, re.M)[:3] == [
        "pkg/&#95;client.py", "pkg/&#95;models.py", "pkg/&#95;main.py"]


def test_the_api_page_is_written_and_checked_like_any_page(tmp_path: Path) -> None:
    from generator.analyze.plan import load_state
    from generator.build import build

    functions = "".join(f'\n\ndef f{i:02}():\n    """Function {i}."""\n' for i in range(35))
    root = write_files(tmp_path / "repo", {
        "README.md": "# many\n\nMany functions.\n",
        "many/__init__.py": "from .funcs import " + ", ".join(f"f{i:02}" for i in range(35)) + "\n",
        "many/funcs.py": functions,
    })
    config = load_config(root, overrides={"out_dir": str(tmp_path / "out")})
    build(config, index=False, site=False)
    page = (config.docs_dir / "api.md").read_text(encoding="utf-8")
    assert ("| [<code>many.f07</code>](files/many/funcs.py.md#sym-f07) | function | "
            "[many/funcs.py](files/many/funcs.py.md) | Function 7. |") in page
    assert load_state(config.out_dir)["api.md"].kind == "api"
    assert build(config, index=False, site=False, check=True).stale == []
    (root / "many/funcs.py").write_text(functions.replace("Function 7.", "The seventh."), encoding="utf-8")
    assert "api.md" in build(config, index=False, site=False, check=True).stale
    build(config, index=False, site=False)
    assert "| The seventh. |" in (config.docs_dir / "api.md").read_text(encoding="utf-8")
    # fewer names than the home page lists: the page goes
    (root / "many/__init__.py").write_text("from .funcs import f01\n", encoding="utf-8")
    build(config, index=False, site=False)
    assert not (config.docs_dir / "api.md").exists()


def test_export_star_between_many_modules_and_round_a_cycle_reads_each_once(tmp_path: Path) -> None:
    """Twenty modules each `export * from` all the others (and themselves): without reading each module
    once this is 20^6 walks; with it, every name still found."""
    import time

    mods = [f"m{i}" for i in range(20)]
    files: dict[str, str | bytes] = {
        "package.json": json.dumps({"name": "web", "main": "src/index.ts"}),
        "src/index.ts": "".join(f"export * from './{m}';\n" for m in mods)}
    for m in mods:
        stars = "".join(f"export * from './{o}';\n" for o in mods)
        files[f"src/{m}.ts"] = stars + f"export class C{m} {{}}\n"
    started = time.process_time()
    api = _api(tmp_path, files)
    assert {f"web.C{m}" for m in mods} <= set(api)
    assert time.process_time() - started < 20


def test_api_tables_point_elsewhere_and_are_not_indexed_as_content() -> None:
    """The names are found on their own sections: the home page's Public API section and the API page's
    table are left out of the index's page text (as the other link-only sections are), the page out of site
    search."""
    from generator.pages.orientation import ApiName
    from generator.pages.render_markdown import API_PAGE, index_text, render_api_page

    page = render_api_page([ApiName("pkg.Client", "pkg/client.py", "Client", "class", "Talks HTTP.")],
                           index=None, file_pages={"pkg/client.py": "files/pkg/client.py.md"})
    assert page.startswith("---\n# each name is found on its own section")
    assert "search:\n  exclude: true\n---\n" in page
    assert ("| <code>pkg.Client</code> | class | [pkg/client.py](files/pkg/client.py.md) | Talks HTTP. |"
            in page)
    assert "Talks HTTP" not in index_text(page)
    home = "# pkg\n\n## Public API\n\n| Name |\n|---|\n| [pkg.Client](x.md#sym-client) |\n\n## At a glance\n"
    assert "pkg.Client" not in index_text(home)
    assert "At a glance" in index_text(home)
    assert API_PAGE == "api.md"
