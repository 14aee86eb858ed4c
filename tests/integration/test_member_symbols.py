"""Class-level members through the real interfaces (issue 33): a Kotlin property is a symbol with its section
on the file page, as a C# property is; every language's fields and enum constants (the member tables) are
rows of the index's symbols table, found by name by the symbolic tier, and never page sections."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from answer.retrieval.tiers import search_codebase
from generator.build import build
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.config import load_config

KOTLIN = """\
package com.example.cli

class HelpFormatter(val width: Int) {
    /** The column where <b>option</b> descriptions start. */
    val descriptionColumn: Int = width / 3
    private val cache = mutableMapOf<String, String>()

    fun format(text: String): String = text
}
"""
JAVA = """\
package com.example.json;

public final class JsonFactory {
  /** The bit mask of the default parser features. */
  protected int parserFeatureMask = 7;
  public static final String FORMAT_NAME_JSON = "JSON";

  public enum Feature {
    INTERN_FIELD_NAMES,
    CANONICALIZE_FIELD_NAMES
  }
}
"""
PHP = """<?php
namespace App\\Console;

class OutputStyle
{
    /** The width of a line, in columns. */
    private int $lineLength = 120;

    public function write(string $text): void {}
}
"""
TYPESCRIPT = """\
export class StoreApi {
  /** Listeners called on every change. */
  listenerRegistry: Set<() => void> = new Set()
  subscribe(listener: () => void) { this.listenerRegistry.add(listener) }
}
"""
CSHARP = """\
namespace Serilog.Core {
public class LoggingLevelSwitch {
  /// <summary>The current minimum level.</summary>
  public int MinimumLevel { get; set; }
  private volatile int _currentLevel;
}
}
"""
FILES = {"src/HelpFormatter.kt": KOTLIN, "src/JsonFactory.java": JAVA, "src/OutputStyle.php": PHP,
         "src/store.ts": TYPESCRIPT, "src/LoggingLevelSwitch.cs": CSHARP}


def test_members_are_symbol_rows_the_symbolic_tier_finds_by_name(make_repo: Callable[..., Path]) -> None:
    config = load_config(make_repo(FILES))
    index_repository(config)
    store = open_index(config)
    rows = {(r["path"], r["qualname"]): r for r in store.rows(
        "symbols", ["path", "qualname", "name", "kind", "start_line", "end_line", "signature", "docstring",
                    "public"])}
    prop = rows[("src/HelpFormatter.kt", "HelpFormatter.descriptionColumn")]
    assert (prop["kind"], prop["start_line"], prop["signature"]) == (
        "field", 5, "val descriptionColumn: Int = width / 3")
    assert prop["docstring"] == "The column where <b>option</b> descriptions start."
    width = rows[("src/HelpFormatter.kt", "HelpFormatter.width")]  # a constructor's `val`: a member row
    assert (width["kind"], width["start_line"]) == ("field", 3)
    field = rows[("src/JsonFactory.java", "JsonFactory.parserFeatureMask")]
    assert (field["kind"], field["start_line"], field["docstring"]) == (
        "field", 5, "The bit mask of the default parser features.")
    assert rows[("src/JsonFactory.java", "JsonFactory.FORMAT_NAME_JSON")]["kind"] == "constant"
    assert rows[("src/JsonFactory.java", "JsonFactory.Feature.INTERN_FIELD_NAMES")]["kind"] == "variant"
    assert rows[("src/OutputStyle.php", "OutputStyle.lineLength")]["kind"] == "field"
    assert rows[("src/store.ts", "StoreApi.listenerRegistry")]["kind"] == "field"
    level_switch = "Serilog.Core.LoggingLevelSwitch"
    assert rows[("src/LoggingLevelSwitch.cs", f"{level_switch}._currentLevel")]["kind"] == "field"
    assert rows[("src/LoggingLevelSwitch.cs", f"{level_switch}.MinimumLevel")]["kind"] == "field"
    for name, path in (("descriptionColumn", "src/HelpFormatter.kt"),
                       ("parserFeatureMask", "src/JsonFactory.java"),
                       ("CANONICALIZE_FIELD_NAMES", "src/JsonFactory.java"),
                       ("lineLength", "src/OutputStyle.php"), ("listenerRegistry", "src/store.ts"),
                       ("_currentLevel", "src/LoggingLevelSwitch.cs")):
        found = search_codebase(store, name, type="symbolic")
        assert [f.path for f in found.files][:1] == [path], name


def test_a_kotlin_property_has_its_section_and_a_field_stays_in_its_table(
        make_repo: Callable[..., Path]) -> None:
    root = make_repo(FILES)
    build(load_config(root), site=False, index=False)
    docs = root / ".sourcebook" / "docs" / "files" / "src"
    kt = (docs / "HelpFormatter.kt.md").read_text()
    headings = [line for line in kt.splitlines() if line.startswith("#")]
    assert any("HelpFormatter.descriptionColumn" in h and 'data-kind="field"' in h for h in headings)
    assert not any("HelpFormatter.cache" in h for h in headings)  # a private property: no section
    # its doc comment is shown, the repository's markup never passed through as raw HTML
    assert "The column where **option** descriptions start." in kt
    assert "<b>option</b>" not in kt
    assert "<code>width</code>" in kt  # the constructor's property: a row of the class's member table
    java = (docs / "JsonFactory.java.md").read_text()
    assert not any("parserFeatureMask" in line for line in java.splitlines() if line.startswith("#"))
    assert "<code>parserFeatureMask</code>" in java
