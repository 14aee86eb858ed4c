"""parse: golden fixtures per language, plus the malformed inputs a real repository contains."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.analyze.facts import FileFacts, SourceFile, Symbol
from generator.analyze.languages import detect_language
from generator.analyze.parse import extract

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"


def facts_of(name: str) -> FileFacts:
    data = (FIXTURES / name).read_bytes()
    return extract(SourceFile(path=name, language=detect_language(name), size=len(data), sha=""), data)


def parse_text(path: str, text: str | bytes, language: str | None = None) -> FileFacts:
    data = text.encode("utf-8") if isinstance(text, str) else text
    lang = language if language is not None else detect_language(path)
    return extract(SourceFile(path=path, language=lang, size=len(data), sha=""), data)


def sym(facts: FileFacts, qualname: str) -> Symbol:
    found = [s for s in facts.symbols if s.qualname == qualname]
    assert found, f"{qualname} not in {[s.qualname for s in facts.symbols]}"
    return found[0]


def imports(facts: FileFacts) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for imp in facts.imports:
        out[imp.module] = out.get(imp.module, ()) + imp.names
    return out


def refs(facts: FileFacts, kind: str | None = None) -> set[tuple[str, str | None]]:
    return {(r.name, r.scope) for r in facts.references if kind is None or r.kind == kind}


# ---- Python


def test_python_module_docstring_and_constants() -> None:
    facts = facts_of("sample.py")
    assert facts.docstring == "Shapes and the registry that keeps them.\n\nA second paragraph."
    assert facts.warnings == []
    assert sym(facts, "MAX_SIZE").kind == "constant"
    assert sym(facts, "MAX_SIZE").signature == "MAX_SIZE = 100"
    assert not sym(facts, "_PRIVATE_LIMIT").public
    assert "lower_case" not in {s.qualname for s in facts.symbols}


def test_python_classes_methods_and_signatures() -> None:
    facts = facts_of("sample.py")
    shape = sym(facts, "Shape")
    assert (shape.kind, shape.signature, shape.parent) == ("class", "class Shape(Base)", None)
    assert shape.start_line == 27  # the decorator belongs to the definition's span
    init = sym(facts, "Shape.__init__")
    assert (init.kind, init.parent, init.public) == ("method", "Shape", True)
    assert init.signature == "def __init__(self, name: str) -> None"
    area = sym(facts, "Shape.area")
    assert area.signature == "def area(self) -> float"  # decorators stay out of the signature
    assert area.docstring == "The area, in square units."
    describe = sym(facts, "Shape.describe")
    assert describe.signature == 'def describe(self, prefix: str = "#", *, verbose: bool = False) -> str'
    inner = sym(facts, "Shape.describe.inner")
    assert (inner.kind, inner.parent) == ("function", "Shape.describe")
    assert not sym(facts, "Shape._hidden").public
    assert not sym(facts, "_Internal.visible_name").public  # a private class hides its members
    load = sym(facts, "load")
    assert load.signature == "async def load(path: str) -> dict"
    assert load.docstring == "Load a shape from *path*."
    assert (load.start_line, load.end_line) == (61, 64)


def test_python_docstring_is_kept_verbatim_as_data() -> None:
    facts = facts_of("sample.py")
    assert sym(facts, "Shape").docstring == "A shape. Renders as <script>alert(1)</script> | with a pipe."


def test_python_imports_as_written() -> None:
    got = imports(facts_of("sample.py"))
    assert got["os.path"] == ()
    assert got["json"] == ()
    assert got["."] == ("sibling",)
    assert got["..core"] == ("Base", "helper")
    assert got[".util"] == ("*",)


def test_python_references_with_scope() -> None:
    facts = facts_of("sample.py")
    calls = refs(facts, "call")
    assert ("compute_area", "Shape.area") in calls
    assert ("helper_text", "Shape.describe.inner") in calls
    assert ("describe", "_Internal.visible_name") in calls
    assert ("load", "load") in calls
    assert not any(name == "open" for name, _ in calls)  # builtins never resolve to repository symbols
    assert ("Base", "Shape") in refs(facts, "base")  # the base class, which the call graph follows
    names = refs(facts, "name")
    assert ("registered", None) in names  # the decorator is used at module level


# ---- JavaScript / TypeScript / TSX


def test_javascript_symbols_docs_and_imports() -> None:
    facts = facts_of("sample.js")
    assert facts.docstring == "Widgets for the dashboard."
    widget = sym(facts, "Widget")
    assert (widget.kind, widget.signature) == ("class", "export class Widget extends Base")
    assert widget.docstring.startswith("A widget on the <script> dashboard | table.\n@param {string} name")
    assert sym(facts, "Widget.render").kind == "method"
    assert sym(facts, "Widget.render").docstring == "Render into `el`."
    assert sym(facts, "Widget.create").signature == "static create(name)"
    assert not sym(facts, "Widget.#hide").public
    assert sym(facts, "add").docstring == "Adds two numbers."
    assert sym(facts, "add").signature == "export function add(a, b)"
    label = sym(facts, "formatLabel")
    assert (label.kind, label.signature) == ("function", "const formatLabel = (label, width = 10) =>")
    assert label.docstring == "Format a label."
    assert sym(facts, "MAX_WIDGETS").kind == "constant"
    assert sym(facts, "MAX_WIDGETS").docstring == "Maximum widgets per row."
    assert sym(facts, "main").signature == "export default function main()"
    legacy = sym(facts, "Widget.legacy")  # Widget.prototype.legacy = function (x) {...}
    assert (legacy.kind, legacy.parent, legacy.docstring) == ("method", "Widget", "Old-style method.")
    assert sym(facts, "helperExport").signature == "exports.helperExport = (y) =>"
    assert sym(facts, "Handlers.onClick").kind == "method"
    got = imports(facts)
    assert got["react"] == ("React", "useState", "useEffect")
    assert got["./helpers"] == ("helper",)
    assert {"node:path", "./side-effect.css", "./all", "fs"} <= set(got)
    calls = refs(facts, "call")
    assert {("draw", "Widget.render"), ("Widget", "Widget.create"), ("formatLabel", "main")} <= calls
    assert ("Base", "Widget") in refs(facts, "name")


def test_typescript_interfaces_types_enums_namespaces() -> None:
    facts = facts_of("sample.ts")
    assert facts.docstring == "Typed widgets."
    iface = sym(facts, "Renderable")
    assert (iface.kind, iface.signature) == ("interface", "export interface Renderable<T> extends Base")
    assert iface.docstring == "Something that can render."
    assert sym(facts, "Renderable.render").signature == "render(target: T): void"
    alias = sym(facts, "WidgetId")
    assert (alias.kind, alias.signature) == ("type", "export type WidgetId = string | number")
    assert sym(facts, "Color").kind == "enum"
    widget = sym(facts, "Widget")
    assert widget.signature == "export class Widget<T> implements Renderable<T>"  # decorator left out
    assert widget.start_line == 25  # ... but inside the span
    assert sym(facts, "Widget.render").docstring == "Render it."
    assert not sym(facts, "Widget.reset").public
    assert sym(facts, "Shape.area").kind == "method"
    assert sym(facts, "double").signature == "export const double = (n: number): number =>"
    assert sym(facts, "Utils").kind == "namespace"
    assert sym(facts, "Utils.util").parent == "Utils"
    got = imports(facts)
    assert got == {"@angular/core": ("Injectable",), "./options": ("Options",), "fs": ()}
    names = refs(facts, "name")
    assert {("Renderable", "Widget"), ("Options", "Widget.constructor"), ("Color", "Utils.util")} <= names
    assert ("paint", "Widget.render") in refs(facts, "call")


def test_tsx_components() -> None:
    facts = facts_of("sample.tsx")
    assert sym(facts, "Greeting").signature == (
        "export function Greeting({ name }: GreetingProps): JSX.Element"
    )
    assert sym(facts, "Counter").kind == "function"
    assert sym(facts, "Panel.render").kind == "method"
    calls = refs(facts, "call")
    assert {("Button", "Greeting"), ("Greeting", "Panel.render")} <= calls
    assert not any(name == "span" for name, _ in calls)  # HTML tags are not components
    assert imports(facts) == {"react": ("React",), "./button": ("Button",)}


# ---- Go / Rust / Java


def test_go_functions_methods_types_and_docs() -> None:
    facts = facts_of("sample.go")
    assert facts.docstring == "Package shapes draws shapes."
    assert sym(facts, "MaxSides").docstring == "MaxSides is the most sides a shape may have."
    assert sym(facts, "Pi").docstring == "Pi is roughly pi."
    assert not sym(facts, "small").public
    shape = sym(facts, "Shape")
    assert (shape.kind, shape.signature) == ("interface", "type Shape interface")
    assert sym(facts, "Shape.Area").kind == "method"
    square = sym(facts, "Square")
    assert (square.kind, square.signature) == ("struct", "type Square struct")
    assert square.docstring == "Square has equal sides.\nIt is a <b>shape</b> | too."
    assert sym(facts, "Point").docstring == "Point is a location."
    area = sym(facts, "Square.Area")
    assert (area.kind, area.parent, area.public) == ("method", "Square", True)
    assert area.signature == "func (s *Square) Area() float64"
    assert area.docstring == "Area of the square."
    describe = sym(facts, "Square.describe")
    assert describe.signature == "func (s Square) describe(prefix string, verbose bool) string"
    assert not describe.public
    assert sym(facts, "NewSquare").signature == "func NewSquare(side float64) *Square"
    assert sym(facts, "Map").signature == "func Map[T any, U any](xs []T, f func(T) U) []U"
    assert set(imports(facts)) == {"fmt", "strings", "github.com/acme/geo/v2", "os"}
    assert {("Round", "NewSquare"), ("Sprintf", "Square.describe")} <= refs(facts, "call")
    names = refs(facts, "name")
    assert ("Square", "NewSquare") in names
    assert not any(name in {"float64", "string", "int"} for name, _ in names)


def test_rust_items_impls_docs_and_uses() -> None:
    facts = facts_of("sample.rs")
    assert facts.docstring == "Shapes and their areas."
    assert sym(facts, "MAX_SIDES").kind == "constant"
    trait = sym(facts, "Shape")
    assert (trait.kind, trait.signature) == ("trait", "pub trait Shape")
    assert trait.docstring == "Anything with an area."
    assert sym(facts, "Shape.area").kind == "method"
    assert sym(facts, "Shape.area").docstring == "The area."
    square = sym(facts, "Square")
    assert (square.kind, square.docstring) == ("struct", "A square, <script> | safe.")  # across #[derive]
    assert (square.start_line, square.end_line) == (19, 22)  # the attribute is part of the item
    assert sym(facts, "Kind").kind == "enum"
    new = sym(facts, "Square.new")
    assert (new.kind, new.parent, new.signature) == ("method", "Square", "pub fn new(side: f64) -> Self")
    assert new.docstring == "Make a square."
    assert not sym(facts, "Square.secret").public
    assert sym(facts, "Square.area").public  # trait impls are as public as the trait
    assert sym(facts, "Vec.area").parent == "Vec"
    assert sym(facts, "total").signature == "pub fn total<S: Shape>(shapes: &[S]) -> f64"
    assert sym(facts, "nested").kind == "module"
    assert sym(facts, "nested.inner").docstring == "Inside."
    assert sym(facts, "square").kind == "macro"
    got = imports(facts)
    assert got == {
        "std::collections::HashMap": (),
        "crate::geo": ("Point", "Line"),
        "super::util": ("*",),
        "mod::helpers": (),
    }
    assert {("round", "Square.new"), ("area", "Vec.area")} <= refs(facts, "call")
    assert {("Point", "total"), ("HashMap", "total")} <= refs(facts, "name")


def test_java_classes_methods_javadoc_and_imports() -> None:
    facts = facts_of("Sample.java")
    cls = sym(facts, "Sample")
    assert cls.signature == "public class Sample extends Base implements Shape, Comparable<Sample>"
    assert cls.docstring == "A square, with <script> | pipes."
    assert sym(facts, "Sample.MAX_SIDES").kind == "constant"
    ctor = sym(facts, "Sample.Sample")
    assert (ctor.kind, ctor.docstring) == ("method", "Make a square.")
    area = sym(facts, "Sample.area")
    assert area.signature == "public double area()"  # the @Override annotation is left out
    assert area.docstring == "The area.\n@return the area"
    assert area.start_line == 25
    assert not sym(facts, "Sample.secret").public
    assert sym(facts, "Sample.Kind").kind == "enum"
    assert sym(facts, "Sample.Visitor.visit").signature == "T visit(Sample s)"
    shape = sym(facts, "Shape")
    assert (shape.kind, shape.docstring) == ("interface", "Something with an area.")
    assert sym(facts, "Shape.area").signature == "double area()"
    assert sym(facts, "Point").signature == "record Point(int x, int y)"
    assert set(imports(facts)) == {"java.util.List", "java.util.*", "java.lang.Math.max"}
    assert {("square", "Sample.area"), ("ArrayList", "Sample.secret")} <= refs(facts, "call")
    assert {("Base", "Sample"), ("Helpers", "Sample.area")} <= refs(facts, "name")


# ---- definitions-level languages: C, C++, C#, Ruby, PHP, Kotlin


def test_c_functions_structs_macros_and_includes() -> None:
    facts = facts_of("sample.c")
    assert facts.docstring == "A tiny shapes library."  # the licence header is skipped
    area = sym(facts, "area")
    assert (area.kind, area.signature) == ("function", "double area(const struct square *s)")
    assert area.docstring == "Area of a square, <script> | safe."
    helper = sym(facts, "helper")
    assert (helper.docstring, helper.public) == ("Internal helper.", False)  # static
    assert sym(facts, "make_list").signature == "int *make_list(size_t n, int (*cb)(int))"
    assert (sym(facts, "square").kind, sym(facts, "square").docstring) == ("struct", "A square.")
    assert sym(facts, "kind").kind == "enum"
    assert sym(facts, "square_t").kind == "type"
    macro = sym(facts, "MAX_SIDES")
    assert (macro.kind, macro.start_line, macro.end_line) == ("macro", 8, 8)
    assert imports(facts) == {"stdio.h": (), "shapes.h": ()}
    assert ("printf", "helper") in refs(facts, "call")


def test_cpp_classes_namespaces_templates() -> None:
    facts = facts_of("sample.cpp")
    assert facts.docstring == "Geometry in C++."
    assert sym(facts, "geo").kind == "namespace"
    shape = sym(facts, "geo.Shape")
    assert (shape.kind, shape.docstring) == ("class", "A shape with an area.")
    assert sym(facts, "geo.Shape.area").docstring == "The area."
    assert sym(facts, "geo.Square").signature == "class Square : public Shape"
    assert sym(facts, "geo.Square.area").kind == "method"
    total = sym(facts, "geo.total")
    assert total.signature == "template <typename T> double total(const std::vector<T>& shapes)"
    assert total.docstring == "Sum the areas."
    assert sym(facts, "geo_area").parent is None
    assert imports(facts) == {"vector": (), "shape.hpp": ()}


def test_csharp_types_members_and_usings() -> None:
    facts = facts_of("sample.cs")
    square = sym(facts, "Acme.Shapes.Square")
    assert square.signature == "public class Square : IShape"  # the [Serializable] attribute is left out
    assert square.docstring == "A square, &lt;b&gt; | safe."
    assert sym(facts, "Acme.Shapes.IShape").kind == "interface"
    assert sym(facts, "Acme.Shapes.Square.Area").signature == "public double Area()"
    assert sym(facts, "Acme.Shapes.Square.Area").docstring == "The area."
    assert not sym(facts, "Acme.Shapes.Square.Secret").public
    assert sym(facts, "Acme.Shapes.Kind").kind == "enum"
    assert sym(facts, "Acme.Shapes.Point").kind == "struct"
    assert set(imports(facts)) == {"System", "System.Collections.Generic", "System.Math"}


def test_csharp_file_scoped_namespace_names_what_follows_as_a_block_does() -> None:
    file_scoped = parse_text("src/Sink.cs", (
        "using System;\n\nnamespace Acme.Logging;\n\n/// <summary>Writes events.</summary>\n"
        "public class ConsoleSink : ILogSink\n{\n"
        "    public void Emit(string line) => Console.WriteLine(line);\n}\n\n"
        "public interface ILogSink\n{\n    void Emit(string line);\n}\n"))
    block = parse_text("src/Sink.cs", (
        "using System;\n\nnamespace Acme.Logging\n{\n    /// <summary>Writes events.</summary>\n"
        "    public class ConsoleSink : ILogSink\n    {\n"
        "        public void Emit(string line) => Console.WriteLine(line);\n    }\n\n"
        "    public interface ILogSink\n    {\n        void Emit(string line);\n    }\n}\n"))
    for facts in (file_scoped, block):
        assert [(s.qualname, s.kind, s.parent) for s in facts.symbols] == [
            ("Acme.Logging", "namespace", None),
            ("Acme.Logging.ConsoleSink", "class", "Acme.Logging"),
            ("Acme.Logging.ConsoleSink.Emit", "method", "Acme.Logging.ConsoleSink"),
            ("Acme.Logging.ILogSink", "interface", "Acme.Logging"),
            ("Acme.Logging.ILogSink.Emit", "method", "Acme.Logging.ILogSink")]
        assert sym(facts, "Acme.Logging.ConsoleSink").docstring == "Writes events."
        # the call in a method body is that method's, not the namespace's
        scopes = {r.scope for r in facts.references if r.name == "WriteLine"}
        assert scopes == {"Acme.Logging.ConsoleSink.Emit"}


def test_ruby_modules_classes_methods_requires() -> None:
    facts = facts_of("sample.rb")
    assert facts.docstring == "Shapes for Ruby."
    assert sym(facts, "Shapes").kind == "module"
    assert sym(facts, "Shapes.MAX_SIDES").docstring == "The most sides."
    square = sym(facts, "Shapes.Square")
    assert (square.signature, square.docstring) == ("class Square < Base", "A square, <script> | safe.")
    init = sym(facts, "Shapes.Square.initialize")
    assert (init.kind, init.signature, init.docstring) == ("method", "def initialize(side)", "Make a square.")
    assert sym(facts, "Shapes.Square.unit").signature == "def self.unit"
    assert sym(facts, "top_level").signature == "def top_level(x, y = 2)"
    assert imports(facts) == {"json": (), "lib/geo": ()}


def test_php_classes_traits_functions_uses() -> None:
    facts = facts_of("sample.php")
    assert facts.docstring == "Shapes for PHP."
    square = sym(facts, "Square")
    assert square.signature == "class Square extends Base implements Shape"
    assert square.docstring == "A square, <script> | safe."
    assert sym(facts, "Square.area").signature == "public function area(): float"
    assert sym(facts, "Square.__construct").public
    assert not sym(facts, "Square.secret").public
    assert sym(facts, "Named").kind == "trait"
    assert sym(facts, "helper").docstring == "Top-level helper."
    assert imports(facts) == {"Acme\\Geo\\Point": (), "Acme\\Util": ("Math", "Strings")}
    assert ("helper", "Square.secret") in refs(facts, "call")


def test_kotlin_classes_functions_imports() -> None:
    facts = facts_of("sample.kt")
    assert facts.docstring == "Shapes for Kotlin."
    assert sym(facts, "MAX_SIDES").docstring == "The most sides."
    assert sym(facts, "Shape").kind == "interface"
    square = sym(facts, "Square")
    assert (square.signature, square.docstring) == (
        "data class Square(val side: Double) : Shape", "A square, <script> | safe.",
    )
    assert sym(facts, "Square.area").signature == "override fun area(): Double"
    assert not sym(facts, "Square.secret").public
    assert sym(facts, "Kind").kind == "enum"
    assert sym(facts, "total").signature == "fun total(shapes: List<Shape>): Double"
    assert set(imports(facts)) == {"kotlin.math.max", "com.acme.geo.*"}


# ---- bad input


def test_syntax_error_keeps_what_parses_and_warns() -> None:
    source = "def good(a):\n    return a\n\ndef broken(:\n    pass\n\nclass After:\n    pass\n"
    facts = parse_text("pkg/bad.py", source)
    assert "good" in {s.qualname for s in facts.symbols}
    assert "After" in {s.qualname for s in facts.symbols}
    assert len(facts.warnings) == 1
    assert facts.warnings[0].startswith("pkg/bad.py:4: syntax error")


def test_odd_file_names_are_only_data() -> None:
    facts = parse_text("my dir/ünï #[1].py", "def f(:\n    pass\n")
    assert facts.warnings == ["my dir/ünï #[1].py:1: syntax error"]
    assert {s.path for s in facts.symbols} <= {"my dir/ünï #[1].py"}


def test_syntax_errors_in_other_languages_warn_too() -> None:
    facts = parse_text("web/app.ts", "export function ok(): void {}\nclass Broken {\n  m( {\n}\n")
    assert "ok" in {s.qualname for s in facts.symbols}
    assert len(facts.warnings) == 1
    assert facts.warnings[0].startswith("web/app.ts:")


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    facts = parse_text("x.py", b'def f():\n    """caf\xe9 \xff"""\n    return 1\n')
    assert sym(facts, "f").docstring == "caf\ufffd \ufffd"
    assert facts.line_count == 3


def test_bom_and_crlf() -> None:
    data = b'\xef\xbb\xbf"""Doc."""\r\n\r\nclass A:\r\n    """A doc.\r\n\r\n    More."""\r\n'
    facts = parse_text("bom.py", data)
    assert facts.docstring == "Doc."
    a = sym(facts, "A")
    assert a.docstring == "A doc.\n\nMore."
    assert "\r" not in a.signature
    assert (a.start_line, a.end_line) == (3, 6)
    assert facts.line_count == 6


def test_parse_over_budget_gives_up_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    import generator.analyze.parse as parse_module

    source = "def f():\n    return 1\n" * 200
    monkeypatch.setattr(parse_module, "_BUDGET_FROM", 0)
    monkeypatch.setattr(parse_module, "_BUDGET_BASE", -1.0)  # the deadline has passed before parsing starts
    monkeypatch.setattr(parse_module, "_BUDGET_PER_MB", 0.0)
    slow = parse_text("gen/huge.py", source)
    assert slow.symbols == []
    assert slow.warnings == ["gen/huge.py:1: parsing took too long; symbols not extracted"]
    assert slow.line_count == 400
    monkeypatch.setattr(parse_module, "_BUDGET_BASE", 60.0)
    # the budgeted path (callback parse) still extracts everything, text predicates included
    ok = parse_text("gen/huge.py", "X_LIMIT = 3\n" + source)
    assert [s.qualname for s in ok.symbols][:2] == ["X_LIMIT", "f"]
    assert ok.warnings == []


def test_cpp_header_with_h_extension_is_read_as_cpp() -> None:
    header = "namespace geo {\n/// A point.\nclass Point {\npublic:\n    int x() const;\n};\n}\n"
    facts = parse_text("include/geo.h", header)
    assert facts.file.language == "c"
    assert facts.warnings == []
    assert sym(facts, "geo.Point").docstring == "A point."
    assert sym(facts, "geo.Point.x").kind == "method"


def test_empty_and_whitespace_files() -> None:
    empty = parse_text("empty.py", b"")
    assert (empty.symbols, empty.imports, empty.warnings, empty.line_count) == ([], [], [], 0)
    assert parse_text("blank.py", "\n\n").line_count == 2


def test_unknown_language_gets_line_count_only() -> None:
    facts = parse_text("data.bin", b"a\nb\nc", language=None)
    assert facts.line_count == 3
    assert facts.symbols == []
    other = parse_text("script.sh", "echo hi\n")
    assert (other.line_count, other.symbols) == (1, [])


def test_every_kind_is_a_known_symbol_kind() -> None:
    for fixture in sorted(FIXTURES.iterdir()):
        facts = facts_of(fixture.name)
        qualnames = [s.qualname for s in facts.symbols]
        assert len(qualnames) == len(set(qualnames)), fixture.name
        for s in facts.symbols:
            assert "\n" not in s.signature, (fixture.name, s.qualname)
            assert 1 <= s.start_line <= s.end_line <= facts.line_count, (fixture.name, s.qualname)


# ---- documentation files


def test_markdown_title_headings_and_first_paragraph() -> None:
    text = (
        '<div align="center"><img src="logo.png"></div>\n\n'
        "# Project <b>X</b>\n\n"
        "[![badge](https://x/b.svg)](https://x)\n\n"
        "Project X turns | pipes and <script>x</script> into data.\n"
        "It spans two lines.\n\n"
        "```sh\n# not a heading\n```\n\n"
        "## Install ##\n\n"
        "Setext heading\n--------------\n"
    )
    facts = parse_text("README.md", text)
    assert facts.title == "Project <b>X</b>"
    assert [(h.level, h.text, h.line) for h in facts.headings] == [
        (1, "Project <b>X</b>", 3), (2, "Install", 14), (2, "Setext heading", 16),
    ]
    assert facts.docstring == (
        "Project X turns | pipes and <script>x</script> into data. It spans two lines."
    )
    assert facts.symbols == []


def test_markdown_html_comments_and_front_matter_are_not_content() -> None:
    text = "---\ntitle: x\n---\n<!--\nReplace this.\n\n# Not a heading\n-->\n\nReal intro.\n"
    facts = parse_text("docs/page.md", text)
    assert (facts.title, facts.headings, facts.docstring) == ("", [], "Real intro.")


def test_rst_headings() -> None:
    text = (
        "=====\nTitle\n=====\n\n.. image:: x.png\n   :alt: x\n\n"
        "Intro paragraph here.\n\nSection\n-------\n\nSub\n~~~\n\nBody.\n"
    )
    facts = parse_text("docs/index.rst", text)
    assert facts.title == "Title"
    assert [(h.level, h.text) for h in facts.headings] == [(1, "Title"), (2, "Section"), (3, "Sub")]
    assert facts.docstring == "Intro paragraph here."


def test_plain_text_title() -> None:
    facts = parse_text("LICENSE", "MIT License\n\nCopyright (c) someone\n")
    assert facts.title == "MIT License"
    assert facts.line_count == 3


@pytest.mark.parametrize("name", ["notes.md", "index.rst", "README"])
def test_empty_documents(name: str) -> None:
    facts = parse_text(name, b"")
    assert (facts.title, facts.headings, facts.docstring) == ("", [], "")


# ---- Scala (added as one LanguageSpec in generator/analyze/languages.py plus
# generator/analyze/queries/scala.scm)


def test_scala_symbols_docs_and_visibility() -> None:
    facts = facts_of("Sample.scala")
    assert detect_language("Sample.scala") == "scala"
    assert facts.warnings == []
    greeter = sym(facts, "Greeter")
    assert (greeter.kind, greeter.signature) == ("trait", "trait Greeter")
    assert greeter.docstring == "Says hello to people."
    greet = sym(facts, "Greeter.greet")
    assert (greet.kind, greet.parent) == ("method", "Greeter")
    assert greet.signature == "def greet(name: String): String"
    assert greet.docstring == "The greeting for `name`."
    loud = sym(facts, "LoudGreeter")
    assert loud.signature == "class LoudGreeter(prefix: String) extends Greeter with Serializable"
    assert (loud.start_line, loud.end_line, loud.docstring) == (14, 18, "A greeter that shouts.")
    assert not sym(facts, "LoudGreeter.helper").public
    assert sym(facts, "LoudGreeter.helper").signature == "private def helper(): Int"
    companion = next(s for s in facts.symbols if s.signature == "object LoudGreeter")
    assert sym(facts, f"{companion.qualname}.MaxLength").kind == "constant"
    assert sym(facts, f"{companion.qualname}.apply").kind == "method"
    assert sym(facts, "Person").signature == "case class Person(name: String)"
    assert sym(facts, "Color").kind == "enum"
    assert (sym(facts, "Name").kind, sym(facts, "Name").signature) == ("type", "type Name = String")


def test_scala_imports_and_references() -> None:
    facts = facts_of("Sample.scala")
    assert imports(facts) == {"example.util.Strings": (), "example.util": ("Texts", "Other"),
                              "scala.collection.mutable.*": ()}
    calls = refs(facts, "call")
    assert ("upper", "LoudGreeter.greet") in calls
    assert ("LoudGreeter", next(s.qualname for s in facts.symbols if s.name == "apply")) in calls
    assert {("Greeter", "LoudGreeter"), ("Serializable", "LoudGreeter")} <= refs(facts, "name")


def test_rust_line_doc_comments_are_one_paragraph() -> None:
    # each `///` node holds its newline: joined naively, every line became its own paragraph
    facts = parse_text("src/lib.rs", "//! The crate.\n//! It walks.\n\npub struct W;\n\nimpl W {\n"
                       "    /// Create a builder\n    /// for a path.\n    ///\n    /// More.\n"
                       "    pub fn new() -> W { W }\n}\n")
    assert facts.docstring == "The crate.\nIt walks."
    assert sym(facts, "W.new").docstring == "Create a builder\nfor a path.\n\nMore."


def test_cpp_access_labels_decide_which_members_are_public() -> None:
    source = """namespace net {
class Socket {
    int fd_;
    void reset();
public:
    Socket();
    template <typename T> void send(const T& value) {}
    class Options { void apply(); };
protected:
    virtual void on_close() {}
private:
    void drain();
};
struct Endpoint {
    int port() const;
private:
    void resolve();
};
}
"""
    facts = parse_text("src/socket.cpp", source)
    public = {s.qualname: s.public for s in facts.symbols}
    assert public["net.Socket"]
    assert public["net.Endpoint"]
    # before any label a class's members are private, a struct's public
    assert not public["net.Socket.reset"]
    assert public["net.Endpoint.port"]
    assert public["net.Socket.Socket"]
    assert public["net.Socket.send"]
    assert public["net.Socket.Options"]
    assert not public["net.Socket.on_close"]
    assert not public["net.Socket.drain"]
    assert not public["net.Endpoint.resolve"]
    # a nested class's own members follow its own labels (class: private by default)
    assert not public["net.Socket.Options.apply"]
