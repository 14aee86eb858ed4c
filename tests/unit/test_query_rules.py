from answer.retrieval.query import extract_identifiers, scopes_as_dots
from answer.retrieval.question import parse_query


def test_scope_separators_between_identifiers_read_as_dots():
    assert scopes_as_dots("registry::get(std::string_view name)") == "registry.get(std.string_view name)"
    assert scopes_as_dots("$this->fooBar and self::$instance") == "$this.fooBar and self.instance"
    assert scopes_as_dots(r"use Monolog\Handler\StreamHandler;") == "use Monolog.Handler.StreamHandler;"
    assert scopes_as_dots("Response#body is nil") == "Response.body is nil"


def test_what_is_not_a_scope_separator_stays():
    for text in ("see issue #12 and C# code", r"a line\nbreak", "a :: b", "x -> y", "fix#12", "std:: vector"):
        assert scopes_as_dots(text) == text


def test_a_scoped_name_is_named_as_written_and_dotted():
    parsed = parse_query("registry::get returns null for `Pool::take()` in async_logger")
    assert "registry.get" in parsed.code_names
    assert "async_logger" in parsed.code_names
    names = extract_identifiers("registry::get returns null for `Pool::take()` in async_logger").names
    assert {"registry.get", "Pool.take", "async_logger"} <= set(names)
    # a question without any keeps exactly its names
    assert parse_query("where is parse_config defined").code_names == ("parse_config",)


def test_issue_references_and_links_are_left_out_of_the_full_text_terms():
    parsed = parse_query("Fix read timeout (#2041), GH-77; see https://github.com/acme/net/issues/1984")
    assert "2041" not in parsed.terms
    assert "77" not in parsed.terms
    assert "github" not in parsed.terms
    assert {"fix", "read", "timeout"} <= set(parsed.terms)
    # a question of nothing else keeps them
    assert "12" in parse_query("#12").terms
