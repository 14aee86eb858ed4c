"""parse: the class-level members a question about a change often names (a property, a field, a class
constant), declared in the forms each language writes them, each a symbol under its type (issue 34)."""

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
