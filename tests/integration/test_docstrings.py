"""Docstrings rendered as documentation: sections per style, resolved names, nothing from the repo runs."""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import pytest

from generator.analyze.facts import FileFacts, SourceFile, Symbol
from generator.build import build
from generator.markup.docmarkup import xref_names
from generator.markup.docstrings import docstring_summary, render_docstring
from generator.pages.name_links import NameIndex, page_resolver
from generator.pages.render_markdown import relative_link
from sourcebook.config import load_config

KNOWN = {"pkg.Foo": "#sym-foo", "Foo": "#sym-foo", "bar": "#sym-bar", "Foo.run": "other.md#sym-foo-run",
         "Widget": "#sym-widget", "Reader": "io.md#sym-reader"}


def resolve(name: str) -> str | None:
    return KNOWN.get(name)


def html_of(md: str) -> str:
    """The HTML the site's Markdown extensions make of a rendered docstring."""
    return markdown.markdown(md, extensions=["tables", "admonition", "attr_list", "toc",
                                             "pymdownx.superfences"])


def test_google_style_sections() -> None:
    md = render_docstring(
        "Summary line.\n\nArgs:\n    x (int): The x.\n    y: The y\n        continued.\n\n"
        "Returns:\n    str: A thing.\n\nRaises:\n    ValueError: When bad.\n\n"
        "Examples:\n    Some text.\n\n    >>> f(1)\n    2\n\nNote:\n    Be careful.\n", "python", resolve)
    assert "| Name | Type | Description |" in md
    assert "| `x` | `int` | The x. |" in md
    assert "| `y` |   | The y continued. |" in md
    assert "| `str` | A thing. |" in md
    assert "| `ValueError` | When bad. |" in md
    assert "```pycon\n>>> f(1)\n2\n```" in md
    page = html_of(md)
    assert '<div class="admonition note">' in page
    assert "<table>" in page
    assert "Args:" not in md


def test_numpy_style_sections() -> None:
    md = render_docstring(
        "Summary.\n\nParameters\n----------\nx : int\n    The x.\ny : Foo, optional\n    The y.\n\n"
        "Returns\n-------\nstr\n    Something.\n\nExamples\n--------\n>>> f(1)\n2\n", "python", resolve)
    assert "| `x` | `int` | The x. |" in md
    assert "| `y` | [`Foo`](#sym-foo) | The y. |" in md  # a type that names a known symbol links to it
    assert "| `str` | Something. |" in md
    assert "```pycon\n>>> f(1)\n2\n```" in md
    assert "----------" not in md


SPHINX = """Do the thing with :class:`~pkg.Foo`, :py:func:`bar` and :meth:`!Foo.run`.

Also :class:`the widget <Widget>`, :exc:`Missing`, :ref:`some-label` and ``literal`` *emphasis*.

.. versionadded:: 2.0
   Added things.

.. deprecated:: 3.1
   Use :func:`bar`.

:param x: The x, see :func:`bar`.
:type x: int
:param str y: The y.
:returns: A value.
:rtype: str
:raises ValueError: when bad.

.. note::
   A trailing note.

.. admonition:: Custom title

   Body, then a literal block::

       code = 1

.. code-block:: javascript

   let a = 1;

.. image:: https://example.com/logo.png
   :target: https://example.com
"""


def test_sphinx_style_roles_directives_and_fields() -> None:
    md = render_docstring(SPHINX, "python", resolve)
    assert "[`Foo`](#sym-foo)" in md  # `~` shows the last component
    assert "[`bar()`](#sym-bar)" in md  # a function role gets its parentheses; the domain is dropped
    assert "`Foo.run()`" in md
    assert "[`Foo.run()`]" not in md
    assert "[`the widget`](#sym-widget)" in md  # `title <target>`, shown as code as Sphinx does
    assert "`Missing`" in md
    assert "`some-label`" in md
    assert "`literal`" in md
    assert "*emphasis*" in md
    assert '!!! info "Added in version 2.0"' in md
    assert '!!! warning "Deprecated since version 3.1"' in md
    assert "| `x` | `int` | The x, see [`bar()`](#sym-bar). |" in md
    assert "| `ValueError` | when bad. |" in md  # the note after the fields is not swallowed by :raises:
    assert '!!! note "Note"\n    A trailing note.' in md
    assert '!!! note "Custom title"' in md
    assert "```python\ncode = 1\n```" in md
    assert "```javascript\nlet a = 1;\n```" in md
    for raw in (":class:", ":func:", ":param", ":rtype:", ".. ", "::", ":target:", "example.com/logo"):
        assert raw not in md, raw
    page = html_of(md)
    assert page.count('<div class="admonition') == 4


def test_sphinx_rtype_without_returns_is_still_a_returns_table() -> None:
    md = render_docstring("Sends it.\n\n:param url: URL.\n:rtype: pkg.Foo\n", "python", resolve)
    assert md.endswith("**Returns**\n\n| Type | Description |\n|---|---|\n| [`pkg.Foo`](#sym-foo) |   |")


def test_unresolved_names_are_code_and_summary_has_no_roles() -> None:
    md = render_docstring("Uses :class:`Nope` and `nothing.here`.", "python", lambda _n: None)
    assert md == "Uses `Nope` and `nothing.here`."
    assert docstring_summary("Make a :class:`~a.b.Flask` app.\n\nMore.") == "Make a `Flask` app."
    assert docstring_summary(":meth:`title <x>` and ``y``") == "title and `y`"


def test_jsdoc_tags() -> None:
    md = render_docstring(
        "Creates a widget. See {@link Foo} and {@link Foo.run|the runner}.\n\n"
        "@param {string} name - The name.\n@param {number} [size=3] The size.\n"
        "@returns {Widget} The new widget.\n@throws {TypeError} If name is missing.\n"
        "@example\n// make one\nconst w = make(\"x\");\n@deprecated Use other().", "typescript", resolve)
    assert "See [`Foo`](#sym-foo) and [the runner](other.md#sym-foo-run)." in md
    assert "| `name` | `string` | The name. |" in md
    assert "| `size` | `number` | The size. Default: `3`. |" in md
    assert "| [`Widget`](#sym-widget) | The new widget. |" in md
    assert "| `TypeError` | If name is missing. |" in md
    assert '```ts\n// make one\nconst w = make("x");\n```' in md
    assert '!!! warning "Deprecated"' in md
    assert "@param" not in md


def test_javadoc_tags_and_html() -> None:
    md = render_docstring(
        "Reads things.\n<p>Second paragraph with {@code x < y} and <b>bold</b>.\n"
        "<pre>{@code\nList<String> xs = read();\n}</pre>\n\n"
        "@param path the path\n@return the {@link Foo} read\n@throws IOException when it fails", "java",
        resolve)
    assert "Second paragraph with `x < y` and **bold**." in md
    assert "```java\nList<String> xs = read();\n```" in md
    assert "| `path` | the path |" in md
    assert "| the [`Foo`](#sym-foo) read |" in md
    assert "| `IOException` | when it fails |" in md
    assert "<p>" not in md
    assert "{@" not in md


def test_csharp_xml_docs_and_phpdoc() -> None:
    md = render_docstring(
        'Makes a <see cref="T:Widget"/> from <paramref name="name"/>.\n<param name="name">The name.</param>\n'
        '<returns>The <c>Widget</c>.</returns>\n<exception cref="ArgumentException">If empty.</exception>',
        "csharp", resolve)
    assert md.startswith("Makes a [`Widget`](#sym-widget) from `name`.")
    assert "| `name` | The name. |" in md
    assert "| The [`Widget`](#sym-widget). |" in md
    assert "| `ArgumentException` | If empty. |" in md
    assert "<param" not in md
    md = render_docstring("Loads.\n\n@param string $path The path.\n@return Foo|null The foo.", "php",
                          resolve)
    assert "| `$path` | `string` | The path. |" in md
    assert "| `Foo|null` | The foo. |" in md  # a `|` in a code span does not split the cell


def test_godoc_paragraphs_code_and_links() -> None:
    md = render_docstring("Read reads from [Reader] into p.\n\n# Details\n\nIt returns the count.\n\n"
                          "\tn, err := r.Read(p)\n\tif err != nil {}\n\n  - one item\n  - two\n", "go",
                          resolve)
    assert md.startswith("Read reads from [`Reader`](io.md#sym-reader) into p.")
    assert "**Details**" in md
    assert "```go\nn, err := r.Read(p)\nif err != nil {}\n```" in md
    assert "- one item\n- two" in md


def test_rustdoc_sections() -> None:
    md = render_docstring("Creates a [`Foo`] from bytes.\n\n# Examples\n\n```\n# use x::Foo;\n"
                          "let f = Foo::new();\n```\n\n# Panics\n\nPanics if `len` is zero.\n\n"
                          "# Errors\n\nReturns [`Error`] on failure.\n", "rust", resolve)
    assert md.startswith("Creates a [`Foo`](#sym-foo) from bytes.")
    assert "**Examples**\n\n```rust\nlet f = Foo::new();\n```" in md  # hidden `# ` lines dropped
    assert '!!! warning "Panics"' in md
    assert "**Errors**\n\nReturns `Error` on failure." in md


HOSTILE = [
    "<script>alert(1)</script> and <img src=x onerror=alert(1)>",
    "Click [here](javascript:alert(1)), `x <javascript:alert(1)>`_, {@link javascript:alert(1)} and "
    "[d](data:text/html;base64,PHNjcmlwdD4=) and [[n](http://a)](javascript:x)",
    "Badge ![a](https://evil.example/a.png) {: onerror=\"alert(1)\" } {: #id onclick=alert(1) }",
    "# Title {: onerror=alert(1) }\n\n!!! danger \"x\"\n    body\n\n> quote <b>x</b>\n\n- item <i>",
    ":param x: <script>x</script> {: onmouseover=alert(1) }\n\n.. raw:: html\n\n   <script>alert(1)</script>"
    "\n\n.. include:: /etc/passwd\n\n.. admonition:: <img src=x onerror=alert(1)> \"quoted\"\n\n   body",
    "```\n</code></pre><script>alert(1)</script>\n```\n\n~~~\n<script>alert(2)</script>\n~~~",
    "@param {string} x <script>alert(1)</script>\n@example\n</code><script>alert(1)</script>",
]


@pytest.mark.parametrize("language", ["python", "javascript", "java", "go", "rust", "ruby"])
@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_docstrings_stay_text(text: str, language: str) -> None:
    page = html_of(render_docstring(text, language, resolve))
    outside_code = re.sub(r"<(pre|code)\b.*?</\1>", "", page, flags=re.S)
    assert not re.search(r"<(script|img|iframe|b|i)\b", outside_code), page
    assert not re.search(r"\bon\w+\s*=", _attributes(page)), page
    assert not re.search(r"(href|src)\s*=\s*\"?\s*(javascript|data|vbscript):", page, re.I), page
    if language == "python":
        assert "/etc/passwd" not in page  # include directives are dropped, never followed


def _attributes(page: str) -> str:
    """Every attribute list of every tag in the HTML (where an injected handler would have to be)."""
    return " ".join(m.group(1) for m in re.finditer(r"<[a-zA-Z][\w-]*(\s[^<>]*)>", page))


def test_xref_names_covers_what_rendering_asks() -> None:
    asked: set[str] = set()

    def record(name: str) -> None:
        asked.add(name)

    render_docstring(SPHINX, "python", record)  # type: ignore[arg-type]
    # type cells resolve against the page itself only; every name in the prose is predicted
    assert asked - {"int", "str", "ValueError"} <= xref_names(SPHINX)


def _sym(path: str, qualname: str, kind: str = "class", public: bool = True) -> Symbol:
    return Symbol(qualname.rsplit(".", 1)[-1], qualname, kind, path, 1, 2, "sig",  # type: ignore[arg-type]
                  public=public, parent=qualname.rsplit(".", 1)[0] if "." in qualname else None)


def test_symbol_index_lookups() -> None:
    facts = {
        "src/flask/app.py": FileFacts(SourceFile("src/flask/app.py", "python", 1, "a"),
                                      [_sym("src/flask/app.py", "Flask"),
                                       _sym("src/flask/app.py", "Flask.route", "method"),
                                       _sym("src/flask/app.py", "_private", "function", public=False),
                                       _sym("src/flask/app.py", "_LIMIT", "constant", public=False)]),
        "src/flask/helpers.py": FileFacts(SourceFile("src/flask/helpers.py", "python", 1, "b"),
                                          [_sym("src/flask/helpers.py", "url_for", "function")]),
        "web/x.ts": FileFacts(SourceFile("web/x.ts", "typescript", 1, "c"), [_sym("web/x.ts", "Thing.go")]),
    }
    pages = {p: "files/" + p + ".md" for p in facts}
    index = NameIndex.build(facts, pages)
    app, helpers = "src/flask/app.py", "src/flask/helpers.py"
    assert index.lookup("flask.app.Flask", helpers).anchor == "sym-flask"  # type: ignore[union-attr]
    assert index.lookup("flask.Flask", helpers).path == app  # type: ignore[union-attr]
    assert index.lookup("Flask.route", helpers).anchor == "sym-flask-route"  # type: ignore[union-attr]
    assert index.lookup("route", app).anchor == "sym-flask-route"  # type: ignore[union-attr]
    assert index.lookup("flask.helpers", app).anchor == ""  # type: ignore[union-attr]
    assert index.lookup("Thing#go", app).path == "web/x.ts"  # type: ignore[union-attr]
    # a non-public function has its own ("not public") section to link to; a non-public constant has none
    assert index.lookup("_private", app).anchor == "sym-private"  # type: ignore[union-attr]
    assert index.lookup("_LIMIT", app) is None  # no section, no link
    assert index.lookup("nothing", app) is None
    assert index.lookup("werkzeug.exceptions.url_for", helpers) is None  # another package's namesake
    from generator.pages.render_markdown import relative_link

    # other pages only through the names allowed by the page key
    only_own = page_resolver(index, helpers, pages[helpers], {}, relative_link)
    assert only_own("url_for") == "#sym-url-for"
    assert only_own("flask.Flask") is None
    allowed = {"flask.Flask": index.lookup("flask.Flask", helpers)}
    linked = page_resolver(index, helpers, pages[helpers], allowed, relative_link)
    assert linked("flask.Flask") == "app.py.md#sym-flask"


def test_a_module_is_named_the_way_python_imports_it() -> None:
    """`json` in flask's docs is the standard library's: src/flask/json/ is imported as `flask.json`, so its
    last segment alone links nowhere (it linked to that package's page, a module the text does not mean)."""
    files = {"src/flask/__init__.py": "Flask", "src/flask/json/__init__.py": "dumps",
             "src/flask/json/provider.py": "DefaultJSONProvider", "tools/release.py": "main"}
    facts = {p: FileFacts(SourceFile(p, "python", 1, p), [_sym(p, q, "function")]) for p, q in files.items()}
    pages = {p: "files/" + p + ".md" for p in facts}
    index = NameIndex.build(facts, pages)
    provider = "src/flask/json/provider.py"
    resolve = page_resolver(index, provider, pages[provider], {n: index.lookup(n, provider) for n in
                                                              ("json", "flask.json")}, relative_link)
    md = render_docstring("Uses :mod:`json`, like :mod:`flask.json` does.", "python", resolve)
    assert md == "Uses `json`, like [`flask.json`](__init__.py.md) does.", md
    # a module in a folder that is no package is imported by its own name
    assert index.lookup("release", provider).path == "tools/release.py"  # type: ignore[union-attr]
    assert index.lookup("json", provider) is None


REPO: dict[str, str] = {
    "pkg/__init__.py": '"""The package."""\n',
    "pkg/core.py": (
        '# mypy: allow-untyped-defs\n"""Core objects, see :class:`pkg.util.Helper`."""\n\n\n'
        "class Engine:\n"
        '    """An engine. Uses :class:`~pkg.util.Helper` and :func:`start`.\n\n'
        "    .. versionadded:: 1.2\n\n"
        "    :param speed: How fast, see :meth:`Engine.run`.\n    :type speed: int\n"
        '    :raises ValueError: if <script>alert(1)</script> happens.\n    """\n\n'
        "    def run(self, speed):\n"
        '        """Run it.\n\n        Args:\n            speed (int): The speed.\n\n'
        "        Returns:\n            bool: Whether it ran.\n\n"
        "        Example:\n            >>> Engine().run(1)\n            True\n"
        '        """\n        return True\n\n\n'
        'def start():\n    """Start :class:`Unknown` things via `javascript:alert(1) <x>`_."""\n'),
    "pkg/util.py": 'class Helper:\n    """Helps. See :class:`pkg.core.Engine`."""\n',
    "web/w.js": ("/**\n * Draws a widget.\n * @param {string} name - The name.\n"
                 " * @returns {number} The id.\n */\nexport function draw(name) { return 1; }\n"),
}


@pytest.mark.slow
def test_built_site_renders_docstrings(tmp_path: Path) -> None:
    """`sourcebook build` + `mkdocs build --strict`: tables, admonitions, links between pages, no raw reST."""
    root = tmp_path / "repo"
    for rel, text in REPO.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    report = build(load_config(root), index=False)
    assert report.site_built
    site = root / ".sourcebook" / "site"
    core = (site / "files" / "pkg" / "core.py.html").read_text(encoding="utf-8")
    assert re.search(r'<a href="util\.py\.html#sym-helper"><code>Helper</code></a>', core), core
    assert re.search(r'<a href="#sym-start"><code>start\(\)</code></a>', core)
    assert re.search(r'<a href="#sym-engine-run"><code>Engine.run\(\)</code></a>', core)
    assert '<div class="admonition info">' in core
    assert "Added in version 1.2" in core
    assert "<table>" in core
    assert "<th>Type</th>" in core
    assert '<span class="gp">&gt;&gt;&gt; </span><span class="n">Engine</span>' in core  # doctest prompt
    assert "<code>Unknown</code>" in core
    prose = re.sub(r"<(pre|code)\b.*?</\1>", "", core, flags=re.S)  # the Source blocks show the code as is
    for raw in (":class:", ":func:", ":param", ".. versionadded", 'href="javascript:', "<script>alert"):
        assert raw not in prose, raw
    util = (site / "files" / "pkg" / "util.py.html").read_text(encoding="utf-8")
    assert re.search(r'<a href="core\.py\.html#sym-engine"><code>pkg.core.Engine</code></a>', util)
    js = (site / "files" / "web" / "w.js.html").read_text(encoding="utf-8")
    assert "<td><code>name</code></td>" in js
    assert "@param" not in re.sub(r"<(pre|code)\b.*?</\1>", "", js, flags=re.S)
    # a pragma is not a description
    assert "allow-untyped-defs" not in (site / "modules" / "pkg" / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_link_to_a_removed_file_goes_with_it(tmp_path: Path) -> None:
    """The links a page makes to other pages are part of its key: removing the target re-renders the page
    (else `mkdocs build --strict` fails on the dead link)."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text('def run():\n    """Uses :class:`pkg.b.Box`."""\n', encoding="utf-8")
    (root / "pkg" / "b.py").write_text('class Box:\n    """A box."""\n', encoding="utf-8")
    assert build(load_config(root), index=False).site_built
    page = root / ".sourcebook" / "docs" / "files" / "pkg" / "a.py.md"
    assert "[`pkg.b.Box`](b.py.md#sym-box)" in page.read_text(encoding="utf-8")
    (root / "pkg" / "b.py").unlink()
    assert build(load_config(root), index=False).site_built
    assert "`pkg.b.Box`" in page.read_text(encoding="utf-8")
    assert "b.py.md" not in page.read_text(encoding="utf-8")


def test_a_fence_at_column_zero_keeps_the_code_indented() -> None:
    md = render_docstring("Walk:\n\n```\nfor e in w {\n    println!(e);\n}\n```", "rust", resolve)
    assert "```rust\nfor e in w {\n    println!(e);\n}\n```" in md


def test_list_items_wrapped_to_the_margin_stay_one_item_each() -> None:
    # Markdown's lazy continuation: 14 parameters rendered as one item and a paragraph of literal ` * ` marks
    md = render_docstring("A client.\n\n**Parameters:**\n\n* **auth** - *(optional)* An authentication class"
                          " to use when sending\nrequests.\n* **params** - Query parameters, as\na string.\n"
                          "* **verify** - Either `True` or `False`.\n\nAfter the list.", "python", resolve)
    assert ("- **auth** - *(optional)* An authentication class to use when sending requests.\n"
            "- **params** - Query parameters, as a string.\n- **verify** - Either `True` or `False`.") in md
    assert "After the list." in md
    assert "&#42;" not in md
    assert "* **" not in md


def test_reference_style_links_link_and_their_definitions_do_not_show() -> None:
    md = render_docstring("See the [guide][0] and [the API].\n\n[0]: /advanced/clients/\n"
                          '[the API]: https://example.com/api "API"\n', "python", resolve)
    assert md == "See the guide and [the API](https://example.com/api)."
    rust = render_docstring("The [`Foo`] type wraps [`std::io::Error`].\n\n[`Foo`]: struct.Foo.html\n"
                            "[`std::io::Error`]: https://doc.rust-lang.org/std/io/struct.Error.html", "rust",
                            resolve)
    assert rust == ("The [`Foo`](#sym-foo) type wraps "
                    "[`std::io::Error`](https://doc.rust-lang.org/std/io/struct.Error.html).")
    # a definition-like line inside code is code
    code = render_docstring("```\n[x]: y\n```", "rust", resolve)
    assert "[x]: y" in code


def test_summaries_show_a_links_words_not_its_markup() -> None:
    assert docstring_summary("Send a [request](https://x.y) with **care**.") == "Send a request with care."
