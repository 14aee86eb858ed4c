"""parse: the C++ and JavaScript declaration forms a reference tagger (Universal Ctags) finds and the
wiki used to miss (issue 32's symbol recall), each in a snippet in the style of real headers and modules."""

from __future__ import annotations

from generator.analyze.facts import FileFacts
from generator.analyze.parse_rules import blank_declaration_macros
from tests.support.parsed import parse


def kinds(facts: FileFacts) -> dict[str, str]:
    return {s.qualname: s.kind for s in facts.symbols}


# ---- C++

SPECIALIZATIONS = """\
namespace values {
template <typename T, bool B> struct SignedCheck;

template <typename T>
struct SignedCheck<T, true> {
  template <typename U> void operator()(bool negative, U u, const std::string& text);
};

template <>
class standard_value<bool> : public abstract_value<bool> {
 public:
  std::shared_ptr<Value> clone() const override;
};
}

template <> struct fmt::formatter<my_point> : formatter<string_view> {};
template <typename Int> constexpr auto digits10() noexcept -> int { return 10; }
template <> constexpr auto digits10<int128_opt>() noexcept -> int { return 38; }
"""


def test_cpp_class_and_function_template_specializations_are_named_as_their_template() -> None:
    facts = parse("cxxopts.hpp", SPECIALIZATIONS, "cpp")
    assert kinds(facts) == {
        "values": "namespace", "values.SignedCheck": "struct", "values.SignedCheck.operator()": "method",
        "values.standard_value": "class", "values.standard_value.clone": "method",
        "formatter": "struct", "digits10": "function", "digits10~2": "function"}


DEFAULTED = """\
class thread_pool {
 public:
  thread_pool(const thread_pool &) = delete;
  thread_pool &operator=(thread_pool &&) = delete;
  ParseResult& operator=(const ParseResult&) = default;
  ~thread_pool() = default;
};
"""


def test_cpp_defaulted_and_deleted_members_are_declarations() -> None:
    facts = parse("thread_pool.h", DEFAULTED, "cpp")
    assert [(s.name, s.kind) for s in facts.symbols] == [
        ("thread_pool", "class"), ("thread_pool", "method"), ("operator=", "method"),
        ("operator=", "method"), ("~thread_pool", "method")]
    assert facts.symbols[2].signature == "thread_pool &operator=(thread_pool &&) = delete"


CONVERSIONS = """\
template <typename Char> class basic_format_string {
 public:
  FMT_INLINE operator basic_string_view<Char>() const { return str_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  operator const Char*() const;
};
template <typename Locale> detail::locale_ref::operator Locale() const { return *locale_; }
basic_format_string::operator std::string() const { return {}; }
"""


def test_cpp_conversion_operators_are_named_without_their_parameters() -> None:
    facts = parse("core.h", CONVERSIONS, "cpp")
    assert [(s.qualname, s.kind) for s in facts.symbols] == [
        ("basic_format_string", "class"),
        ("basic_format_string.operator basic_string_view<Char>", "method"),
        ("basic_format_string.operator bool", "method"),
        ("basic_format_string.operator const Char*", "method"),
        ("locale_ref.operator Locale", "method"),
        ("basic_format_string.operator std::string", "method")]
    assert facts.symbols[2].signature == "explicit operator bool() const noexcept"


SPECIFIER_MACROS = """\
#ifdef __has_include
#  if __has_include(<optional>)
#    include <optional>
#  endif
#endif

CXXOPTS_DIAGNOSTIC_PUSH
CXXOPTS_IGNORE_WARNING("-Wnon-virtual-dtor")
class OptionDetails {
 public:
  CXXOPTS_NODISCARD
  const std::string&
  short_name() const { return m_short; }

  CXXOPTS_NODISCARD
  std::shared_ptr<Value> make_storage() const { return m_value->clone(); }
};

struct rgb {
  FMT_CONSTEXPR rgb() : r(0), g(0), b(0) {}
  template <typename T> FMT_CONSTEXPR explicit rgb(T hex) : r(hex >> 16) {}
  uint8_t r, g, b;
};

template <typename Char>
FMT_CONSTEXPR ansi_color_escape<Char> make_emphasis(emphasis em) noexcept {
  return ansi_color_escape<Char>(em);
}
"""


def test_cpp_specifier_macros_do_not_hide_members_constructors_or_templates() -> None:
    facts = parse("cxxopts.hpp", SPECIFIER_MACROS, "cpp")
    assert not facts.warnings  # `__has_include(<optional>)` and the lone macros parse cleanly
    assert kinds(facts) == {
        "OptionDetails": "class", "OptionDetails.short_name": "method",
        "OptionDetails.make_storage": "method", "rgb": "struct", "rgb.rgb": "method", "rgb.rgb~2": "method",
        "make_emphasis": "function"}
    emphasis = next(s for s in facts.symbols if s.name == "make_emphasis")
    assert "FMT_CONSTEXPR ansi_color_escape<Char> make_emphasis(emphasis em) noexcept" in emphasis.signature


def test_macro_blanking_tells_a_constructor_macro_from_an_upper_case_return_type() -> None:
    src = b"struct rgb {\n  FMT_CONSTEXPR rgb() {}\n};\nBOOL open_file(const char *p);\nSOCKET s(int fd);\n"
    out = blank_declaration_macros(src)
    assert len(out) == len(src)
    assert out.count(b"\n") == src.count(b"\n")
    assert b"FMT_CONSTEXPR" not in out
    assert b"BOOL open_file(" in out  # no class is named open_file or s
    assert b"SOCKET s(" in out


def test_macro_blanking_keeps_an_enum_value_and_a_function_named_by_a_macro() -> None:
    src = (b"enum level {\n  info,\n  LAST\n};\nenum one {\n  ONLY\n};\n"
           b"DEFINE_HANDLER(on_read)\n{\n  return 0;\n}\n")
    out = blank_declaration_macros(src)
    assert b"  LAST\n" in out
    assert b"  ONLY\n" in out
    assert b"DEFINE_HANDLER(on_read)\n{" in out


GLUED_MACROS = """\
namespace acme {
namespace sinks {
template <typename Mutex>
class color_sink {
 public:
  void set_formatter(std::unique_ptr<formatter> f);
  void flush();
};

template <typename Mutex>
void ACME_INLINE color_sink<Mutex>::set_formatter(std::unique_ptr<formatter> f) {
  formatter_ = std::move(f);
}

template <typename Mutex>
ACME_INLINE void color_sink<Mutex>::flush() {}

size_t ACME_INLINE pool::queue_size() const { return q_.size(); }
std::string ACME_API sinks::registry::name() const { return name_; }
std::string ACME_INLINE version() { return "1.0"; }
inline null<> localtime_r ACME_NOMACRO(...) { return null<>(); }
}  // namespace sinks
}  // namespace acme

class document {
 public:
  template <typename It>
  ACME_WARN_UNUSED_RESULT
  static document parse(It first, It last) { return document(); }
};
"""


def test_cpp_a_macro_before_a_qualified_name_is_not_its_scope() -> None:
    # tree-sitter reads `void ACME_INLINE color_sink<Mutex>::set_formatter(` as the name
    # `ACME_INLINE color_sink<Mutex>::set_formatter` (a `::` it reports missing, or an ERROR node)
    facts = parse("color_sink-inl.h", GLUED_MACROS, "cpp")
    assert kinds(facts) == {
        "acme": "namespace", "acme.sinks": "namespace", "acme.sinks.color_sink": "class",
        "acme.sinks.color_sink.set_formatter": "method", "acme.sinks.color_sink.flush": "method",
        # out of line, as the one without a macro between its type and its name
        "color_sink.set_formatter": "method", "color_sink.flush": "method",
        "pool.queue_size": "method", "registry.name": "method",
        "acme.sinks.version": "function", "acme.sinks.localtime_r": "function",
        "document": "class", "document.parse": "method"}
    by_name = {s.qualname: s for s in facts.symbols}
    assert by_name["color_sink.set_formatter"].parent == "color_sink"
    assert by_name["color_sink.set_formatter"].name == "set_formatter"
    assert by_name["color_sink.set_formatter"].signature.startswith(
        "template <typename Mutex> void ACME_INLINE color_sink<Mutex>::set_formatter(")
    assert by_name["document.parse"].parent == "document"


# ---- JavaScript

OBJECT_OF_FUNCTIONS = """\
var utils = {
  merge: function (target, source) { return Object.assign(target, source); },
  'content-type': function contentType(value) { return value; },
  clone: (value) => JSON.parse(JSON.stringify(value)),
  flags: { strict: true },
};

module.exports = {
  parse: function parse(str, options) { return str; },
  stringify(obj) { return String(obj); },
};

function compile() {
  const handlers = { onEnd: function () {} };
  return handlers;
}
"""


def test_javascript_functions_in_an_object_literal_given_a_name_are_its_methods() -> None:
    facts = parse("lib/utils.js", OBJECT_OF_FUNCTIONS, "javascript")
    names = {s.name: s.kind for s in facts.symbols}
    assert names == {"merge": "method", "content-type": "method", "clone": "method", "parse": "method",
                     "stringify": "method", "compile": "function"}  # not `flags` (an object), `onEnd`


# ---- Scala

def test_scala_operator_methods_are_symbols() -> None:
    facts = parse("Fansi.scala", "case class Str(chars: Array[Char]) {\n"
                                 "  def ++(other: Str): Str = Str(chars ++ other.chars)\n"
                                 "  def unary_! : Str = this\n  def length: Int = chars.length\n}\n"
                                 "trait Attr { def ++(other: Attr): Attr }\n", "scala")
    assert kinds(facts) == {"Str": "class", "Str.++": "method", "Str.unary_!": "method",
                            "Str.length": "method", "Attr": "trait", "Attr.++": "method"}


RUNS_OF_MACROS = """\
FMT_NORETURN FMT_API void assert_fail(const char* file, int line, const char* message);
template <typename T> constexpr FMT_INLINE auto const_check(T value) -> T { return value; }

template <typename Context> class format_arg_store {
 protected:
  FMT_MSC_WARNING(suppress : 26495)
  size_t size_;

 public:
  template <typename... T>
  FMT_CONSTEXPR FMT_INLINE format_arg_store(T&&... args) : size_(sizeof...(T)) {}
  constexpr FMT_INLINE format_arg_store(unsigned long long desc) : size_(desc) {}
};
"""


def test_cpp_runs_of_macros_and_indented_pragma_macros_are_blanked() -> None:
    facts = parse("core.h", RUNS_OF_MACROS, "cpp")
    assert not facts.warnings
    assert kinds(facts) == {"assert_fail": "function", "const_check": "function",
                            "format_arg_store": "class", "format_arg_store.format_arg_store": "method",
                            "format_arg_store.format_arg_store~2": "method"}
    assert facts.symbols[0].signature.startswith("FMT_NORETURN FMT_API void assert_fail(")


def test_cpp_an_export_macro_before_a_template_is_blanked() -> None:
    facts = parse("ostream.h", "FMT_MODULE_EXPORT template <typename Char>\n"
                               "void vprint(std::basic_ostream<Char>& os, string_view<Char> fmt) {}\n"
                               "FMT_MODULE_EXPORT template <typename... T>\n"
                               "void print(std::ostream& os, format_string<T...> fmt, T&&... args) {}\n",
                 "cpp")
    assert not facts.warnings
    assert kinds(facts) == {"vprint": "function", "print": "function"}


def test_a_long_line_of_upper_case_words_is_read_in_one_pass() -> None:
    # untrusted source: with a run of macros read every way and an unbounded look-ahead per run, these lines
    # took minutes; a declaration after such a run is still found
    noise = "FOO " * 6000
    facts = parse("noise.hpp", f"{noise}\n{noise};x(1);\nSPDLOG_API void flush_all();\n", "cpp")
    assert "flush_all" in kinds(facts)


# ---- Scala: `val A, B = 1` declares A and B

MANY_NAMES = """\
package acme

val Major, Minor = 1
val Single = 0

object Colors {
  val Red, Green = Color(1)
  var Debug, Trace: Boolean = false
  val lower, Upper = 2
  def apply(): Colors = this
}

class Palette {
  val Dark, Light = Color(0)
  val Muted = Color(2)
}

trait Theme { val Accent, Border = Color(3) }
"""


def test_scala_a_val_or_var_of_several_names_declares_each() -> None:
    facts = parse("Colors.scala", MANY_NAMES, "scala")
    assert kinds(facts) == {
        "Major": "constant", "Minor": "constant", "Single": "constant", "Colors": "class",
        "Colors.Red": "constant", "Colors.Green": "constant", "Colors.Debug": "variable",
        "Colors.Trace": "variable", "Colors.Upper": "constant", "Colors.apply": "method",
        "Palette": "class", "Palette.Dark": "constant", "Palette.Light": "constant",
        "Palette.Muted": "constant", "Theme": "trait", "Theme.Accent": "constant", "Theme.Border": "constant"}
    green = next(s for s in facts.symbols if s.qualname == "Colors.Green")
    assert (green.parent, green.start_line, green.signature) == ("Colors", 7, "val Red, Green = Color(1)")


# ---- Ruby: `A = B = 1` assigns both constants in the scope around them

CHAINED = """\
module Acme
  # The default and the current encoding.
  DEFAULT = CURRENT = "UTF-8"
  LOW = MID = HIGH = 0
  MAJOR, MINOR = 2, 1

  class Request
    GET = VERB = (HEAD = "GET")
  end

  Point = Struct.new(:x, :y) do
    ORIGIN = 0
    def norm; end
  end
end
"""


def test_ruby_a_chained_constant_assignment_declares_each_in_its_scope() -> None:
    facts = parse("acme.rb", CHAINED, "ruby")
    assert kinds(facts) == {
        "Acme": "module", "Acme.DEFAULT": "constant", "Acme.CURRENT": "constant", "Acme.LOW": "constant",
        "Acme.MID": "constant", "Acme.HIGH": "constant", "Acme.MAJOR": "constant", "Acme.MINOR": "constant",
        "Acme.Request": "class", "Acme.Request.GET": "constant", "Acme.Request.VERB": "constant",
        "Acme.Request.HEAD": "constant", "Acme.Point": "constant",
        # a declaration inside a value's block, not the value itself, stays under it
        "Acme.Point.ORIGIN": "constant", "Acme.Point.norm": "function"}
    current = next(s for s in facts.symbols if s.qualname == "Acme.CURRENT")
    assert (current.parent, current.start_line) == ("Acme", 3)
