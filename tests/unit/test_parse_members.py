"""parse: the class-level members a question about a change often names (a property, a field, a class
constant), declared in the forms each language writes them, each a symbol under its type (issue 33)."""

from __future__ import annotations

from generator.analyze.facts import FileFacts, Symbol
from tests.support.parsed import parse


def kinds(facts: FileFacts) -> dict[str, str]:
    return {s.qualname: s.kind for s in facts.symbols}


def sym(facts: FileFacts, qualname: str) -> Symbol:
    return next(s for s in facts.symbols if s.qualname == qualname)


KOTLIN = """\
package com.example.cli

/** How wide the help text may grow. */
val defaultTerminalWidth: Int = 79
const val MAX_DEPTH = 8
private var registered = 0

class HelpFormatter(val width: Int) {
    /** The column where option descriptions start. */
    val descriptionColumn: Int = width / 3
    var indent = 2
        private set
    override val showDefaults: Boolean get() = true
    private val cache = mutableMapOf<String, String>()

    companion object {
        /** The marker before a required option. */
        const val REQUIRED_MARKER = "*"
        internal val instance by lazy { HelpFormatter(80) }
    }

    fun format(text: String): String {
        val lines = text.lines()
        var total = 0
        return lines.joinToString("\\n")
    }
}

interface Localization {
    val usageTitle: String
    fun optionsTitle(): String
}

enum class Mode(val flag: String) {
    SHORT("-s"), LONG("--long");

    val upper = flag.uppercase()
}
"""


def test_kotlin_class_body_companion_and_top_level_properties_are_symbols() -> None:
    facts = parse("src/HelpFormatter.kt", KOTLIN, "kotlin")
    got = kinds(facts)
    for qualname in ("HelpFormatter.descriptionColumn", "HelpFormatter.indent", "HelpFormatter.showDefaults",
                     "HelpFormatter.cache", "HelpFormatter.Companion.REQUIRED_MARKER",
                     "HelpFormatter.Companion.instance", "Localization.usageTitle", "Mode.upper"):
        assert got[qualname] == "field", qualname
    # the file's own: an UPPER_CASE one stays a constant, the others are variables of the file
    assert got["MAX_DEPTH"] == "constant"
    assert got["defaultTerminalWidth"] == "variable"
    assert got["registered"] == "variable"
    # a function's locals are not, nor a constructor's parameters (a member of the class's table)
    assert not {"HelpFormatter.format.lines", "HelpFormatter.format.total", "lines", "total"} & set(got)
    assert "HelpFormatter.width" not in got
    assert ("HelpFormatter", "width") in {(m.parent, m.name) for m in facts.members}


def test_kotlin_properties_keep_their_doc_comment_visibility_and_one_line_signature() -> None:
    facts = parse("src/HelpFormatter.kt", KOTLIN, "kotlin")
    column = sym(facts, "HelpFormatter.descriptionColumn")
    assert column.docstring == "The column where option descriptions start."
    assert column.signature == "val descriptionColumn: Int = width / 3"
    assert column.parent == "HelpFormatter"
    marker = sym(facts, "HelpFormatter.Companion.REQUIRED_MARKER")
    assert marker.docstring == "The marker before a required option."
    assert sym(facts, "defaultTerminalWidth").docstring == "How wide the help text may grow."
    shown = sym(facts, "HelpFormatter.showDefaults")
    assert shown.signature == "override val showDefaults: Boolean get() = true"
    assert not sym(facts, "HelpFormatter.cache").public
    assert not sym(facts, "registered").public
    assert sym(facts, "HelpFormatter.indent").public


def members(facts: FileFacts) -> list[tuple[str, str, str]]:
    return [(m.parent, m.kind, m.name) for m in facts.members]


def test_java_enum_fields_and_interface_constants_are_members_or_constants() -> None:
    facts = parse("src/JsonToken.java", """\
public interface Versioned {
  /** The name of the default root. */
  String DEFAULT_ROOT_NAME = "root";
  int defaultDepth = 16;
}

enum JsonToken {
  START_OBJECT("{"), END_OBJECT("}");

  /** The token as text. */
  private final String serialized;
  final boolean isStructStart, isStructEnd;
  static final int TOKEN_COUNT = 2;

  JsonToken(String token) { serialized = token; isStructStart = true; isStructEnd = false; }
}
""", "java")
    assert kinds(facts)["Versioned.DEFAULT_ROOT_NAME"] == "constant"
    assert sym(facts, "Versioned.DEFAULT_ROOT_NAME").docstring == "The name of the default root."
    assert kinds(facts)["JsonToken.TOKEN_COUNT"] == "constant"
    assert members(facts) == [
        ("Versioned", "field", "defaultDepth"), ("JsonToken", "variant", "START_OBJECT"),
        ("JsonToken", "variant", "END_OBJECT"), ("JsonToken", "field", "serialized"),
        ("JsonToken", "field", "isStructStart"), ("JsonToken", "field", "isStructEnd")]
    assert facts.members[3].docstring == "The token as text."


def test_every_name_of_a_declaration_of_several_is_a_member() -> None:
    php = parse("src/Application.php", """<?php
class Application
{
    private bool $catchExceptions = true, $autoExit = true;
}
""", "php")
    assert members(php) == [("Application", "field", "catchExceptions"), ("Application", "field", "autoExit")]
    cs = parse("src/Logger.cs", """\
namespace Serilog {
public class Logger {
  /// <summary>Raised when the logger is disposed.</summary>
  public event EventHandler Disposed, Flushed;
  readonly int _minimumLevel, _maximumLevel;
}
}
""", "csharp")
    assert members(cs) == [("Serilog.Logger", "field", n)
                           for n in ("Disposed", "Flushed", "_minimumLevel", "_maximumLevel")]
    assert cs.members[0].docstring == "Raised when the logger is disposed."


def test_a_kotlin_extension_is_named_by_its_receiver_type() -> None:
    facts = parse("src/core/Context.kt", """\
package com.example.core

/** Set an arbitrary object on the context. */
var Context.obj: Any?
    get() = data["obj"]
    set(value) { data["obj"] = value }

val Context.Builder.obj: Any? get() = null

fun <T : AutoCloseable> Context.registerCloseable(closeable: T): T = closeable
inline fun <reified T : Any> BaseCommand<*>.requireObject(): T = TODO()
fun String?.orBlank(): String = this ?: ""
fun (() -> Unit).once() = this()
fun plain() = 1

class Parser {
    fun String.token(): String = this
}
""", "kotlin")
    assert [(s.qualname, s.name, s.kind, s.parent) for s in facts.symbols] == [
        ("Context.obj", "obj", "variable", None),
        ("Context.Builder.obj", "obj", "variable", None),
        ("Context.registerCloseable", "registerCloseable", "function", None),
        ("BaseCommand.requireObject", "requireObject", "function", None),
        ("String.orBlank", "orBlank", "function", None),
        ("once", "once", "function", None),  # a function type is no name to qualify by
        ("plain", "plain", "function", None),
        ("Parser", "Parser", "class", None),
        ("Parser.token", "token", "method", "Parser"),  # a member extension: its class's
    ]
    assert sym(facts, "Context.obj").docstring == "Set an arbitrary object on the context."
    assert sym(facts, "Context.obj").signature == "var Context.obj: Any?"


def test_constructor_parameter_properties_are_their_class_fields() -> None:
    ts = parse("src/store.ts", """\
export class Store {
  constructor(
    /** Where the state lives. */
    private readonly backend: Backend,
    public name?: string,
    readonly retries = 3,
    plain: number,
    options: { depth?: number },
  ) {}
  save(value: string, private_: number) {}
}
""", "typescript")
    # a field of a parameter's object type is no property of the class
    assert [m for m in members(ts) if m[0] == "Store"] == [
        ("Store", "field", "backend"), ("Store", "field", "name"), ("Store", "field", "retries")]
    assert ts.members[0].docstring == "Where the state lives."
    assert ts.members[0].declaration == "private readonly backend: Backend"
    php = parse("src/Dotenv.php", """<?php
class Dotenv
{
    public function __construct(
        /** The repository variables are written to. */
        private readonly RepositoryInterface $repository,
        protected ?Loader $loader = null,
        $plain = 1,
    ) {}
}
""", "php")
    assert members(php) == [("Dotenv", "field", "repository"), ("Dotenv", "field", "loader")]
    assert php.members[0].docstring == "The repository variables are written to."


def test_every_name_after_an_upper_case_constant_is_kept() -> None:
    java = parse("src/Limits.java", """\
class Limits {
  /** The bounds of a depth. */
  static final int MAX_DEPTH = 64, MIN_DEPTH = 1;
  int DEFAULT = 8, current = 0;
}
""", "java")
    assert [(s.qualname, s.kind) for s in java.symbols] == [
        ("Limits", "class"), ("Limits.MAX_DEPTH", "constant"), ("Limits.MIN_DEPTH", "constant"),
        ("Limits.DEFAULT", "constant")]
    assert sym(java, "Limits.MIN_DEPTH").docstring == "The bounds of a depth."
    assert members(java) == [("Limits", "field", "current")]
    php = parse("src/Level.php", "<?php\nclass Level\n{\n    const DEBUG = 100, INFO = 200;\n}\n", "php")
    assert [s.qualname for s in php.symbols] == ["Level", "Level.DEBUG", "Level.INFO"]
    go = parse("limits.go", "package limits\n\nconst MaxDepth, MinDepth = 64, 1\n", "go")
    assert [(s.qualname, s.start_line) for s in go.symbols] == [("MaxDepth", 3), ("MinDepth", 3)]
