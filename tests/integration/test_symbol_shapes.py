"""Complete symbols and type shapes in every language (issue 32): golden snippets through `extract`, and a
tiny repository built for real, whose pages must show the headings, labels and member tables."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

from generator.analyze.facts import FileFacts, SourceFile
from generator.analyze.languages import detect_language
from generator.analyze.parse import extract
from generator.analyze.parse_rules import blank_declaration_macros
from generator.build import build
from generator.pages.anchors import anchor_ids, overloaded, shown_heading
from sourcebook.config import load_config


def parse(path: str, text: str, language: str | None = None) -> FileFacts:
    data = text.encode()
    lang = language or detect_language(path)
    return extract(SourceFile(path=path, language=lang, size=len(data), sha=""), data)


def names(facts: FileFacts) -> dict[str, str]:
    return {s.qualname: s.kind for s in facts.symbols}


def members(facts: FileFacts) -> list[tuple[str, str, str, str]]:
    return [(m.parent, m.kind, m.name, m.declaration) for m in facts.members]


# ---- C: headers, export macros, include guards, typedefs, struct members

C_HEADER = """\
#ifndef CJSON__H
#define CJSON__H

#ifdef __cplusplus
extern "C"
{
#endif

/* The cJSON structure: */
typedef struct cJSON
{
    /* next/prev allow you to walk array/object chains. */
    struct cJSON *next;
    int type; /* The type of the item */
    char name[16];
} cJSON;

typedef enum { cJSON_False = 0, cJSON_True } cJSON_bool_kind;
typedef int (*cJSON_hook)(void *user, const char *key);

/* Parse a value. */
CJSON_PUBLIC(cJSON *) cJSON_Parse(const char *value);
CJSON_PUBLIC(void) cJSON_Delete(cJSON *item);
MYLIB_API int mylib_version(void);
FILE *open_file(const char *path);

#ifdef __cplusplus
}
#endif

#endif
"""


def test_c_header_declarations_behind_macros_and_guards() -> None:
    facts = parse("cJSON.h", C_HEADER)
    found = names(facts)
    for fn in ("cJSON_Parse", "cJSON_Delete", "mylib_version", "open_file"):
        assert found.get(fn) == "function", (fn, found)
    assert found["cJSON_hook"] == "type"  # a function-pointer typedef
    assert facts.warnings == []  # extern "C" split over two #ifdef blocks is no syntax error
    parse_doc = next(s for s in facts.symbols if s.name == "cJSON_Parse")
    assert parse_doc.docstring == "Parse a value."
    assert "CJSON_PUBLIC(cJSON *) cJSON_Parse(const char *value)" in parse_doc.signature  # as written
    struct = [m for m in members(facts) if m[2] in ("next", "type", "name")]
    assert [(m[1], m[2], m[3]) for m in struct] == [
        ("field", "next", "struct cJSON *next"), ("field", "type", "int type"),
        ("field", "name", "char name[16]")]
    docs = {m.name: m.docstring for m in facts.members}
    assert docs["next"] == "next/prev allow you to walk array/object chains."
    assert docs["type"] == "The type of the item"  # a trailing comment
    assert ("variant", "cJSON_True") in {(m.kind, m.name) for m in facts.members}


def test_macro_blanking_keeps_offsets_and_leaves_types_alone() -> None:
    src = b"FILE *open_file(const char *p);\nSPDLOG_API void f(int x);\nclass FOO_EXPORT Bar : public B {};\n"
    out = blank_declaration_macros(src)
    assert len(out) == len(src)
    assert out.startswith(b"FILE *open_file(")  # an upper-case return type is no macro
    assert b"SPDLOG_API" not in out
    assert b"FOO_EXPORT" not in out
    assert b"void f(int x);" in out
    assert re.search(rb"class\s+Bar :", out)


# ---- C++: headers, namespaces, templates, out-of-line members, export macros

CPP_HEADER = """\
#pragma once
namespace spdlog {
class SPDLOG_API logger {
public:
    explicit logger(std::string name) : name_(std::move(name)) {}
    template<typename T> void log(const T &msg);
    const std::string &name() const;
    logger &operator=(logger other) noexcept;
    virtual ~logger() = default;
private:
    std::string name_;
    int level_ = 0;
};
SPDLOG_API void set_level(int log_level);
using sink_ptr = std::shared_ptr<sink>;
enum class level_enum : int { trace, debug };
}
template<typename Mutex>
SPDLOG_INLINE rotating_file_sink<Mutex>::rotating_file_sink(filename_t base) : base_(base) {}
SPDLOG_INLINE const std::string &spdlog::logger::name() const { return name_; }
"""


def test_cpp_header_classes_namespaces_templates_and_macros() -> None:
    facts = parse("logger.h", CPP_HEADER, "cpp")
    found = names(facts)
    assert found["spdlog"] == "namespace"
    assert found["spdlog.logger"] == "class"  # not a function named logger of type SPDLOG_API
    for method in ("logger", "log", "name", "operator=", "~logger"):
        assert found[f"spdlog.logger.{method}"] == "method", method
    assert found["spdlog.set_level"] == "function"
    assert found["spdlog.sink_ptr"] == "type"
    assert found["spdlog.level_enum"] == "enum"
    assert found["rotating_file_sink.rotating_file_sink"] == "method"  # out of line, template class
    assert found["logger.name"] == "method"  # out of line, returning a reference, qualified twice
    assert facts.warnings == []
    assert ("spdlog.logger", "field", "name_", "std::string name_") in members(facts)
    assert [m[2] for m in members(facts) if m[1] == "variant"] == ["trace", "debug"]


def test_a_header_is_cpp_in_a_cpp_repository_or_when_it_holds_cpp(make_repo: Callable[..., Path]) -> None:
    from generator.analyze.scan import scan

    cpp_repo = make_repo({"a.cpp": "int f() { return 1; }\n", "b.cpp": "int g();\n",
                          "plain.h": "int f(void);\n", "c/one.c": "int h(void) { return 0; }\n"},
                         name="cpprepo")
    langs = {f.path: f.language for f in scan(load_config(cpp_repo)).files}
    assert langs["plain.h"] == "cpp"  # most of the repository is C++
    c_repo = make_repo({"a.c": "int f(void) { return 1; }\n", "b.c": "int g(void);\n",
                        "plain.h": "int f(void);\n",
                        "wrap.h": "namespace w {\nclass A { public: int x; };\n}\n"}, name="crepo")
    langs = {f.path: f.language for f in scan(load_config(c_repo)).files}
    assert langs["plain.h"] == "c"
    assert langs["wrap.h"] == "cpp"  # a C repository's header with C++ syntax


# ---- TypeScript / JavaScript: exported consts of every kind, enum members, interface properties

TS = """\
export const create = (<T>(createState: Creator<T> | undefined) =>
  createState ? createImpl(createState) : createImpl) as Create
export const redux = reduxImpl as unknown as Redux
export const ZodString = $constructor("ZodString", (inst, def) => { inst.x = 1 })
export const parse = (schema: Schema, data: unknown) => schema.parse(data)
export namespace util { export function f(): void {} }
const local = 3
export enum Color { Red, Green = "g" }
export interface Options {
  /** The name shown. */
  name: string
  count?: number
}
"""


def test_typescript_exported_consts_namespaces_and_shapes() -> None:
    facts = parse("index.ts", TS)
    found = names(facts)
    assert found["create"] == "function"  # a function behind a cast
    assert found["parse"] == "function"
    assert found["redux"] == "constant"
    assert found["ZodString"] == "constant"  # a class made by a factory
    assert found["util"] == "namespace"
    assert found["util.f"] == "function"
    assert "local" not in found
    color = [(m[1], m[2]) for m in members(facts) if m[0] == "Color"]
    assert color == [("variant", "Red"), ("variant", "Green")]
    opts = {m.name: m for m in facts.members if m.parent == "Options"}
    assert opts["name"].declaration == "name: string"
    assert opts["name"].docstring == "The name shown."
    assert "count" in opts
    js = parse("index.js", "export const handler = makeHandler({ a: 1 })\nexport const f = function () {}\n")
    assert names(js) == {"handler": "constant", "f": "function"}


# ---- Go, Rust, Java, C#, Kotlin, PHP: shapes, trait labels, overloads

def test_go_struct_fields_with_their_docs() -> None:
    facts = parse("mux.go", "package chi\n\n// Mux routes.\ntype Mux struct {\n"
                  "\t// handler serves every request\n\thandler http.Handler\n\tinline bool // chain inline\n"
                  "\tEmbedded\n}\n")
    assert members(facts) == [("Mux", "field", "handler", "handler http.Handler"),
                              ("Mux", "field", "inline", "inline bool"),
                              ("Mux", "field", "Embedded", "Embedded")]
    docs = [m.docstring for m in facts.members]
    assert docs[:2] == ["handler serves every request", "chain inline"]


RUST = """\
/// A value.
pub enum Value {
    /// Nothing.
    Null,
    Bool(bool),
}
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}
impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}
impl Value { pub fn is_null(&self) -> bool { true } }
pub struct Point { pub x: i32, y: i32 }
"""


def test_rust_variants_fields_and_trait_impls_told_apart() -> None:
    facts = parse("value.rs", RUST)
    assert members(facts) == [("Value", "variant", "Null", "Null"),
                              ("Value", "variant", "Bool", "Bool(bool)"),
                              ("Point", "field", "x", "pub x: i32"), ("Point", "field", "y", "y: i32")]
    assert facts.members[0].docstring == "Nothing."
    over = overloaded(facts.symbols)
    headings = {s.qualname: shown_heading(s, over) for s in facts.symbols}
    assert headings["Value.fmt"] == "Value.fmt (Display)"
    assert headings["Value.fmt~2"] == "Value.fmt (Debug)"
    assert headings["Value.is_null"] == "Value.is_null"
    anchors = anchor_ids(facts.symbols)
    assert (anchors["Value.fmt"], anchors["Value.fmt~2"]) == ("sym-value-fmt-display", "sym-value-fmt-debug")


JAVA = """\
package x;
public class Gson {
  public <T> T fromJson(String json, Class<T> classOfT) { return null; }
  public <T> T fromJson(Reader json, Type typeOfT) throws IOException { return null; }
  public Object fromJson(@Nullable JsonElement json) { return null; }
  private final int depth = 0;
  private void helper() {}
}
enum Level { LOW, HIGH }
record Pair(String left, int right) {}
"""


def test_java_overloads_enum_constants_and_record_components() -> None:
    facts = parse("Gson.java", JAVA)
    over = overloaded(facts.symbols)
    headings = [shown_heading(s, over) for s in facts.symbols if s.name == "fromJson"]
    assert headings == ["Gson.fromJson(String, Class<T>)", "Gson.fromJson(Reader, Type)",
                        "Gson.fromJson(JsonElement)"]
    anchors = anchor_ids(facts.symbols)
    ids = [anchors[s.qualname] for s in facts.symbols if s.name == "fromJson"]
    assert ids == ["sym-gson-fromjson-string-class-t", "sym-gson-fromjson-reader-type",
                   "sym-gson-fromjson-jsonelement"]
    got = members(facts)
    assert ("Level", "variant", "LOW", "LOW") in got
    assert ("Level", "variant", "HIGH", "HIGH") in got
    assert ("Pair", "field", "left", "String left") in got
    assert ("Pair", "field", "right", "int right") in got


def test_csharp_kotlin_php_enum_members() -> None:
    cs = parse("Level.cs", "namespace N {\npublic enum Level {\n  /// <summary>Low.</summary>\n  Low = 1,\n"
                           "  High\n}\npublic class C {\n  private int count;\n}\n}\n")
    level = [(m[1], m[2]) for m in members(cs) if m[0] == "N.Level"]
    assert level == [("variant", "Low"), ("variant", "High")]
    assert ("N.C", "field", "count", "private int count") in members(cs)
    kt = parse("Level.kt", "enum class Level { LOW, HIGH }\ndata class P(val x: Int, val y: Int)\n")
    assert [(m[1], m[2]) for m in members(kt)] == [("variant", "LOW"), ("variant", "HIGH"),
                                                  ("field", "x"), ("field", "y")]
    php = parse("Level.php", "<?php\nenum Level {\n  case Low;\n  case High;\n}\n"
                             "class C {\n  private int $count = 0;\n}\n")
    assert [(m[1], m[2]) for m in members(php)] == [("variant", "Low"), ("variant", "High"),
                                                    ("field", "count")]


# ---- the pages of a built repository

def _text(md: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", md))


def test_built_pages_show_overloads_traits_shapes_and_private_members(make_repo: Callable[..., Path]) -> None:
    root = make_repo({
        "src/Gson.java": JAVA,
        "src/value.rs": RUST,
        "mux.go": ("package chi\n\n// Mux routes.\ntype Mux struct {\n\t// handler serves\n"
                   "\thandler http.Handler\n}\n"),
        "Svc.cs": ("namespace N {\npublic class Svc {\n  private void Helper() {}\n"
                   "  public void Run() {}\n}\n}\n"),
        "include/logger.hpp": CPP_HEADER,
    })
    build(load_config(root), site=False, index=False)
    docs = root / ".sourcebook" / "docs" / "files"
    java = (docs / "src" / "Gson.java.md").read_text()
    headings = [line for line in java.splitlines() if line.startswith("#")]
    assert any(h.endswith(" Gson.fromJson(String, Class&lt;T&gt;) { #sym-gson-fromjson-string-class-t "
                          'data-kind="method" }') for h in headings), headings
    assert any("#sym-gson-fromjson-reader-type" in h for h in headings)
    assert any("Gson.helper" in h for h in headings)  # a private method has its section
    assert "not public · method" in _text(java)
    assert "<th>Variant</th>" in java
    assert "<code>LOW</code>" in java
    rust = (docs / "src" / "value.rs.md").read_text()
    assert "Value.fmt (Display) { #sym-value-fmt-display" in html.unescape(rust)
    assert "Value.fmt (Debug) { #sym-value-fmt-debug" in html.unescape(rust)
    assert "<code>Bool(bool)</code>" in rust
    go = (docs / "mux.go.md").read_text()
    assert "<th>Field</th>" in go
    assert "<code>handler http.Handler</code>" in go
    assert "handler serves" in go
    cs = (docs / "Svc.cs.md").read_text()
    assert any("N.Svc.Helper" in line and line.startswith("#") for line in cs.splitlines())
    cpp = html.unescape((docs / "include" / "logger.hpp.md").read_text())
    for heading in ("spdlog.logger {", "spdlog.logger.name {", "spdlog.set_level {", "spdlog.level_enum {"):
        assert heading in cpp, heading


def test_kotlin_companions_and_rust_module_declarations() -> None:
    kt = parse("A.kt", "class A {\n  companion object {\n    fun f() {}\n  }\n}\n"
                       "class B {\n  companion object Named {\n  }\n}\n")
    assert names(kt) == {"A": "class", "A.Companion": "class", "A.Companion.f": "method", "B": "class",
                         "B.Named": "class"}
    rs = parse("src/lib.rs", "mod net;\npub mod api;\n")
    assert names(rs) == {"net": "module", "api": "module"}
    assert {i.module for i in rs.imports} == {"mod::net", "mod::api"}  # still the files they import


def test_typescript_generic_call_signatures_on_their_own_lines_parse_cleanly() -> None:
    src = ("export type UseBound<S> = {\n  (): State<S>\n  <U>(selector: (state: S) => U): U\n} & S\n\n"
           "type Create = {\n  <T>(init: T): Store<T>\n\n  <T>(): <M>(init: T) => Store<T>\n}\n"
           "const toThenable =\n  <R, I>(fn: (input: I) => R) =>\n  (input: I) => fn(input)\n")
    facts = parse("react.ts", src)
    assert facts.warnings == []  # valid TypeScript: no syntax error
    assert {"UseBound", "Create", "toThenable"} <= set(names(facts))
    bound = next(s for s in facts.symbols if s.name == "UseBound")
    assert bound.signature.startswith("export type UseBound<S>")


def test_a_reopened_namespace_is_one_symbol_holding_every_block() -> None:
    facts = parse("a.hpp", "namespace a {\nclass X {};\n}\nnamespace a {\nclass Y {};\nvoid f();\n}\n", "cpp")
    assert names(facts) == {"a": "namespace", "a.X": "class", "a.Y": "class", "a.f": "function"}


def test_javascript_functions_assigned_to_an_object_are_its_methods() -> None:
    js = parse("lib/application.js", "var app = exports = module.exports = {};\n"
                                     "app.all = function all(path) { return 1 };\n"
                                     "exports.x = function () {};\nthis.y = () => 1;\n")
    assert names(js) == {"app.all": "method", "x": "function"}


def test_macros_that_expand_to_braces_and_angle_header_conditions_do_not_hide_declarations() -> None:
    src = ("#if FMT_HAS_INCLUDE(<string_view>)\n#  include <string_view>\n#endif\n"
           "FMT_BEGIN_NAMESPACE\ntemplate <typename T> struct arg_data {\n  T x;\n};\n"
           "enum kind {\n  first,\n  LAST\n};\nFMT_END_NAMESPACE\n")
    prepared = blank_declaration_macros(src.encode())
    assert b"FMT_BEGIN_NAMESPACE" not in prepared
    assert b"  LAST\n" in prepared  # an indented word may be an enum's last value: kept
    facts = parse("core.h", src, "cpp")
    assert names(facts) == {"arg_data": "struct", "kind": "enum"}
    assert [m.name for m in facts.members if m.kind == "variant"] == ["first", "LAST"]


def test_trailing_specifier_macros_are_blanked_but_casts_of_constants_are_not() -> None:
    src = b"logger(logger &&other) SPDLOG_NOEXCEPT;\nobj = (void*)REDIS_REPLY_INTEGER;\n"
    out = blank_declaration_macros(src)
    assert b"SPDLOG_NOEXCEPT" not in out
    assert b"(void*)REDIS_REPLY_INTEGER;" in out


def test_ruby_methods_made_by_attr_alias_and_define_method() -> None:
    rb = parse("a.rb", "class A\n  attr_reader :name, :age\n  # The size.\n  attr_accessor :size\n"
                       "  alias to_s name\n  alias_method :inspect, :to_s\n  define_method(:foo) { 1 }\n"
                       "  def bar; end\nend\n")
    assert names(rb) == {"A": "class", "A.name": "method", "A.age": "method", "A.size": "method",
                         "A.to_s": "method", "A.inspect": "method", "A.foo": "method", "A.bar": "method"}
    size = next(s for s in rb.symbols if s.name == "size")
    assert size.signature == "attr_accessor :size"
    assert size.docstring == "The size."


CPP_OVERLOADS = """\
class Buffer {
 public:
    Buffer(Buffer const& other);
    Buffer(Buffer &&);
    Buffer(char *data, int size);
};
"""


def test_cpp_overload_headings_keep_their_reference_and_pointer_marks() -> None:
    facts = parse("buffer.hpp", CPP_OVERLOADS, "cpp")
    over = overloaded(facts.symbols)
    headings = [shown_heading(s, over) for s in facts.symbols if s.name == "Buffer" and s.kind == "method"]
    assert headings == ["Buffer.Buffer(Buffer&)", "Buffer.Buffer(Buffer&&)", "Buffer.Buffer(char*, int)"]
