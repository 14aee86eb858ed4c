"""Inline citations: the evidence paths an answer names in its prose, and those it names outside it."""

from __future__ import annotations

from answer.answering.citations import inline_paths

EVIDENCE = ["src/flask/app.py", "src/flask/json/provider.py", "tests/test_json.py", "src/flask/sansio/app.py"]


def test_paths_with_lines_names_and_package_relative_forms() -> None:
    found = inline_paths("See `src/flask/json/provider.py:144-148`, then test_json.py and "
                         "flask/json/provider.py (json.dumps does the work).", EVIDENCE)
    assert found.cited == ("src/flask/json/provider.py", "tests/test_json.py")
    assert found.outside == ()


def test_ambiguous_names_urls_and_versions_are_not_citations() -> None:
    found = inline_paths("app.py is ambiguous; see https://example.org/src/flask/app.py; version 2.0.1, "
                         "e.g. this.", EVIDENCE)
    assert found.cited == ()
    assert found.outside == ()


def test_paths_outside_the_evidence_are_reported_once() -> None:
    found = inline_paths("It is in src/flask/nope.py and again src/flask/nope.py:3, and src/flask/app.py.",
                         EVIDENCE)
    assert found.cited == ("src/flask/app.py",)
    assert found.outside == ("src/flask/nope.py",)


def test_defining_paths_cites_the_files_that_define_the_names_used() -> None:
    from answer.answering.citations import defining_paths

    definitions = {"src/hooks.py": ["dispatch_hook", "default_hooks"],
                   "src/sessions.py": ["Session", "Session.send"], "src/models.py": ["Request"]}
    texts = {"src/hooks.py": "def dispatch_hook(key, hooks, hook_data):", "src/sessions.py": "class Session:",
             "src/models.py": "class Request:\n    def prepare(self): ... hooks ... register_hook"}
    # by qualified name, by last component (`send`), first name first; a name defined nowhere but
    # mentioned by exactly one evidence text (register_hook) cites that text; unknown names cite nothing
    assert defining_paths(["Session.send", "dispatch_hook", "register_hook", "unknown_thing"], definitions,
                          texts) == ("src/sessions.py", "src/hooks.py", "src/models.py")
    assert defining_paths(["hooks"], definitions, {**texts, "src/hooks.py": "hooks = {}"}) == ()  # ambiguous
    assert defining_paths([], definitions, texts) == ()
