"""A declaration's exact name finds its own section first in the site search, in every language.

lunr's words cannot tell a type from its members: `GoRegistry` is the words `go` and `registry`, which every
`GoRegistry.GoRegistry3` title holds too, so fourteen members pushed the type's own section out of the
results. The shards carry each symbol section's exact name as a term of its own (search_split.exact_names),
which the worker looks a one-word query up as. Checked on the pure function, and through a real build and
Debian's chromium typing each name into Material's search box."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from generator.build import build
from generator.site import search_split
from sourcebook.config import load_config
from tests.support.browser import CHROMIUM, new_tab, open_page, type_text
from tests.support.repo_files import write_files

MEMBERS = range(14)  # more members than a result group shows (the worker's MAX_SECTIONS, 12)
# name -> (file, its head, one member (formatted with i), its tail): a type whose members all carry its name,
# in each language the wiki parses
_SHAPES = {
    "GoRegistry": ("go/registry.go", "package reg\n\n// GoRegistry holds entries.\n"
                   "type GoRegistry struct {\n\tn int\n}\n\n",
                   "// GoRegistry{i} reads it.\n"
                   "func (r *GoRegistry) GoRegistry{i}() int {{ return r.n }}\n\n",
                   ""),
    "JavaRegistry": ("java/JavaRegistry.java", "package reg;\n\n/** Holds entries. */\n"
                     "public class JavaRegistry {\n",
                     "    /** Reads it. */\n    public int javaRegistry{i}() {{ return {i}; }}\n", "}\n"),
    "KtRegistry": ("kotlin/KtRegistry.kt", "package reg\n\n/** Holds entries. */\nclass KtRegistry {\n",
                   "    /** Reads it. */\n    fun ktRegistry{i}(): Int = {i}\n", "}\n"),
    "CsRegistry": ("cs/CsRegistry.cs", "namespace Reg {\n/// <summary>Holds entries.</summary>\n"
                   "public class CsRegistry {\n",
                   "    /// <summary>Reads it.</summary>\n    public int CsRegistry{i}() {{ return {i}; }}\n",
                   "}\n}\n"),
    "ScRegistry": ("scala/ScRegistry.scala", "package reg\n\n/** Holds entries. */\nclass ScRegistry {\n",
                   "  /** Reads it. */\n  def scRegistry{i}(): Int = {i}\n", "}\n"),
    "TsRegistry": ("ts/registry.ts", "/** Holds entries. */\nexport class TsRegistry {\n",
                   "  /** Reads it. */\n  tsRegistry{i}(): number {{ return {i}; }}\n", "}\n"),
    "JsRegistry": ("js/registry.js", "/** Holds entries. */\nexport class JsRegistry {\n",
                   "  /** Reads it. */\n  jsRegistry{i}() {{ return {i}; }}\n", "}\n"),
    "RustRegistry": ("rust/lib.rs", "/// Holds entries.\npub struct RustRegistry { n: usize }\n\n"
                     "impl RustRegistry {\n",
                     "    /// Reads it.\n    pub fn rust_registry_{i}(&self) -> usize {{ self.n }}\n", "}\n"),
    "PyRegistry": ("py/registry.py", '"""Registries."""\n\n\nclass PyRegistry:\n    """Holds entries."""\n\n',
                   '    def py_registry_{i}(self):\n        """Reads it."""\n        return {i}\n\n', ""),
    "RbRegistry": ("ruby/rb_registry.rb", "# Holds entries.\nclass RbRegistry\n",
                   "  # Reads it.\n  def rb_registry_{i}\n    {i}\n  end\n\n", "end\n"),
    "PhpRegistry": ("php/PhpRegistry.php", "<?php\nnamespace Reg;\n\n/** Holds entries. */\n"
                    "class PhpRegistry\n{\n",
                    "    /** Reads it. */\n    public function phpRegistry{i}(): int {{ return {i}; }}\n",
                    "}\n"),
    "c_registry": ("c/registry.c", "/* Holds entries. */\nstruct c_registry {\n    int n;\n};\n\n",
                   "/* Reads it. */\nint c_registry_{i}(struct c_registry *r) {{ return r->n; }}\n\n", ""),
    "CppRegistry": ("cpp/registry.cpp", "namespace reg {\n/// Holds entries.\n"
                    "class CppRegistry {\n public:\n",
                    "    /// Reads it.\n    int cppRegistry{i}() const {{ return {i}; }}\n", "};\n}\n"),
}
TYPES = {name: (path, head + "".join(member.format(i=i) for i in MEMBERS) + tail)
         for name, (path, head, member, tail) in _SHAPES.items()}


def _terms(docs: list[dict[str, str]]) -> dict[str, list[tuple[int, float]]]:
    return {term: sorted(zip(numbers.tolist(), weights.tolist(), strict=True))
            for term, (numbers, weights) in search_split.exact_names(docs).items()}


def test_exact_names_are_terms_no_word_can_be() -> None:
    docs = [
        {"location": "files/flag.go.html", "title": "flag.go", "text": "x"},
        {"location": "files/flag.go.html#sym-flagset", "title": "FlagSet", "text": "a=b FlagSet"},
        {"location": "files/flag.go.html#sym-flagset-parse", "title": "FlagSet.Parse", "text": ""},
        {"location": "files/a.java.html#sym-fromjson-string", "title": "fromJson(String, Class&lt;T&gt;)"},
        {"location": "index.html#what-it-is", "title": "What it is", "text": ""},  # not a declaration
        {"location": "files/o.hpp.html#sym-opts-options", "title": "opts::Options", "text": ""},
        {"location": "files/o.hpp.html#sym-opts-options-options", "title": "opts::Options.Options"},
        {"location": "files/x.py.html#sym-x", "title": "<code>two words</code>", "text": ""},
    ]
    terms = _terms(docs)
    assert terms["=flagset="] == [(1, search_split.EXACT_QUALNAME)]
    assert terms["=flagset.parse="] == [(2, search_split.EXACT_QUALNAME)]
    assert terms["=parse="] == [(2, search_split.EXACT_LAST_PART / 2)]
    # a type outranks its constructor, which carries the same last part one level deeper
    last = search_split.EXACT_LAST_PART
    assert terms["=options="] == [(5, last / 2), (6, last / 3)]
    assert terms["=fromjson="] == [(3, search_split.EXACT_QUALNAME)]  # overloads: the name, not the params
    assert terms["=flag.go="] == [(0, search_split.EXACT_QUALNAME)]
    assert not any("what" in t or "two" in t for t in terms)
    # the separator splits on `=`: no word of a text is ever one of these terms
    scored = search_split.score(docs, {"separator": r"[\s\-,:!=\[\]()\"/]+|\.(?!\d)|(?!\b)(?=[A-Z][a-z])"})
    words = [t for t in scored.terms if not t.startswith("=")]
    assert words
    assert not any("=" in t for t in words)
    numbers, weights = scored.terms["=flagset="]
    assert numbers.tolist() == [1]
    assert np.all(weights == search_split.EXACT_QUALNAME)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_files(tmp_path_factory.mktemp("exact") / "repo", dict(TYPES.values()))
    report = build(load_config(root), index=False)
    assert report.site_dir is not None
    return report.site_dir


def _first_section(tools: object, query: str, path: str) -> str:
    """Type `query`; the first result group's first section link (Material lists a group's page first, then
    its sections), once that group is `path`'s page (or after 20 s)."""
    tools.evaluate("(() => { const i = document.querySelector('.md-search__input'); i.focus(); i.value = '';"
                   " return true; })()")
    type_text(tools, query)
    script = ("(() => { const g = document.querySelector('.md-search-result__item');"
              " if (!g) return ''; const a = Array.from(g.querySelectorAll('a'))"
              ".map(x => x.getAttribute('href')); return a.find(h => h.includes('#')) || a[0] || ''; })()")
    first = ""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and path not in first:
        tools.pump(0.3)
        first = str(tools.evaluate(script))
    tools.pump(0.5)  # the last keystroke's query may still be on its way
    return str(tools.evaluate(script))


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_the_exact_name_ranks_its_own_section_first_in_every_language(browser: str, site: Path) -> None:
    tools = new_tab(browser)
    try:
        open_page(tools, (site / "index.html").as_uri())
        wrong = {}
        for name, (path, _source) in TYPES.items():
            first = _first_section(tools, name, path)
            anchor = first.partition("#")[2]
            # the type's own section: its anchor is the name (a namespace may qualify it: sym-reg-csregistry)
            if not (path in first and (anchor == f"sym-{name.lower().replace('_', '-')}"
                                       or anchor.endswith(f"-{name.lower().replace('_', '-')}"))):
                wrong[name] = first
        assert wrong == {}
        assert tools.errors() == []
    finally:
        tools.close()
