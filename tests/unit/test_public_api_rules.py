"""Each ecosystem's public-API rule on small repositories (issue 32): CommonJS's `module.exports`/`exports.x`,
Scala's main source set, a Python package used through its modules, Javadoc across blank lines, the main
type the home page names, and a README whose opening is only an HTML wrapper and a note."""

from __future__ import annotations

from generator.analyze.exports import Export, js_exports_of, package_exports, python_module_exports
from generator.analyze.facts import FileFacts, SourceFile
from generator.analyze.languages import detect_language
from generator.analyze.parse import extract
from generator.analyze.public_surface import scala_exports
from generator.pages.orientation import (
    ApiName,
    error_types,
    front_door_first,
    main_name,
    reader_order,
    readme_intro,
    readme_rest,
)


def _repo(texts: dict[str, str]) -> tuple[dict[str, FileFacts], dict[str, str]]:
    facts = {}
    for path, text in texts.items():
        data = text.encode()
        facts[path] = extract(SourceFile(path, detect_language(path), len(data), "x"), data)
    return facts, texts


def _all(path: str) -> bool:
    return not path.startswith(("test/", "tests/"))


def _doc(facts: FileFacts, name: str) -> str:
    return next(s.docstring for s in facts.symbols if s.qualname == name)


def test_commonjs_module_exports_and_named_exports() -> None:
    facts, texts = _repo({
        "package.json": '{"name": "acme"}',
        "index.js": "'use strict';\n\nmodule.exports = require('./lib/acme');\n",
        "lib/acme.js": (
            "var proto = require('./application');\nvar Router = require('router');\n"
            "var View = require('./view');\nvar { format: fmt } = require('./format');\n\n"
            "exports = module.exports = createApplication;\n\n"
            "/**\n * Create an application.\n */\n\nfunction createApplication() {\n  return {};\n}\n\n"
            "exports.application = proto;\nexports.Router = Router;\nexports.View = View;\n"
            "exports.format = fmt;\n"
            "exports.static = require('./static');\n"
            "exports.parse = function (text) {\n  return text;\n};\n"),
        "lib/application.js": "var app = exports = module.exports = {};\n\napp.init = function init() {};\n",
        "lib/view.js": "module.exports = View;\n\n/** A view to render. */\nfunction View(name) {\n}\n",
        "lib/format.js": ("function format(x) {\n  return x;\n}\n\n"
                          "module.exports = { format, other: format };\n"),
        "lib/static.js": "module.exports = function serveStatic(root) {\n  return root;\n};\n",
    })
    found = package_exports(facts, texts.get, {"package.json": texts["package.json"]},
                            source=_all, importance={})
    by_name = {e.name: e for e in found}
    assert by_name["acme"] == Export("acme", "lib/acme.js", "createApplication", "function")
    assert by_name["acme.application"] == Export("acme.application", "lib/application.js", "", "module")
    assert by_name["acme.View"] == Export("acme.View", "lib/view.js", "View", "function")
    assert by_name["acme.format"] == Export("acme.format", "lib/format.js", "format", "function")
    assert by_name["acme.Router"].path == ""  # a dependency's, passed on
    assert by_name["acme.static"].path == "lib/static.js"
    assert by_name["acme.parse"].path == "lib/acme.js"
    # the `/** */` doc block across a blank line documents the function
    assert _doc(facts["lib/acme.js"], "createApplication") == "Create an application."
    # an object literal's keys are the names exported
    assert set(js_exports_of("lib/format.js", facts, texts.get)) == {"format", "other"}


def test_scala_main_source_set_and_mill_layout() -> None:
    sbt, texts = _repo({
        "core/src/main/scala/acme/Parser.scala": (
            "package acme\npackage text\n\n/** Parses text. */\nclass Parser private (val s: String)\n\n"
            "object Parser {\n  def apply(s: String): Parser = new Parser(s)\n}\n\n"
            "private[acme] class Cache\n\nsealed trait Node\n\n"
            "case class Leaf private[acme](v: Int) extends Node\n"),
        "core/src/test/scala/acme/ParserSpec.scala": "package acme\n\nclass ParserSpec\n",
        "project/Dependencies.scala": "object Dependencies {\n  val x = 1\n}\n",
    })
    names = [e.name for e in scala_exports(sbt, texts.get, _all)]
    assert names == ["acme.text.Parser", "acme.text.Node", "acme.text.Leaf"]
    mill, texts = _repo({
        "fansi/src/fansi/Str.scala": "package fansi\n\nimport java.util\n\n/** A coloured string. */\n"
                                     "class Str(s: String)\n\npackage object fansi\n",
        "project/Build.scala": "object Build\n",
    })
    found = scala_exports(mill, texts.get, _all)
    assert [(e.name, e.path) for e in found] == [("fansi.Str", "fansi/src/fansi/Str.scala")]


def test_python_package_used_through_its_modules() -> None:
    facts, texts = _repo({
        "web/__init__.py": '__version__ = "1.0"\n',
        "web/applications.py": "class Web:\n    pass\n\n\ndef _helper():\n    pass\n",
        "web/status.py": "__all__ = ['code']\n\n\ndef code():\n    pass\n\n\ndef other():\n    pass\n",
        "web/_utils.py": "def util():\n    pass\n",
        "web/middleware/__init__.py": "class Middleware:\n    pass\n",
        "web/middleware/_private.py": "class Hidden:\n    pass\n",
    })
    found = python_module_exports("web/__init__.py", facts, texts.get, _all)
    assert [e.name for e in found] == ["web.applications.Web", "web.middleware.Middleware", "web.status.code"]
    # the package's API falls back to them only when its __init__ offers nothing
    api = package_exports(facts, texts.get, {}, source=_all, importance={})
    assert "web.applications.Web" in {e.name for e in api}


def test_javadoc_across_blank_lines_but_not_a_licence_or_trailing_comment() -> None:
    facts, _ = _repo({
        "src/main/java/acme/Queue.java": (
            "/* Copyright 2020 Acme. Licensed under the MIT license. */\npackage acme;\n\n"
            "import java.util.List;\n\n/**\n A queue of tokens.\n */\n\n@Deprecated\npublic class Queue {\n"
            "    int size; /** not a doc of the next */\n\n    public int next() { return 0; }\n}\n"),
        "lib/util.js": "/**\n * @license MIT, copyright Acme\n */\n\nfunction util() {}\n",
    })
    java = facts["src/main/java/acme/Queue.java"]
    assert _doc(java, "Queue") == "A queue of tokens."
    assert _doc(java, "Queue.next") == ""
    assert _doc(facts["lib/util.js"], "util") == ""


def test_main_type_is_the_first_class_else_the_first_function() -> None:
    alias = ApiName("ini_handler", "ini.h", "ini_handler", "type")
    parse = ApiName("ini_parse", "ini.h", "ini_parse", "function")
    options = ApiName("opts::Options", "opts.hpp", "Options", "class")
    unlocated = ApiName("acme.Router", "", "", "class")
    assert main_name([alias, parse]) == parse
    assert main_name([parse, unlocated, options]) == options
    assert main_name([unlocated, alias]) is None
    assert main_name([]) is None


def test_main_type_is_the_one_the_readme_code_uses_most() -> None:
    error = ApiName("opts::exceptions::parsing", "opts.hpp", "parsing", "class")
    options = ApiName("opts::Options", "opts.hpp", "Options", "class")
    value = ApiName("opts::value", "opts.hpp", "value", "function")
    readme = ("# opts\n\nCreate an `opts::Options` and add options.\n\n```cpp\nopts::Options o(\"prog\");\n"
              "o.add_options()(\"n\", \"count\", opts::value<int>())\n"
              "  (\"v\", \"x\", opts::value<bool>());\n```\n")
    # the type the README uses, though the exception ranks first and the function is used more
    assert main_name([error, value, options], readme) == options
    assert main_name([error, value], readme) == value  # no type used: the function it uses
    assert main_name([error, value, options], "# opts\n\nNo code here.\n") == error
    # a C typedef naming a struct is a type; one naming a callback is not
    context = ApiName("redisContext", "hiredis.h", "redisContext", "type")
    callback = ApiName("redisCallbackFn", "hiredis.h", "redisCallbackFn", "type")
    connect = ApiName("redisConnect", "hiredis.h", "redisConnect", "function")
    c_readme = "Use `redisConnect` to get a `redisContext`; `redisCallbackFn` `redisCallbackFn` replies.\n"
    assert main_name([callback, connect, context], c_readme,
                     frozenset({("hiredis.h", "redisContext")})) == context
    assert main_name([callback, connect, context], c_readme) == connect


def test_readme_opening_of_only_an_html_wrapper_and_a_note_is_no_intro() -> None:
    readme = ('<div align="center">\n\n[![Build](https://img.shields.io/b)](https://ci)\n\n</div>\n\n'
              "# Release versions\n\nNote that `master` is a work in progress.\n\n# Quick start\n\nUse it.\n")
    assert readme_intro(readme) == ""
    wrapped = '<p align="center">\n  <img src="logo.png">\n</p>\n\nA parser for INI files.\n'
    assert readme_intro(wrapped) == "A parser for INI files."


def test_front_door_is_named_after_the_root_package_not_after_its_module() -> None:
    exports = [Export("web.testclient.TestClient", "web/testclient.py", "TestClient", "class"),
               Export("web.config.Config", "web/config.py", "Config", "class"),
               Export("web.applications.Web", "web/applications.py", "Web", "class")]
    rank = {("web/testclient.py", "TestClient"): 0.9, ("web/config.py", "Config"): 0.5}
    assert [e.name for e in front_door_first(exports, rank)] == [
        "web.applications.Web", "web.testclient.TestClient", "web.config.Config"]


def test_a_gems_module_is_its_main_type() -> None:
    gem = ApiName("HTTParty", "lib/httparty.rb", "HTTParty", "module")
    error = ApiName("HTTParty::Error", "lib/httparty/exceptions.rb", "HTTParty.Error", "class")
    readme = "```ruby\nclass Client\n  include HTTParty\nend\nHTTParty.get('/')\n```\n"
    assert main_name([error, gem], readme) == gem
    # a module users import as a file (no symbol) is never the main type
    assert main_name([ApiName("express.application", "lib/application.js", "", "module")], readme) is None


def test_a_second_package_with_an_empty_init_adds_no_modules_to_the_api() -> None:
    facts, texts = _repo({
        "src/pool/__init__.py": "from .manager import Manager\n\n__all__ = ['Manager']\n",
        "src/pool/manager.py": "class Manager:\n    pass\n",
        "testserver/__init__.py": "",
        "testserver/app.py": "def echo():\n    pass\n",
    })
    api = package_exports(facts, texts.get, {}, source=_all, importance={"src/pool": 1.0, "testserver": 0.5})
    assert [e.name for e in api] == ["pool.Manager"]


def test_public_api_reads_main_type_first_and_exceptions_aliases_constants_last() -> None:
    facts, _ = _repo({
        "src/cli.kt": ("package acme.cli\n\n"
                       "open class UsageError(message: String) : RuntimeException(message)\n"
                       "class BadParameterValue(message: String) : UsageError(message)\n"
                       "class Option(val help: String)\n"
                       "abstract class Command(val name: String) {\n    fun main(args: List<String>) {}\n}\n"
                       "typealias Callback = (String) -> Unit\nconst val DEFAULT_WIDTH = 80\n"
                       "fun echo(message: String) {}\n"),
        "log.hpp": ("namespace log {\nusing filename_t = std::string;\n"
                    "class log_ex : public std::exception {};\nclass logger { public: void info(); };\n}\n"),
    })
    assert error_types(facts) == {("src/cli.kt", "UsageError"), ("src/cli.kt", "BadParameterValue"),
                                  ("log.hpp", "log.log_ex")}
    kt = [ApiName(f"acme.cli.{q}", "src/cli.kt", q, k) for q, k in [
        ("BadParameterValue", "class"), ("DEFAULT_WIDTH", "constant"), ("UsageError", "class"),
        ("Callback", "type"), ("echo", "function"), ("Option", "class"), ("Command", "class")]]
    readme = ("Subclass `Command`:\n\n```kotlin\nclass Hello : Command(\"hello\") {\n"
              "  val count by Option(\"n\")\n}\nHello().main(args)\n```\n")
    # the README's type first; the rest in rank order, the exceptions, then the alias and the constant
    assert [a.qualname for a in reader_order(kt, facts, readme)] == [
        "Command", "echo", "Option", "BadParameterValue", "UsageError", "DEFAULT_WIDTH", "Callback"]
    # no README: the first ordinary type leads, never the exception ranked above it
    assert [a.qualname for a in reader_order(kt, facts)][:3] == ["Option", "echo", "Command"]
    cpp = [ApiName("log::filename_t", "log.hpp", "log.filename_t", "type"),
           ApiName("log::log_ex", "log.hpp", "log.log_ex", "class"),
           ApiName("log::logger", "log.hpp", "log.logger", "class")]
    assert [a.name for a in reader_order(cpp, facts)] == ["log::logger", "log::log_ex", "log::filename_t"]


def test_the_readme_intro_never_ends_inside_a_code_block() -> None:
    readme = "# acme\n\nSmall framework.\n\n" + "".join(f"- item {i}\n" for i in range(6)) + \
        "\n```js\nconst app = acme()\napp.get('/', f)\napp.listen(3000)\n```\n\n[badge]: https://x.example/b\n"
    intro = readme_intro(readme, max_lines=12)
    assert intro.count("```") % 2 == 0
    assert "app.listen" not in intro
    assert "Small framework." in intro
    assert readme_rest(readme, max_lines=12).startswith("```js\nconst app = acme()")


def test_badges_after_the_readmes_first_sentence_are_not_words_of_it() -> None:
    readme = ("# fastlog\n\nVery fast C++ logging library. [![ci](https://ci.example/badge.svg)](https://ci.example)"
              "&nbsp; [![Release](https://img.example/v.svg)](https://example.org/releases)\n\n"
              "See ![the pipeline](docs/pipeline.png) for how it works.\n")
    intro = readme_intro(readme)
    assert intro.startswith("Very fast C++ logging library.\n")
    assert "ci.example" not in intro
    assert "Release" not in intro
    assert "![the pipeline](docs/pipeline.png) for how it works." in intro  # an image mid-sentence stays


def test_a_line_of_many_badges_then_a_word_is_read_whole() -> None:
    # with two ways to read each badge this line took 2^40 steps: the test would never return
    readme = "# x\n\nA lib. " + "[![b](https://img.example/b.svg)](https://example.org) " * 40 + "end\n"
    assert readme_intro(readme).endswith("end")


def test_a_readme_line_of_spaces_is_no_label_and_link() -> None:
    # the label and the spaces around it could share a long run of spaces out every way (52 s at 30,000)
    readme = "# x\n\nA lib.\n" + " " * 30000 + "x\n**Docs**: https://example.org/docs\n"
    intro = readme_intro(readme)
    assert intro.startswith("A lib.")
    assert "example.org" not in intro
