"""Declarations named as a reader writes them, through the real build (issue 33): a Kotlin extension by its
receiver type (`Context.obj`) in the index, the symbolic tier, headings and the file's summary; a
constructor's parameter properties (TypeScript, PHP) as their class's fields; each name of a multi-name
constant."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from answer.retrieval.tiers import search_codebase
from generator.build import build
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.config import load_config

CONTEXT = """\
package com.example.core

/** The state a command runs with. */
class Context(val name: String) {
    var data: MutableMap<String, Any?> = mutableMapOf()

    class Builder {
        var data: MutableMap<String, Any?> = mutableMapOf()
    }
}
"""
EXTENSIONS = """\
package com.example.core

/** Set an arbitrary object on the context. */
var Context.obj: Any?
    get() = data["obj"]
    set(value) { data["obj"] = value }

/** Set an arbitrary object on the context before it is built. */
var Context.Builder.obj: Any?
    get() = data["obj"]
    set(value) { data["obj"] = value }

/** Register a resource closed when the command ends. */
fun <T : AutoCloseable> Context.registerCloseable(closeable: T): T = closeable
"""
TYPESCRIPT = """\
export class Store {
  constructor(
    /** Where the <b>state</b> lives. */
    private readonly backend: Backend,
    plain: number,
  ) {}
  read(): string { return this.backend.read() }
}
"""
PHP = """<?php
namespace App;

class Dotenv
{
    public function __construct(
        /** The repository variables are written to. */
        private readonly RepositoryInterface $repository,
    ) {}
}
"""
JAVA = """\
package com.example;

class Limits {
  /** The bounds of a depth. */
  static final int MAX_DEPTH = 64, MIN_DEPTH = 1;
}
"""
FILES = {"src/core/Context.kt": CONTEXT, "src/core/ContextExtensions.kt": EXTENSIONS,
         "src/store.ts": TYPESCRIPT, "src/Dotenv.php": PHP, "src/Limits.java": JAVA}


def test_extensions_parameter_properties_and_second_constants_are_rows(
        make_repo: Callable[..., Path]) -> None:
    config = load_config(make_repo(FILES))
    index_repository(config)
    store = open_index(config)
    columns = ["path", "qualname", "name", "kind"]
    rows = {(r["path"], r["qualname"]): r for r in store.rows("symbols", columns)}
    ext = "src/core/ContextExtensions.kt"
    assert (rows[(ext, "Context.obj")]["name"], rows[(ext, "Context.obj")]["kind"]) == ("obj", "variable")
    assert rows[(ext, "Context.Builder.obj")]["name"] == "obj"
    assert rows[(ext, "Context.registerCloseable")]["kind"] == "function"
    assert rows[("src/store.ts", "Store.backend")]["kind"] == "field"
    assert ("src/store.ts", "Store.plain") not in rows  # a parameter, no property
    assert rows[("src/Dotenv.php", "Dotenv.repository")]["kind"] == "field"
    assert rows[("src/Limits.java", "Limits.MIN_DEPTH")]["kind"] == "constant"
    # a qualified question finds the extension, not the class it extends; the bare name still does
    for query in ("Context.obj", "Context.registerCloseable", "registerCloseable", "MIN_DEPTH"):
        found = search_codebase(store, query, type="symbolic")
        assert [f.path for f in found.files][:1] == [ext if "Limits" not in query and "DEPTH" not in query
                                                     else "src/Limits.java"], query


def test_extension_headings_and_summary_name_the_receiver(make_repo: Callable[..., Path]) -> None:
    root = make_repo(FILES)
    build(load_config(root), site=False, index=False)
    docs = root / ".sourcebook" / "docs" / "files" / "src"
    page = (docs / "core" / "ContextExtensions.kt.md").read_text()
    headings = [line for line in page.splitlines() if line.startswith("#")]
    assert any("Context.obj" in h and "Builder" not in h for h in headings)
    assert any("Context.Builder.obj" in h for h in headings)
    assert "2 variables (`Context.obj` and `Context.Builder.obj`)" in page
    ts = (docs / "store.ts.md").read_text()
    assert "<code>backend</code>" in ts  # a row of the class's member table
    assert "<b>state</b>" not in ts  # the repository's markup is never passed through as raw HTML
    php = (docs / "Dotenv.php.md").read_text()
    assert "<code>repository</code>" in php
    assert "The repository variables are written to." in php


# issue 33 (sixth round): a macro glued onto a C++ out-of-line method's name, a Ruby chained constant
# assignment, a Scala `val` of several names
SINK = """\
namespace logkit {
template <typename Mutex>
class file_sink {
 public:
  void set_level(int level);
};

template <typename Mutex>
void LOGKIT_INLINE file_sink<Mutex>::set_level(int level) {
  level_ = level;
}
}  // namespace logkit
"""
RUBY = """\
module Logkit
  # The levels a message may have.
  DEBUG = TRACE = 0
end
"""
SCALA = """\
package logkit

object Levels {
  val Debug, Trace = Level(0)
}
"""
DECLS = {"include/logkit/file_sink-inl.h": SINK, "lib/logkit.rb": RUBY, "src/Levels.scala": SCALA}


def test_glued_macros_chained_constants_and_vals_of_several_names_are_named_in_index_and_page(
        make_repo: Callable[..., Path]) -> None:
    root = make_repo(DECLS)
    config = load_config(root)
    build(config, site=False)
    store = open_index(config)
    columns = ["path", "qualname", "name", "parent"]
    rows = {(r["path"], r["qualname"]): r for r in store.rows("symbols", columns)}
    sink = rows[("include/logkit/file_sink-inl.h", "file_sink.set_level")]
    assert (sink["name"], sink["parent"]) == ("set_level", "file_sink")
    assert rows[("lib/logkit.rb", "Logkit.TRACE")]["parent"] == "Logkit"
    assert rows[("src/Levels.scala", "Levels.Trace")]["parent"] == "Levels"
    assert rows[("src/Levels.scala", "Levels.Debug")]["name"] == "Debug"
    docs = root / ".sourcebook" / "docs" / "files"
    for page, heading in (("include/logkit/file_sink-inl.h", "file&#95;sink.set&#95;level"),
                          ("lib/logkit.rb", "Logkit.TRACE"), ("src/Levels.scala", "Levels.Trace")):
        headings = [line for line in (docs / f"{page}.md").read_text().splitlines() if line.startswith("#")]
        assert any(h.split(" {")[0].endswith(" " + heading) for h in headings), (page, headings)
        assert not any("LOGKIT" in h or "DEBUG.TRACE" in h for h in headings)
