"""The public API and the home page of ecosystems that export by convention (issue 32): Kotlin's main source
set, C#'s public types outside test projects, composer's autoload namespaces, a gem's lib/, C's public
headers; tests, benchmarks and fuzz targets never on the home page, in the API or where reading starts.
Built through the real build (`sourcebook build --no-index`, mkdocs --strict)."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

from generator.analyze.exports import Export
from generator.analyze.groups import dir_group, named_group
from generator.pages.orientation import front_door_first, readme_intro
from tests.support.repo_files import write_files

REPO: dict[str, str | bytes] = {
    "README.md": "# Mixed\n\nA library in several languages.\n",
    # Kotlin: main source set, a test source set and a JMH benchmark set
    "core/src/main/kotlin/com/acme/Parser.kt": (
        "package com.acme\n\n/** Parses documents. */\npublic class Parser internal constructor() {\n"
        "  /** Parses [text]. */\n  public fun parse(text: String): Node = Node(text)\n}\n\n"
        "/** A parsed node. */\nclass Node(val text: String)\n\n"
        "internal class Cache\n\nprivate fun helper(): Int = 1\n"),
    "core/src/main/kotlin/com/acme/Acme.kt": (
        "package com.acme\n\n/** The library's front door. */\nobject Acme {\n"
        "  fun parser(): Parser = Parser()\n}\n"),
    "core/src/main/kotlin/com/acme/internal/Strings.kt": (
        "package com.acme.internal\n\n/** Shared string helpers. */\nclass Strings\n"),
    "core/src/test/kotlin/com/acme/ParserTest.kt": (
        "package com.acme\n\nclass ParserTest {\n  fun parses() { Parser().parse(\"x\") }\n}\n"),
    "core/src/jmh/kotlin/com/acme/ParserBenchmark.kt": (
        "package com.acme\n\nclass ParserBenchmark {\n  fun run() { Parser().parse(\"x\") }\n}\n"),
    # C#: a library project and its test project
    "src/Acme.Log/Logger.cs": (
        "namespace Acme.Log;\n\n/// <summary>Writes <see cref=\"Event\"/>s.</summary>\n"
        "public class Logger\n{\n"
        "    public void Write(Event e) { }\n}\n\npublic record Event(string Text);\n\n"
        "internal class Buffer { }\n"),
    "src/Acme.Log/Core/ISink.cs": ("namespace Acme.Log.Core;\n\n/// <summary>Receives events.</summary>\n"
                                   "public interface ISink\n{\n    void Emit(Event e);\n}\n"),
    "src/Acme.Log/Core/Pipeline.cs": ("namespace Acme.Log.Core;\n\npublic class Pipeline\n{\n"
                                      "    public void Run(ISink a, ISink b) { }\n}\n"),
    "src/Acme.Log/Sinks/ConsoleSink.cs": ("namespace Acme.Log.Sinks\n{\n"
                                          "    /// <summary>Writes to the console.</summary>\n"
                                          "    public class ConsoleSink\n    {\n    }\n}\n"),
    "test/Acme.Log.Tests/LoggerTests.cs": (
        "namespace Acme.Log.Tests;\n\npublic class LoggerTests\n{\n"
        "    public void Writes() { new Logger().Write(new Event(\"x\")); }\n}\n"),
    # PHP: composer's autoload folder
    "composer.json": '{"name": "acme/log", "autoload": {"psr-4": {"Acme\\\\Log\\\\": "php/src/"}}}\n',
    "php/src/Channel.php": (
        "<?php\n\nnamespace Acme\\Log;\n\n/**\n * A log channel.\n */\nclass Channel\n{\n"
        "    public function name(): string { return 'x'; }\n}\n\n"
        "/**\n * @internal\n */\nclass Registry\n{\n}\n"),
    "php/tests/ChannelTest.php": "<?php\n\nclass ChannelTest\n{\n    public function testName() {}\n}\n",
    # Ruby: a gem's lib/
    "lib/acme.rb": "# The Acme client.\nmodule Acme\n  # Sends requests.\n  class Client\n"
                   "    def get(path)\n      path\n    end\n  end\nend\n",
    "spec/client_spec.rb": ("describe Acme::Client do\n  it 'gets' do\n    Acme::Client.new.get('/')\n"
                            "  end\nend\n"),
    # C: a public header under include/, a fuzz target
    "include/acme.h": ("/** A parsed value. */\ntypedef struct acme_value { int kind; } acme_value;\n\n"
                       "/** Parses text. */\nacme_value *acme_parse(const char *text);\n"),
    "fuzz/fuzz_parse.c": ('#include "acme.h"\n\nint LLVMFuzzerTestOneInput(const char *d, int n) '
                          "{ acme_parse(d); return 0; }\n"),
    # C++: a public header that also adds overloads to the standard library's namespace for its own type
    "include/acme/span.hpp": ("namespace acme {\n/// A view of values.\nclass Span {\n public:\n"
                              "  int size() const;\n};\n}\n\nnamespace std {\n"
                              "inline const int *begin(const acme::Span &s) { return nullptr; }\n}\n"),
}


def test_folder_names_say_tests_and_benchmarks_at_any_depth() -> None:
    for name in ("Serilog.Tests", "moshi-kotlin-tests", "commonTest", "jvmTest", "fuzz", "test"):
        assert named_group(name) == "tests", name
    for name in ("jmh", "Acme.Benchmarks", "clikt-samples", "benchmarks"):
        assert named_group(name) == "examples", name
    assert named_group("bundled") == "tooling"  # spdlog's include/spdlog/fmt/bundled: another project's
    for name in ("src", "main", "latest", "Contest", "manifests", "moshi-adapters", "kotlin"):
        assert named_group(name) is None, name
    assert dir_group("Acme.Tests") == "tests"
    assert dir_group("acme") == "source"


def test_readme_badges_in_html_leave_no_empty_link() -> None:
    readme = ('Lib\n===\n\n[<img alt="github" src="https://img.shields.io/badge/x" height="20">]'
              '(https://github.com/acme/lib)\n[<img alt="docs" src="https://img.shields.io/y">]'
              '(https://docs.rs/lib)\n\nA library for errors.\n')
    assert readme_intro(readme) == "A library for errors."


def test_front_door_then_root_package_then_rank() -> None:
    exports = [Export("Acme.Core.Sink", "a.cs", "Sink", "interface"),
               Export("Acme.Configuration", "b.cs", "Configuration", "class"),
               Export("Acme.Log", "c.cs", "Log", "class"),
               Export("Acme.Acme", "d.cs", "Acme", "class"),
               Export("Acme.Core.Core", "e.cs", "Core", "class")]
    rank = {("a.cs", "Sink"): 0.9, ("e.cs", "Core"): 0.95, ("b.cs", "Configuration"): 0.2,
            ("c.cs", "Log"): 0.1, ("d.cs", "Acme"): 0.05}
    # the root package's own namesake, the root's names by rank, then the sub-packages' (their namesakes
    # included) by rank
    assert [e.name for e in front_door_first(exports, rank)] == [
        "Acme.Acme", "Acme.Configuration", "Acme.Log", "Acme.Core.Core", "Acme.Core.Sink"]


def test_conventional_public_api_on_a_built_home_page(tmp_path: Path) -> None:
    root = write_files(tmp_path / "repo", REPO)
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--out", str(out),
                          "--no-index"], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr  # mkdocs build --strict
    home = (out / "docs" / "index.md").read_text(encoding="utf-8")
    api = html.unescape(home.split("## Public API", 1)[1].split("\n## ", 1)[0])
    for name, page in [("com.acme.Parser", "core/src/main/kotlin/com/acme/Parser.kt"),
                       ("com.acme.Node", "core/src/main/kotlin/com/acme/Parser.kt"),
                       ("Acme.Log.Logger", "src/Acme.Log/Logger.cs"),
                       ("Acme.Log.Event", "src/Acme.Log/Logger.cs"),
                       ("Acme.Log.Sinks.ConsoleSink", "src/Acme.Log/Sinks/ConsoleSink.cs"),
                       ("Acme\\Log\\Channel", "php/src/Channel.php"),
                       ("Acme::Client", "lib/acme.rb"),
                       ("acme_parse", "include/acme.h"),
                       ("acme::Span", "include/acme/span.hpp")]:
        assert f"<code>{name}</code>](files/{page}.md#sym-" in api, name
    # the type named after its package comes first; a package named `internal` is no public API
    first_row = api.split("|---|---|---|\n| ", 1)[1]
    assert first_row.startswith("[<code>com.acme.Acme</code>]")
    for hidden in ("com.acme.internal", "Cache", "helper", "Buffer", "Registry", "ParserTest",
                   "ParserBenchmark",
                   "LoggerTests", "ChannelTest", "LLVMFuzzerTestOneInput", "std::begin"):
        assert hidden not in api, hidden
    start = home.split("## Where to start reading", 1)[1].split("\n## ", 1)[0] if (
        "## Where to start reading" in home) else ""
    for path in ("src/test/", "src/jmh/", "Acme.Log.Tests", "fuzz/", "spec/", "php/tests/"):
        assert path not in start, path
    diagrams = "".join(part.split("```", 1)[0] for part in home.split("```mermaid")[1:])
    for path in ("src/test", "src/jmh", "Acme.Log.Tests", "fuzz", "spec"):
        assert path not in diagrams, path


NODE_REPO: dict[str, str | bytes] = {
    # a README whose opening is an HTML wrapper of badges and a note, no description
    "README.md": ('<div align="center">\n\n[![CI](https://ci.example/badge.svg)](https://ci.example)\n\n'
                  "</div>\n\n# Releases\n\nNote that `main` is a work in progress.\n\n# Usage\n\nCall it.\n"),
    "package.json": '{"name": "acme", "description": "Small web framework"}\n',
    "index.js": "'use strict';\n\nmodule.exports = require('./lib/acme');\n",
    "lib/acme.js": ("var proto = require('./application');\nvar View = require('./view');\n\n"
                    "exports = module.exports = createApplication;\n\n"
                    "/**\n * Create an application.\n */\n\nfunction createApplication() {\n"
                    "  return Object.create(proto);\n}\n\n"
                    "exports.application = proto;\nexports.View = View;\n"),
    "lib/application.js": ("var app = exports = module.exports = {};\n\n/** Starts the app. */\n"
                           "app.listen = function listen(port) {\n  return port;\n};\n"),
    "lib/view.js": ("module.exports = View;\n\n/**\n * A template to render.\n */\n\n"
                    "function View(name) {\n}\n"),
    "test/app.test.js": "var acme = require('../');\n\ndescribe('app', function () { acme(); });\n",
    "examples/hello/index.js": "var acme = require('../../');\n\nacme();\n",
    "benchmarks/run.js": "var acme = require('../');\n\nacme();\n",
}

JVM_PY_REPO: dict[str, str | bytes] = {
    "README.md": "# Tools\n\nParsers in Scala and Python.\n",
    "build.sbt": 'name := "tools"\n',
    "project/Dependencies.scala": "object Dependencies {\n  val all = Seq()\n}\n",
    "core/src/main/scala/acme/Parser.scala": (
        "package acme\npackage text\n\n/** Parses text into nodes. */\n\n"
        "class Parser private (val s: String)\n\n"
        "object Parser {\n  def apply(s: String): Parser = new Parser(s)\n}\n\n"
        "private[acme] class Cache\n"),
    "core/src/test/scala/acme/ParserSpec.scala": "package acme\n\nclass ParserSpec\n",
    "textkit/__init__.py": '__version__ = "1.0"\n',
    "textkit/applications.py": '"""Applications."""\n\n\nclass Tools:\n    """The application."""\n',
    "textkit/_compat.py": "def shim():\n    pass\n",
    "tests/test_tools.py": "from textkit.applications import Tools\n\n\ndef test_tools():\n    Tools()\n",
}


def _build(tmp_path: Path, files: dict[str, str | bytes], *flags: str) -> Path:
    root = write_files(tmp_path / "repo", files)
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--out", str(out),
                          "--no-index", *flags], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr  # mkdocs build --strict without --no-site
    return out / "docs"


def _opening(home: str) -> str:
    """The home page above its first section: the text a reader sees first."""
    return html.unescape(home.split("\n## ", 1)[0])


def test_commonjs_public_api_and_main_function_on_the_home_page(tmp_path: Path) -> None:
    docs = _build(tmp_path, NODE_REPO)
    home = (docs / "index.md").read_text(encoding="utf-8")
    opening = _opening(home)
    assert "Small web framework. The repository has" in opening
    assert ("The main function is [<code>acme</code>](files/lib/acme.js.md#sym-createapplication) "
            "(in `lib/acme.js`): Create an application.") in opening
    assert "## What it is" not in home  # the README's opening says nothing about the project
    api = html.unescape(home.split("## Public API", 1)[1].split("\n## ", 1)[0])
    first_row = api.split("|---|---|---|\n| ", 1)[1]
    assert first_row.startswith("[<code>acme</code>]")
    assert "[<code>acme.View</code>](files/lib/view.js.md#sym-view) | function | A template to render." in api
    assert "[<code>acme.application</code>](files/lib/application.js.md)" in api
    for hidden in ("test/", "examples", "benchmarks"):
        assert hidden not in api, hidden
        assert hidden not in opening, hidden
    diagrams = "".join(part.split("```", 1)[0] for part in home.split("```mermaid")[1:])
    for folder in ("test", "examples", "benchmarks"):
        assert f'"{folder}' not in diagrams, folder
        assert f"{folder}/" not in diagrams, folder


def test_scala_and_python_module_api_and_main_type(tmp_path: Path) -> None:
    docs = _build(tmp_path, JVM_PY_REPO, "--no-site")
    home = (docs / "index.md").read_text(encoding="utf-8")
    api = html.unescape(home.split("## Public API", 1)[1].split("\n## ", 1)[0])
    # its doc comment across a blank line; the anchor tells the class from its companion object
    assert re.search(r"\[<code>acme\.text\.Parser</code>\]\(files/core/src/main/scala/acme/Parser\.scala\.md"
                     r"#sym-parser[\w-]*\) \| class \| Parses text into nodes\.", api)
    assert "[<code>textkit.applications.Tools</code>](files/textkit/applications.py.md#sym-tools) | class" \
        in api
    for hidden in ("Cache", "ParserSpec", "Dependencies", "shim", "test_tools"):
        assert hidden not in api, hidden
    assert re.search(r"The main type is \[<code>(acme\.text\.Parser|textkit\.applications\.Tools)</code>\]",
                     _opening(home))
    diagrams = "".join(part.split("```", 1)[0] for part in home.split("```mermaid")[1:])
    for folder in ("src/test", "tests"):
        assert folder not in diagrams, folder


SMALL_REPO: dict[str, str | bytes] = {
    "README.md": "# colors\n\nColoured strings.\n\n```scala\nval s = colors.Str(\"x\")\n```\n",
    "colors/src/colors/Str.scala": ("package colors\n\n/** A coloured string. */\nclass Str(s: String) {\n"
                                    "  def plain: String = s\n}\n"),
    "colors/src/colors/Attr.scala": "package colors\n\n/** An attribute. */\nclass Attr(code: Int)\n",
    "colors/test/src/colors/StrTests.scala": ("package colors\n\nobject StrTests {\n"
                                              "  def run(): Unit = new Str(\"x\").plain\n}\n"),
    "colors/bench/src/colors/StrBench.scala": ("package colors\n\nobject StrBench {\n"
                                               "  def run(): Unit = new Str(\"x\").plain\n}\n"),
    "colors/src/colors/example.scala": "package colors\n\nobject Example {\n  val s = new Str(\"x\")\n}\n",
}


def test_a_one_package_library_diagram_leaves_tests_benchmarks_and_examples_out(tmp_path: Path) -> None:
    docs = _build(tmp_path, SMALL_REPO, "--no-site")
    home = (docs / "index.md").read_text(encoding="utf-8")
    assert "The main type is [<code>colors.Str</code>]" in _opening(home)
    diagrams = "".join(part.split("```", 1)[0] for part in home.split("```mermaid")[1:])
    for name in ("test", "bench", "example", "Tests", "Bench", "Example"):
        assert name not in diagrams, name


GEM_REPO = {
    "acme.gemspec": "Gem::Specification.new do |s|\n  s.name = 'acme'\n  s.files = Dir['lib/**/*.rb']\nend\n",
    "README.md": "# acme\n\n```ruby\nclass Client\n  include Acme\nend\nAcme.get('/')\n```\n",
    "lib/acme/version.rb": "module Acme\n  VERSION = '1.0'\nend\n",
    "lib/acme/request.rb": "module Acme\n  # Sends one request.\n  class Request\n    def send_it; end\n"
                           "  end\nend\n",
    "lib/acme.rb": "require 'acme/version'\n\n# Makes HTTP fun.\nmodule Acme\n  # Gets a path.\n"
                   "  def self.get(path)\n    Request.new.send_it\n  end\nend\n",
}


def test_a_module_reopened_in_every_file_is_named_by_the_file_named_after_it(tmp_path: Path) -> None:
    docs = _build(tmp_path, GEM_REPO, "--no-site")
    opening = _opening((docs / "index.md").read_text(encoding="utf-8"))
    assert "The main type is [<code>Acme</code>](files/lib/acme.rb.md#sym-acme)" in opening
