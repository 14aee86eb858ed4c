from __future__ import annotations

import pytest

from answer.retrieval.query import extract_identifiers, identifier_parts, normalize_question, relational_parts


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What does `ensure_ascii` control?", ["ensure_ascii"]),
        ("How is DefaultJSONProvider chosen?", ["DefaultJSONProvider"]),
        ("Where is getUser defined?", ["getUser"]),
        ("What does parse_config return?", ["parse_config"]),
        ("What does MAX_RETRIES limit?", ["MAX_RETRIES"]),
        ("Who calls __init__ here?", ["__init__"]),
        ("How does flask.Config.from_file open files?", ["flask.Config.from_file"]),
        ("What is in src/flask/app.py?", ["src/flask/app.py"]),
        ("Explain utils.ts please", ["utils.ts"]),
        ("Is `app.route(\"/\")` a decorator?", ["app.route"]),
    ],
)
def test_extracts_each_identifier_kind(question: str, expected: list[str]) -> None:
    names = extract_identifiers(question).names
    for name in expected:
        assert name in names


def test_plain_prose_has_no_identifiers() -> None:
    assert not extract_identifiers("How are requests retried after a timeout, e.g. on a slow network?")


def test_file_names_are_reported_separately() -> None:
    idents = extract_identifiers("Does src/flask/app.py import flask.helpers?")
    assert idents.files == ("src/flask/app.py",)
    assert "flask.helpers" in idents.names


def test_identifier_parts() -> None:
    expected = ["flask.app.Flask.route", "app.Flask.route", "Flask.route", "route"]
    assert identifier_parts("flask.app.Flask.route") == expected
    assert identifier_parts("src/flask/app.py") == ["app"]


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("How does the session interface talk to the request context?",
         ("session interface", "request context")),
        ("What is the relationship between Blueprint and Flask?", ("Blueprint", "Flask")),
        ("How does HTTPAdapter communicate with urllib3?", ("HTTPAdapter", "urllib3")),
        ("How do Session and PreparedRequest interact?", ("Session", "PreparedRequest")),
    ],
)
def test_relational_questions_split_in_two(question: str, parts: tuple[str, str]) -> None:
    assert relational_parts(question) == parts


def test_non_relational_question() -> None:
    assert relational_parts("What does Flask.route do?") is None


def test_clauses_and_pronouns_are_not_sides() -> None:
    assert relational_parts("How do they interact with the session?") is None
    long = ("What is the relationship between the method that loads session data at request start and the "
            "method that persists it?")
    assert relational_parts(long) is None


def test_normalize_question() -> None:
    plain = normalize_question("what does flask.route do")
    assert normalize_question("  What does  Flask.route do?? ") == plain
