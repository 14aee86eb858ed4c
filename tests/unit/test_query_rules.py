from answer.retrieval.query import extract_identifiers, leading_scope, scopes_as_dots
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


def test_the_semantic_text_is_the_lead_paragraph_without_references():
    message = ("Close the log file handle after a failed rotation (#2025)\n\n"
               "* keep the lock until the handle is closed\n* add a regression test\n\n"
               "---------\n\nCo-authored-by: someone <someone@example.com>\n"
               "https://github.com/acme/logs/issues/2024")
    text = parse_query(message).semantic_text
    assert text.startswith("Close the log file handle after a failed rotation")
    for left_out in ("2025", "lock", "regression", "Co-authored-by", "github"):
        assert left_out not in text
    # a link's words stay (its path can name what it is about); only the issue numbers go
    linked = parse_query("Quote qop options (see https://example.com/digest-auth, GH-1766)").semantic_text
    assert "digest-auth" in linked
    assert "1766" not in linked


def test_a_lead_paragraph_too_short_to_say_anything_takes_the_next_one():
    assert parse_query("Hi,\n\nthe parser crashes on empty input\n\nfull log below").semantic_text == (
        "Hi,\n\nthe parser crashes on empty input")
    assert parse_query("Support enums\n  \nwith no constants").semantic_text == (
        "Support enums\n\nwith no constants")
    # one paragraph, however short, is itself; blank lines around it go
    assert parse_query("\n\nwhere is parse_config defined?\n").semantic_text == (
        "where is parse_config defined?")


def test_the_semantic_text_is_bounded_and_linear_in_many_empty_paragraphs():
    long_lead = "word " * 5000
    assert len(parse_query(long_lead).semantic_text) == 4000
    many = "\n\n.".join([""] * 20_000)
    assert parse_query(many).semantic_text == many.strip()[:4000]


def test_a_plain_word_written_as_a_call_is_a_code_name():
    parsed = parse_query("Add more configuration to test() and render()")
    assert {"test", "render"} <= set(parsed.code_names)
    # it names a function: it does not ask about tests
    assert "test" not in parsed.words
    assert "configuration" in parsed.words
    # written as a word it is prose, and asks about tests
    prose = parse_query("Add more configuration to the test")
    assert "test" not in prose.code_names
    assert "test" in prose.words
    # a conventional commit's empty scope is not a call; a method call keeps its dotted name
    assert "feat" not in parse_query("feat(): add a header").code_names
    assert "client.close" in parse_query("call client.close() on exit").code_names


def test_the_leading_scope_of_a_commit_message_names_a_component():
    assert leading_scope("middleware: fix a missing return") == "middleware"
    assert leading_scope("fix(parser): accept a trailing comma") == "parser"
    assert leading_scope("chore(examples)!: move the demo") == "examples"
    assert leading_scope("[Console] Fix the table helper") == "console"
    assert leading_scope("fix: a bare type") == "fix"  # names a folder only if the repository has one
    for text in ("Fix the parser", "feat!: breaking", "see https://example.com/x: here", "a: "):
        assert leading_scope(text) == ""
