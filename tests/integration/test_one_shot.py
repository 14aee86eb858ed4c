"""A one-shot process (a cold `sourcebook ask`) asks LanceDB for just the rows a question needs; a long-lived
one holds whole tables. On a real index in a temp dir, both give the same candidate lists, the same
symbols and the same answer, and the one-shot store never loads every chunk's text or every symbol."""

from __future__ import annotations

import pytest

from answer.answering import evidence
from answer.answering.get_answer import AnswerContext, get_answer
from answer.retrieval import tiers as search
from generator.index.command import index_repository
from generator.index.memos import Memo
from generator.index.store import open_index
from sourcebook.config import load_config
from sourcebook.sql import contains_any

FILES = {
    "pkg/__init__.py": "",
    "pkg/session.py": (
        '"""HTTP sessions."""\n\n\nclass Session:\n    """Keeps cookies across requests."""\n\n'
        "    def send(self, request, allow_redirects=True):\n"
        "        \"\"\"Send a request, following redirects.\"\"\"\n"
        "        response = self.adapter.send(request)\n        if allow_redirects:\n"
        "            response = self.resolve_redirects(response)\n        return response\n\n"
        "    def resolve_redirects(self, response):\n        return response  # 50% of the time, it's a_b\n"),
    "pkg/adapter.py": (
        "class HTTPAdapter:\n    \"\"\"The transport.\"\"\"\n\n    def send(self, request):\n"
        "        return {'status': 200, 'request': request}\n"),
    "pkg/util/redirects.py": (
        "from pkg.session import Session\n\n\ndef follow(session: Session, response):\n"
        "    return session.resolve_redirects(response)\n"),
    "docs/guide.md": "# Guide\n\nCall `Session.send` to send; redirects go through `resolve_redirects`.\n",
    "tests/test_session.py": (
        "from pkg.session import Session\n\n\ndef test_send():\n    assert Session().send\n"),
}
QUESTIONS = ["How does Session.send follow redirects?", "what calls `resolve_redirects`?",
             "HTTPAdapter send transport", "where is a_b or 50% or it's mentioned", "nothing like zzqx"]


@pytest.fixture
def config(make_repo):
    config = load_config(make_repo(FILES))
    index_repository(config, embedder=None)
    return config


def _held(config):
    """A store that holds whole tables (what a server has after its first questions)."""
    store = open_index(config, embedder=None)
    search._chunk_texts(store)
    evidence.all_symbols(store)
    return store


@pytest.mark.parametrize("scope", [None, "pkg/", "pkg/util/", "docs/"])
def test_one_shot_lists_are_the_whole_table_lists(config, scope: str | None) -> None:
    for question in QUESTIONS:
        cold = open_index(config, embedder=None)
        assert not search.whole_tables(cold)
        lists = search._lexical_lists(cold, question, scope, search.DEFAULT_WEIGHTS)
        assert lists == search._lexical_lists(_held(config), question, scope, search.DEFAULT_WEIGHTS)
        names = ["Session", "send", "HTTPAdapter", "resolve_redirects", "follow", "it's"]
        assert evidence._named_symbols(cold, names, scope) == evidence._named_symbols(_held(config), names,
                                                                                       scope)
        paths = sorted(FILES)
        assert evidence.symbols_of(cold, paths) == evidence.symbols_of(_held(config), paths)
        assert Memo("chunk_texts") not in cold.memos
        assert Memo("answer_symbols") not in cold.memos
    literal = search._literal(open_index(config, embedder=None), "Session.send resolve_redirects", None)
    assert {c.path for c in literal} >= {"pkg/session.py", "docs/guide.md"}


def test_literal_search_in_lancedb_matches_verbatim(config) -> None:
    """The filter the one-shot literal search sends: special characters are text, not SQL or wildcards."""
    store = open_index(config, embedder=None)
    texts = store.rows("chunks", ["path", "start_line", "text"])
    for names in (["a_b"], ["50%"], ["it's"], ["Session", "HTTPAdapter"], ["a%b"], ["x'); DROP"]):
        got = store.rows("chunks", ["path", "start_line"], contains_any("text", names))
        assert got == [{"path": r["path"], "start_line": r["start_line"]} for r in texts
                       if any(n in r["text"] for n in names)], names
    assert store.rows("chunks", ["path"], contains_any("text", [])) == []


def test_a_one_shot_answer_is_the_held_answer(config) -> None:
    for question in QUESTIONS[:3]:
        cold_store = open_index(config, embedder=None)
        cold = get_answer(AnswerContext(config, store=cold_store), question, use_cache=False)
        held = get_answer(AnswerContext(config, store=_held(config)), question, use_cache=False)
        assert cold.model_dump(exclude={"meta"}) == held.model_dump(exclude={"meta"})
        assert cold.candidates
        assert Memo("chunk_texts") not in cold_store.memos
