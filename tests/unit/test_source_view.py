"""Source blocks: a file lexed only where a page shows it highlights those lines as the whole file would."""

from __future__ import annotations

import ast
import html
import inspect
import re
import textwrap
from pathlib import Path

import pygments
import pytest
from pygments.formatters import HtmlFormatter

from generator.pages.source_view import highlighted, highlighted_lines, lexer, merged_spans


def _statement_spans(text: str) -> list[tuple[int, int]]:
    """Every def and class, nested ones too, from its first decorator to its last line (as the parser
    bounds a symbol), and a few module-level statements."""
    spans = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            spans.append((first, node.end_lineno or node.lineno))
    return spans


@pytest.mark.parametrize("module", ["inspect", "dataclasses", "argparse", "typing", "textwrap"])
def test_spans_highlight_like_the_whole_file(module: str) -> None:
    text = Path(inspect.getfile(__import__(module))).read_text(encoding="utf-8")
    spans = _statement_spans(text)
    whole = highlighted_lines(text, "python")
    part = highlighted_lines(text, "python", spans)
    assert len(part) == len(whole)
    shown = {n for a, b in spans for n in range(a, b + 1)}
    lines = text.split("\n")
    for n in range(1, len(whole) + 1):
        if n in shown:
            assert part[n - 1] == whole[n - 1], (module, n)
        else:  # never shown: kept as escaped text
            assert part[n - 1] == html.escape(lines[n - 1], quote=False)
    assert shown
    assert len(shown) < len(lines)


TRICKY = textwrap.dedent('''\
    """Module docstring with def fake(): inside
    and a second line."""
    X = f"{1 + 2!r:>{4}}" + """
    class NotAClass:
    """


    @decorator(
        arg="<b>",
    )
    class Shown:
        """Doc <script>alert(1)</script>."""

        def method(self) -> str:
            return r\'\'\'raw
    text\'\'\'  # comment <i>

        def _private(self):
            pass
    ''')


def test_tricky_code_and_escaping() -> None:
    spans = [(7, 19), (14, 16)]  # a class with a nested method span inside it
    whole = highlighted_lines(TRICKY, "python")
    part = highlighted_lines(TRICKY, "python", spans)
    assert part[6:19] == whole[6:19]
    assert part[:6] == [html.escape(line, quote=False) for line in TRICKY.split("\n")[:6]]
    assert "<script>" not in "".join(part)
    assert "<b>" not in "".join(part)


def test_spans_are_ignored_for_languages_not_known_to_restart() -> None:
    php = "<?php\nfunction f() {\n  return 1;\n}\n"
    assert highlighted_lines(php, "php", [(2, 4)]) == highlighted_lines(php, "php")


def test_merged_spans() -> None:
    assert merged_spans([(5, 9), (1, 3), (6, 7), (8, 12), (13, 13)], 12) == [(1, 3), (5, 12)]
    assert merged_spans([(0, 2), (20, 30), (4, 3)], 10) == [(1, 2)]
    assert merged_spans([], 10) == []


PLAIN_CASES = [
    ("python", TRICKY),
    ("cpp", "template <typename T>\nclass buf final : public detail::buffer<T> {\n  T store_[SIZE];  // <i>\n"
            "  void grow(size_t n) override { if (n > 2) throw std::runtime_error(\"x<y\"); }\n};\n"),
    ("ruby", "class Config\n  attr_reader :path\n  def load(name = 'a&b') = @items[name] ||= {}\nend\n"),
    ("go", "func (s *Server) Serve(l net.Listener) error {\n\treturn s.run(l, `raw <b>`)\n}\n"),
]


@pytest.mark.parametrize(("language", "code"), PLAIN_CASES)
def test_names_and_punctuation_carry_no_span(language: str, code: str) -> None:
    # the formatter leaves names, whitespace, punctuation and operators without a span: exactly Pygments'
    # own HTML with those spans taken out afterwards (what the pages held before), the other colours kept
    stock = pygments.highlight(code, lexer(language), HtmlFormatter(nowrap=True))
    expected = re.sub(r'<span class="(?:n|w|p|o)">([^<]*)</span>', r"\1", stock)
    assert expected != stock  # the case has plain tokens to leave out
    assert highlighted(code, language) == expected
    assert '<span class="k' in expected
