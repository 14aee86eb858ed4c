"""bench/symbol_recall.py's Scala reference: Universal Ctags has no Scala parser, so the bench defines the
language's declarations as regexes; run through the real ctags on a file in the style of a Scala library."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.symbol_recall import ctags, declarations

SCALA = """\
package fansi

/** A string with colors. */
sealed abstract class Attr private[fansi] (val applyMask: Long) {
  def ++(other: Attr): Attrs = Attrs(this, other)
  private[fansi] def transform(state: Long): Long = state
  override def toString: String = {
    def render(x: Long) = x.toString
    render(applyMask)
  }
  type Category = Attr
}
final case class Str private (chars: Array[Char]) extends Ordered[Str]
object Attr {
  implicit def fromColor(c: Color): Attr = c
  case object Reset extends Attr(0L)
}
trait Show[A]
enum Mode { case On, Off }
opaque type Id = Int
// def commented(x: Int) = x
"""


@pytest.mark.skipif(shutil.which("ctags") is None, reason="Universal Ctags is the measuring tool")
def test_scala_declarations_are_tagged_by_the_regex_definition(tmp_path: Path) -> None:
    (tmp_path / "Fansi.scala").write_text(SCALA, encoding="utf-8")
    found = sorted((str(t["name"]), cat) for t, cat in declarations(ctags(tmp_path, ["Fansi.scala"])))
    assert found == sorted([
        ("Attr", "class"), ("++", "method"), ("transform", "method"), ("toString", "method"),
        ("render", "method"),  # a local def: a regex cannot tell it from a member (stated in the bench)
        ("Category", "typedef"), ("Str", "class"), ("Attr", "object"), ("fromColor", "method"),
        ("Reset", "object"), ("Show", "trait"), ("Mode", "enum"), ("Id", "typedef")])
