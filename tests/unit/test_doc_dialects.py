"""Every doc-comment dialect renders as its language's own doc tool shows it, never as raw tags (issue 32).

Each test feeds a doc comment shaped like real ones (written here, comment markers already removed as the
extractor does) through render_docstring / docstring_summary, then through Python-Markdown with the site's
extensions, and checks what a reader sees: sections, code, links to symbol sections; no `{@link`, `<see`,
`@param`, `\\brief`, `[!NOTE]` left in the text outside code.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import markdown
import pytest

from generator.markup.doc_dialects import drop_banners, is_code, normalize
from generator.markup.docstrings import docstring_summary, render_docstring

KNOWN = {"fromJson": "Gson.java.html#sym-gson-fromjson", "toJson": "Gson.java.html#sym-gson-tojson",
         "JsonAdapter": "JsonAdapter.kt.html#sym-jsonadapter",
         "LogEventLevel.Information": "LogEventLevel.cs.html#sym-x",
         "cJSON_Delete": "cJSON.h.html#sym-cjson-delete", "post": "httparty.rb.html#sym-post",
         "WalkDir": "lib.rs.html#sym-walkdir", "DirEntry.path": "dent.rs.html#sym-direntry-path",
         "StoreApi.setState": "vanilla.ts.html#sym-storeapi-setstate",
         "pattern_flags": "pattern.h.html#sym-pf"}


def resolve(name: str) -> str | None:
    return KNOWN.get(name)


class _Text(HTMLParser):
    """Visible text outside <code>/<pre>, and every link's (href, text)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.prose: list[str] = []
        self.code: list[str] = []
        self.links: list[tuple[str, str]] = []
        self._in_code = 0
        self._href: str | None = None
        self._label = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("code", "pre"):
            self._in_code += 1
        if tag == "a":
            self._href, self._label = dict(attrs).get("href") or "", ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre"):
            self._in_code -= 1
        if tag == "a" and self._href is not None:
            self.links.append((self._href, self._label))
            self._href = None

    def handle_data(self, data: str) -> None:
        (self.code if self._in_code else self.prose).append(data)
        if self._href is not None:
            self._label += data


def shown(doc: str, language: str) -> tuple[str, _Text]:
    md = render_docstring(doc, language, resolve)
    page = _Text()
    page.feed(markdown.markdown(md, extensions=["tables", "admonition", "fenced_code"]))
    return md, page


RAW = re.compile(r"\{@\w+|<(?:see|paramref|typeparamref|summary|param|c)\b|"
                 r"(?:^|\s)[@\\](?:param|returns?|brief|"
                 r"throws|code|endcode|final|author|see|since|option|raise)\b|\[!(?:NOTE|WARNING)\]|&lt;|&#")


def assert_clean(page: _Text) -> None:
    prose = "".join(page.prose)
    assert not RAW.search(prose), prose
    assert all(label.strip() for _href, label in page.links), page.links


def test_javadoc_links_keep_parameter_lists_and_code_keeps_generics() -> None:
    doc = """Reads JSON into an object of the given type. Unlike {@link #fromJson(String, Class)}, this keeps
generic types: pass a {@code TypeToken<List<MyType>>}, not {@code List<MyType>.class}.

<p>For example:
<pre>{@code
Type listType = new TypeToken<List<String>>() {}.getType();
}</pre>

@param <T> the type of the desired object
@param json the string to read from
@return an object of type T, or {@code null} if {@code json} is {@code null}
@throws JsonSyntaxException if json is not valid JSON
@see #toJson(Object)
@see #fromJson(String, Class) the class form
@since 1.3
@author A. Writer"""
    md, page = shown(doc, "java")
    assert_clean(page)
    assert ("Gson.java.html#sym-gson-fromjson", "fromJson(String, Class)") in page.links
    assert ("Gson.java.html#sym-gson-tojson", "toJson(Object)") in page.links
    assert "**See also**: [`fromJson(String, Class)`](Gson.java.html#sym-gson-fromjson) the class form" in md
    code = "".join(page.code)
    assert "TypeToken<List<MyType>>" in code
    assert "List<MyType>.class" in code
    assert "new TypeToken<List<String>>() {}.getType();" in code
    assert "**Type parameters**" in md
    assert "| `T` | the type of the desired object |" in md
    assert "`JsonSyntaxException`" in md
    assert "A. Writer" not in md
    assert docstring_summary(doc).startswith(
        "Reads JSON into an object of the given type. Unlike `fromJson(String")


def test_kdoc_bracket_links_and_block_tags() -> None:
    doc = """Returns a [JsonAdapter] for [type], asking the factories of [Builder.add] first.

The adapter for `List<String>` is cached.

@param type the reflected type.
@return the adapter, never `null`.
@throws IllegalArgumentException if [type] cannot be adapted.
@sample com.example.samples.adapterFor"""
    md, page = shown(doc, "kotlin")
    assert_clean(page)
    assert ("JsonAdapter.kt.html#sym-jsonadapter", "JsonAdapter") in page.links
    prose = "".join(page.prose)
    assert "[" not in prose
    assert "]" not in prose
    assert "List<String>" in "".join(page.code)
    assert "Builder.add" in "".join(page.code)
    assert "**Sample**" in md
    assert docstring_summary(doc) == (
        "Returns a `JsonAdapter` for `type`, asking the factories of `Builder.add` first.")


def test_csharp_xml_documentation() -> None:
    doc = """<summary>
Writes an event at the <see cref="LogEventLevel.Information"/> level; nothing happens when
<paramref name="template"/> is <see langword="null"/>.
</summary>
<typeparam name="TValue">The value's type, see <typeparamref name="TValue"/>.</typeparam>
<param name="template">The message template.</param>
<returns>A <see cref="T:System.Collections.Generic.IDictionary`2"/>, or <c>null</c>; <value>false</value> if
not found.</returns>
<exception cref="T:System.ArgumentNullException">When <paramref name="template"/> is null.</exception>
<remarks>
<para>Properties are bound in order.</para>
<list type="bullet">
<item><term>Scalars</term><description>are captured as they are</description></item>
<item><description>objects are destructured with <c>@</c></description></item>
</list>
</remarks>
<example>
<code>
logger.Information("Took {Elapsed} ms", sw.ElapsedMilliseconds);
</code>
</example>"""
    md, page = shown(doc, "csharp")
    assert_clean(page)
    assert ("LogEventLevel.cs.html#sym-x", "LogEventLevel.Information") in page.links
    code = "".join(page.code)
    for word in ("template", "null", "TValue", "@", "false", 'logger.Information("Took {Elapsed} ms"'):
        assert word in code
    assert "| `System.ArgumentNullException` |" in md
    assert "<li><strong>Scalars</strong>" in markdown.markdown(md)
    assert docstring_summary(doc) == ("Writes an event at the `LogEventLevel.Information` level; nothing "
                                      "happens "
                                      "when `template` is `null`.")


def test_a_summary_cut_short_never_leaves_a_code_span_open() -> None:
    doc = ('Joins code blocks into one separated by a separator. For example, joining {@code "int i"}, '
           '{@code "void foo()"} and {@code "int j = i + 1; return j * 2;"} with {@code ", "}.')
    summary = docstring_summary(doc, 120)
    assert summary.endswith("…")
    assert summary.count("`") % 2 == 0


def test_csharp_summary_whose_opening_tag_was_lost() -> None:
    # a `#region` line above `/// <summary>` can leave only the closing tag in the extracted comment
    assert docstring_summary("Injects a value, returning the Right case.\n</summary>") == (
        "Injects a value, returning the Right case.")


def test_phpdoc_tags_and_indented_example() -> None:
    doc = """Stores log records in a database.

Usage:

    $handler = new DatabaseHandler($pdo, 'logs');
    $logger->pushHandler($handler);

@param  string                 $table    The table name
@param  list<FormatterInterface> $formatters Formatters to apply
@return $this
@throws \\RuntimeException if the table cannot be created
@phpstan-import-type Record from Logger
@final"""
    md, page = shown(doc, "php")
    assert_clean(page)
    assert "```php\n$handler = new DatabaseHandler($pdo, 'logs');\n$logger->pushHandler($handler);\n```" in md
    assert "| `$formatters` | `list<FormatterInterface>` |" in md
    assert "phpstan" not in md
    assert docstring_summary("@final") == ""
    assert render_docstring("@final", "php") == ""


def test_phpdoc_code_elements_inline_see_and_see_urls() -> None:
    doc = """Sends records to a queue. Quick start: <code>Queue::attach($logger);</code>

Example:
<code>
$strategy = new LevelStrategy('WARN');
$handler = new BufferHandler($inner, $strategy);
</code>

Use {@see post} rather than the old call. Needs the sockets extension @see https://example.com/sockets"""
    md, page = shown(doc, "php")
    assert_clean(page)
    assert "`Queue::attach($logger);`" in md
    assert "```php\n$strategy = new LevelStrategy('WARN');\n$handler = new BufferHandler" in md
    assert ("httparty.rb.html#sym-post", "post") in page.links
    assert ("https://example.com/sockets", "https://example.com/sockets") in page.links
    assert docstring_summary(doc) == "Sends records to a queue. Quick start: `Queue::attach($logger);`"


@pytest.mark.parametrize("mark", ["\\", "@"])
def test_doxygen_commands_in_both_spellings(mark: str) -> None:
    doc = f"""{mark}brief Parses text into a tree.

Free the result with {mark}ref cJSON_Delete; {mark}p value must end with NUL, or {mark}c NULL comes back.

{mark}param[in] value the text
{mark}param[out] end where parsing stopped
{mark}return the root item, or {mark}c NULL
{mark}note Not thread-safe.
{mark}code{{.c}}
cJSON *root = cJSON_Parse(text);
{mark}endcode
{mark}sa cJSON_Delete"""
    md, page = shown(doc, "c")
    assert_clean(page)
    assert ("cJSON.h.html#sym-cjson-delete", "cJSON_Delete") in page.links
    assert "| `value` | the text |" in md
    assert "| `end` | where parsing stopped |" in md
    assert "```c\ncJSON *root = cJSON_Parse(text);\n```" in md
    assert '!!! note "Note"' in md
    assert docstring_summary(doc) == "Parses text into a tree."


def test_yard_typed_tags_options_and_titled_example() -> None:
    doc = """Makes a GET request.

@param path [String] the path, relative to base_uri
@param [Hash{Symbol => Object}] options request options
@option options [Integer] :timeout seconds to wait
@return [HTTParty::Response] the response
@raise [ArgumentError] when path is nil
@example Fetch a page
  class Client
    include HTTParty
  end
  Client.get('/pages/1')
@see #post"""
    md, page = shown(doc, "ruby")
    assert_clean(page)
    assert "| `path` | `String` |" in md
    assert "| `options` | `Hash{Symbol => Object}` |" in md
    assert "**Options**" in md
    assert "| `timeout` | `Integer` |" in md
    assert "| `HTTParty::Response` | the response |" in md
    assert "| `ArgumentError` |" in md
    assert "**Fetch a page**" in md
    assert "```ruby\nclass Client\n  include HTTParty\nend\n" in md
    assert ("httparty.rb.html#sym-post", "post") in page.links


def test_rustdoc_intra_doc_links_and_sections() -> None:
    doc = """Walks [`WalkDir`] entries, yielding each [`DirEntry::path`].

# Examples

```
use walkdir::WalkDir;
# fn main() -> Result<(), walkdir::Error> {
for entry in WalkDir::new("foo") { println!("{}", entry?.path().display()); }
# Ok(()) }
```

# Errors

An [`Error`] when a directory cannot be read.

# Panics

Never."""
    md, page = shown(doc, "rust")
    assert_clean(page)
    assert ("lib.rs.html#sym-walkdir", "WalkDir") in page.links
    assert ("dent.rs.html#sym-direntry-path", "DirEntry::path") in page.links
    assert "```rust\nuse walkdir::WalkDir;\nfor entry" in md
    assert "fn main()" not in md
    assert "**Errors**" in md
    assert '!!! warning "Panics"' in md
    assert docstring_summary(doc) == "Walks `WalkDir` entries, yielding each `DirEntry::path`."


def test_jsdoc_tsdoc_tags_links_and_alerts() -> None:
    doc = """Creates a store. See {@link StoreApi.setState} and {@link https://example.com/guide | the guide}.

> [!WARNING]
> Do not call `setState` while rendering.

@typeParam T - the state
@param createState - the state creator
@param {string} [name=store] - a name for devtools
@returns {StoreApi<T>} the store
@example
```ts
const useBear = create((set) => ({ bears: 0 }))
```"""
    md, page = shown(doc, "typescript")
    assert_clean(page)
    assert ("vanilla.ts.html#sym-storeapi-setstate", "StoreApi.setState") in page.links
    assert ("https://example.com/guide", "the guide") in page.links
    assert '!!! warning "Warning"' in md
    assert "```ts\nconst useBear" in md
    assert "| `name` | `string` | a name for devtools Default: `store`. |" in md


def test_banners_and_commented_out_code_are_never_summaries() -> None:
    assert docstring_summary("////////////////////////////////") == ""
    assert render_docstring("================================", "cpp") == ""
    assert docstring_summary("int rc = parse(buf, len);\nif (rc < 0) return rc;") == ""
    assert docstring_summary("//////// Helpers ////////\n\nSmall helpers for the parser.") == "Helpers"
    banner_then_prose = "--------------------------------------\nFormats a record.\n-------------------------"
    assert docstring_summary(banner_then_prose) == "Formats a record."
    # code after prose is an example, and prose that ends in `;` or a call is still prose
    assert "return rc;" in render_docstring("Checks the code.\n\n    return rc;", "c")
    assert not is_code("Returns the parser's state (see reset);")
    assert is_code("foo(bar);\nx = 2;")
    assert drop_banners("Title\n=====\n\ntext") == "Title\n=====\n\ntext"


def test_code_between_paragraphs_of_a_c_comment_is_a_code_block() -> None:
    doc = """Creates a string from a buffer.

Even a string made with:

s = strnew("abc", 3);

can be printed, as it ends with a NUL."""
    md, page = shown(doc, "c")
    assert_clean(page)
    assert '```c\ns = strnew("abc", 3);\n```' in md
    assert "can be printed" in "".join(page.prose)


def test_badge_paragraphs_are_never_a_summary_nor_empty_links() -> None:
    doc = """[![github]](https://github.com/acme/lib)&ensp;[![crates-io]](https://crates.io/crates/lib)

[github]: https://img.shields.io/badge/github-acme
[crates-io]: https://img.shields.io/crates/v/lib.svg

<br>

A flexible error type for [`WalkDir`] users."""
    assert docstring_summary(doc) == "A flexible error type for `WalkDir` users."
    md, page = shown(doc, "rust")
    assert_clean(page)
    assert md.startswith("A flexible error type")


def test_markup_from_the_source_stays_escaped() -> None:
    """Converted dialect markup is still untrusted text: a script in an XML element, a Doxygen code block or
    a link target never reaches the HTML as markup."""
    doc = """<summary>Hi <see href="javascript:alert(1)">click</see> <script>alert(2)</script></summary>
<param name="x"><img src=x onerror=alert(3)></param>"""
    md = render_docstring(doc, "csharp", resolve)
    html = markdown.markdown(md, extensions=["tables"])
    assert not re.search(r"<(?:script|img)\b|href=\"javascript", html), html
    code = markdown.markdown(render_docstring("\\code\n</code><script>x</script>\n\\endcode", "cpp"),
                             extensions=["fenced_code"])
    assert "&lt;script&gt;" in code
    assert "<script" not in code
    link = markdown.markdown(render_docstring("See {@link javascript:alert(1) x}.", "java", resolve))
    assert "href" not in link
    assert "{@link" not in normalize("See {@link Foo}.").replace("{@link Foo}", "")


def test_a_long_line_of_stars_is_read_in_one_pass() -> None:
    # the banner-with-words pattern was quadratic in a line (16,000 `*` took 4 s); a long line is no banner
    line = "*" * 20000
    assert drop_banners(f"Reads the file.\n{line}x\n") == f"Reads the file.\n{line}x"


def test_static_analyser_phpdoc_tags_read_as_their_plain_tags() -> None:
    """`@phpstan-param` / `@psalm-return` mean `@param` / `@return` with a type only the analyser reads: one
    row per parameter, the plain tag's words with the refined type; alone, the refined tag is shown as the
    plain one would be; analyser directives (`@phpstan-ignore-next-line`, `@psalm-suppress`) are not for
    readers."""
    doc = """Sends the record to every handler.

@param int|Level $level The severity of the record
@param array<string, mixed> $context Values the message refers to
@param callable(LogRecord): void $then Called after the record is sent
@param mixed[] $options
@return bool Whether a handler took the record

@phpstan-param value-of<Level::VALUES>|Level $level
@phpstan-param InputOptions $options
@phpstan-param ProcessorInterface|(callable(LogRecord): LogRecord) $filter
@psalm-return true
@psalm-suppress MixedArgument
@phpstan-ignore-next-line"""
    md, page = shown(doc, "php")
    assert_clean(page)
    prose = "".join(page.prose)
    assert not re.search(r"@|phpstan|psalm", prose), prose
    assert "| `$level` | `value-of<Level::VALUES>|Level` | The severity of the record |" in md
    assert md.count("`$level`") == 1
    assert "| `$options` | `InputOptions` |   |" in md
    assert "mixed[]" not in md
    assert "| `$context` | `array<string, mixed>` | Values the message refers to |" in md
    assert "| `$then` | `callable(LogRecord): void` | Called after the record is sent |" in md
    assert "| `$filter` | `ProcessorInterface|(callable(LogRecord): LogRecord)` |   |" in md
    assert "| `true` | Whether a handler took the record |" in md
    assert "| `bool` |" not in md
    assert "MixedArgument" not in md
    # a comment of analyser tags alone is still read as tags, not shown as text
    md, page = shown("@psalm-return list<LogRecord> The records, oldest first", "php")
    assert "| `list<LogRecord>` | The records, oldest first |" in md
    assert "psalm" not in "".join(page.prose)
    # whichever comes first; phpDoc's `@var` is a property's type and words, without the property's name
    md, _ = shown("@phpstan-var array<int, Level>\n@var Level[] $levels The levels, by value", "php")
    assert "**Type**" in md
    assert "| `array<int, Level>` | The levels, by value |" in md
    # Doxygen's `@var` (C) only names what the comment documents
    assert "**Type**" not in render_docstring("The number of open handles.\n\n@var int handle_count", "c")


def test_generic_phpdoc_tags_keep_their_hyphenated_names() -> None:
    """`@template-implements X<...>` is no `@template` whose type parameter is "-implements": a parent's type
    arguments are shown as code; `@template-covariant T of Foo` is the type parameter T bounded by Foo."""
    doc = """A log record.

@template-covariant TValue of object
@psalm-template TKey as array-key
@template-implements ArrayAccess<'message'|'level', int|string>
@extends Collection<TKey, TValue>
@property-read string $channel The channel's name"""
    md, page = shown(doc, "php")
    assert_clean(page)
    assert "-implements" not in md
    assert "-covariant" not in md
    assert "-read" not in md
    assert "| `TValue` | `object` |   |" in md
    assert "| `TKey` | `array-key` |   |" in md
    assert "**Implements**: `ArrayAccess<'message'|'level', int|string>`" in md
    assert "**Extends**: `Collection<TKey, TValue>`" in md
    assert "**Properties**" in md
    assert "| `$channel` | `string` | The channel's name |" in md


def test_phpdoc_type_aliases_are_code_laid_out_as_written() -> None:
    doc = """Sends records to a database.

@phpstan-type Options array{
    host: string,
    port?: int
}
@psalm-type Level = 'debug'|'info'
@psalm-import-type Options from Handler as HandlerOptions
@phpstan-type Evil array{x: '</code><script>alert(1)</script>'}"""
    md, page = shown(doc, "php")
    assert_clean(page)
    assert "**Type aliases**" in md
    code = "".join(page.code)
    assert "Options = array{\n    host: string,\n    port?: int\n}" in code
    assert "Level = 'debug'|'info'" in code
    assert "Options from Handler as HandlerOptions" in code
    html = markdown.markdown(md, extensions=["tables", "fenced_code"])
    assert "<script" not in html
    assert "&lt;script&gt;" in html
    assert "phpstan" not in "".join(page.prose)
    assert "array{" not in "".join(page.prose)
