"""search_codebase / rank_files over a real LanceDB index of a small repository."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from answer.retrieval.tiers import SEARCH_TYPES, SearchResult, rank_files, search_codebase
from generator.index.command import index_repository
from generator.index.memos import Memo
from generator.index.store import IndexStore, open_index
from sourcebook.config import Config, load_config
from sourcebook.errors import IndexStoreError, UsageError
from tests.support.index_repos import FakeEmbedder

FILES = {
    "src/web/config.py": (
        '"""Reading settings."""\n\n\nclass SettingsLoader:\n    """Loads settings from TOML files."""\n\n'
        "    def load_toml_file(self, filename):\n        import tomllib\n"
        "        with open(filename, 'rb') as fh:\n            return tomllib.load(fh)\n"),
    "src/web/routing.py": (
        "def add_url_rule(rule, endpoint, view_func):\n    \"\"\"Register a URL rule for a view.\"\"\"\n"
        "    return (rule, endpoint, view_func)\n\n\ndef parse_rule(rule):\n    return rule.split('/')\n"),
    "src/web/sessions.py": (
        "class SecureCookieSession(dict):\n    \"\"\"A session stored in a signed cookie.\"\"\"\n\n"
        "    def sign_cookie(self, secret_key):\n        return hash((secret_key, tuple(self)))\n"),
    "src_other/web_x/config.py": "def unrelated_settings():\n    return 'settings toml'\n",
    "docs/sessions.md": ("# Sessions\n\nSessions are kept in a signed cookie.\n\n## Café ☕\n\n"
                         "non-ASCII text\n"),
    "tests/test_routing.py": (
        "from web.routing import add_url_rule\n\n\ndef test_add_url_rule():\n"
        "    assert add_url_rule('/', 'index', None)[0] == '/'\n"),
}


@pytest.fixture(scope="module")
def indexed_config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    root = tmp_path_factory.mktemp("searchrepo")
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    config = load_config(root)
    index_repository(config, embedder=FakeEmbedder())
    return config


@pytest.fixture(scope="module")
def store(indexed_config: Config) -> IndexStore:
    return open_index(indexed_config, embedder=FakeEmbedder())


def _paths(result: SearchResult) -> list[str]:
    return [f.path for f in result.files]


def test_lexical_finds_by_split_identifiers(store: IndexStore) -> None:
    result = search_codebase(store, "how are settings loaded from a toml file?", type="lexical")
    assert _paths(result)[0] == "src/web/config.py"
    assert result.hits
    assert result.hits[0].path == "src/web/config.py"
    assert all(set(h.tiers) == {"lexical"} for h in result.hits)
    assert "SettingsLoader" in result.hits[0].snippet or "load_toml_file" in result.hits[0].snippet


def test_symbolic_exact_prefix_fuzzy(store: IndexStore) -> None:
    exact = search_codebase(store, "SecureCookieSession", type="symbolic")
    assert exact.hits[0].symbol == "SecureCookieSession"
    assert exact.files[0].path == "src/web/sessions.py"
    prefix = search_codebase(store, "add_url", type="symbolic")
    assert prefix.files[0].path == "src/web/routing.py"
    fuzzy = search_codebase(store, "parse_rulee", type="symbolic")
    assert any(h.symbol == "parse_rule" for h in fuzzy.hits)


def test_semantic_alone_and_hybrid_fusion(store: IndexStore) -> None:
    sem = search_codebase(store, "signed cookie session secret key", type="semantic")
    assert sem.files
    assert all(f.tiers == ("semantic",) for f in sem.files)
    assert "src/web/sessions.py" in _paths(sem)[:3]
    hybrid = search_codebase(store, "signed cookie session secret key", type="hybrid")
    assert _paths(hybrid)[0] == "src/web/sessions.py"
    assert {"lexical", "semantic"} <= set(hybrid.files[0].tiers)
    assert [f.path for f in rank_files(store, "signed cookie session secret key")] == _paths(hybrid)


def test_semantic_skipped_and_reported_without_embedder(indexed_config: Config) -> None:
    no_vectors = open_index(indexed_config, embedder=None)
    result = search_codebase(no_vectors, "cookie", type="semantic")
    assert result.files == []
    assert any("semantic tier skipped" in n for n in result.notes)
    assert search_codebase(no_vectors, "cookie").files  # hybrid still answers


def test_every_list_a_tier_makes_is_registered_with_its_weight(store: IndexStore) -> None:
    """The tiers are one registry (answer/retrieval/tiers.py TIERS): each search type but hybrid and regex
    is a tier,
    and every list a tier returns has its fusion weight there (an unregistered list would count 1.0)."""
    from answer.retrieval.tiers import _WEIGHT_OF, DEFAULT_WEIGHTS, TIERS, _collect

    assert [t.name for t in TIERS] == [t for t in SEARCH_TYPES if t not in {"hybrid", "regex"}]
    for tier in TIERS:
        notes: list[str] = []
        lists = _collect(store, "signed cookie session SecureCookieSession in src/web/sessions.py", tier.name,
                         None, limit=10, w=DEFAULT_WEIGHTS, notes=notes)
        assert notes == []
        assert lists, tier.name
        assert set(lists) <= set(tier.weights) <= set(_WEIGHT_OF), tier.name
        assert any(lists.values()), tier.name


def test_docs_and_tests_are_searchable(store: IndexStore) -> None:
    assert "docs/sessions.md" in _paths(search_codebase(store, "signed cookie sessions", type="lexical"))
    assert "tests/test_routing.py" in _paths(search_codebase(store, "test add url rule"))


def test_regex_and_malformed_regex(store: IndexStore) -> None:
    result = search_codebase(store, r"^def (add_url|parse)_rule\(", type="regex")
    assert {h.path for h in result.hits} == {"src/web/routing.py"}
    assert {h.start_line for h in result.hits} == {1, 6}
    assert result.hits[0].tiers == ("lexical",)
    with pytest.raises(UsageError, match="regular expression"):
        search_codebase(store, "def (unclosed", type="regex")


@pytest.mark.parametrize("query", ["", "   ", "!!!...???", "foo:bar", '"unbalanced', "*", "AND OR NOT (",
                                   "x" * 100_000, "設定 ファイル", "' OR 1=1 --", "\x00\x01"])
@pytest.mark.parametrize("type_", SEARCH_TYPES[:4])
def test_bad_queries_give_results_not_tracebacks(store: IndexStore, query: str, type_: str) -> None:
    result = search_codebase(store, query, type=type_, limit=5)
    assert not result.degraded
    assert len(result.files) <= 5


def test_non_ascii_query_matches_non_ascii_text(store: IndexStore) -> None:
    assert "docs/sessions.md" in _paths(search_codebase(store, "café", type="lexical"))


@pytest.mark.parametrize("scope", ["' OR 1=1 --", "src/web%", "src/web_", "src/web/_", "%", "_",
                                   "nothing/here", "src' OR path LIKE '%", "\\", "src/web/\\%"])
def test_sql_looking_and_wildcard_scopes_never_widen(store: IndexStore, scope: str) -> None:
    from sourcebook.sql import prefix_filter

    for table in ("chunks", "files", "symbols"):  # the SQL filter alone, before any Python-side check
        assert store.table(table).count_rows(prefix_filter("path", scope)) == 0
    for type_ in SEARCH_TYPES:
        if scope == "\\":  # the root of a Windows drive: refused like any absolute path, never widened
            with pytest.raises(UsageError, match="invalid scope"):
                search_codebase(store, "settings", type=type_, scope=scope)
            continue
        result = search_codebase(store, "settings", type=type_, scope=scope)
        assert all(p.startswith(scope) for p in _paths(result)), (type_, scope)
        assert all(h.path.startswith(scope) for h in result.hits)
        assert not result.files


def test_scope_restricts_to_prefix(store: IndexStore) -> None:
    result = search_codebase(store, "settings toml", scope="src/web/")
    assert _paths(result)
    assert all(p.startswith("src/web/") for p in _paths(result))
    other = search_codebase(store, "settings toml", scope="src_other/")
    assert _paths(other) == ["src_other/web_x/config.py"]


def test_bad_type_and_limit(store: IndexStore) -> None:
    with pytest.raises(UsageError):
        search_codebase(store, "x", type="magic")
    with pytest.raises(UsageError):
        search_codebase(store, "x", limit=0)


def test_outage_degrades_instead_of_crashing(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("def alpha():\n    return 1\n")
    config = load_config(root)
    index_repository(config, embedder=None)
    broken = open_index(config)
    shutil.rmtree(Path(config.index_location) / "chunks.lance" / "data")
    result = search_codebase(broken, "alpha", type="lexical")
    assert result.degraded
    assert result.files == []
    assert result.notes


def test_missing_index(tmp_path: Path) -> None:
    with pytest.raises(IndexStoreError):
        open_index(load_config(tmp_path))


def test_cli_search_json_and_errors(store: IndexStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from sourcebook.cli import cli

    runner = CliRunner()
    # the index was built with the fake embedder: the configured default is another one, which is refused
    other = runner.invoke(cli, ["search", "SecureCookieSession", "--path", str(store.root)])
    assert other.exit_code != 0
    assert isinstance(other.exception, IndexStoreError)
    assert "rebuild" in str(other.exception)
    monkeypatch.setenv("SOURCEBOOK_EMBEDDER", "none")
    out = runner.invoke(cli, ["search", "SecureCookieSession", "--json", "--path", str(store.root)])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["files"][0]["path"] == "src/web/sessions.py"
    bad = runner.invoke(cli, ["search", "(", "--type", "regex", "--path", str(store.root)])
    assert bad.exit_code != 0
    assert isinstance(bad.exception, UsageError)


def test_paths_named_in_the_query_rank_those_files(store: IndexStore) -> None:
    trace = ('Traceback:\n  File "/usr/lib/python3/site-packages/src/web/sessions.py", line 3, in sign\n'
             "KeyError")
    assert search_codebase(store, trace, type="lexical").files[0].path == "src/web/sessions.py"
    short = search_codebase(store, "what does config.py do?", type="lexical")
    assert {"src/web/config.py", "src_other/web_x/config.py"} <= {f.path for f in short.files[:2]}
    scoped = search_codebase(store, "what does config.py do?", type="lexical", scope="src/")
    assert "src_other/web_x/config.py" not in [f.path for f in scoped.files]


def _semantic_keys(config: Config, monkeypatch: pytest.MonkeyPatch, use_memory: bool, queries: list[str],
                   scope: str | None, limit: int) -> list[dict[str, list[str]]]:
    from answer.retrieval import tiers as search_module

    monkeypatch.setattr(search_module, "IN_MEMORY_VECTOR_ROWS", 200_000 if use_memory else -1)
    fresh = open_index(config, embedder=FakeEmbedder())
    search_module.use_in_memory_ranking(fresh)
    weights = search_module.Weights(chunk_limit=limit, file_limit=limit, semantic_limit=limit)
    out = [{name: [c.key for c in cands]
            for name, cands in search_module._semantic_lists(fresh, q, scope, weights).items()}
           for q in queries]
    assert (fresh.memos.get(Memo("vectors:chunks")) is not None) is use_memory
    return out


@pytest.mark.parametrize("scope", [None, "src/web/"])
def test_in_memory_vectors_rank_exactly_like_lancedb(indexed_config: Config, monkeypatch: pytest.MonkeyPatch,
                                                     scope: str | None) -> None:
    queries = ["settings toml file", "signed cookie session", "register a url rule for a view", "café",
               "unrelated words nobody wrote"]
    for limit in (1, 2, 3, 5, 150):  # every cut-off must fall where LanceDB's does
        in_memory = _semantic_keys(indexed_config, monkeypatch, True, queries, scope, limit)
        assert in_memory == _semantic_keys(indexed_config, monkeypatch, False, queries, scope, limit)
        assert any(lists["semantic"] for lists in in_memory)


def test_in_memory_vectors_break_ties_like_lancedb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "twins"
    for i in range(6):  # identical text, identical vectors: only the tie-break orders them
        (root / f"pkg{i}").mkdir(parents=True)
        (root / f"pkg{i}" / "twin.py").write_text("def twin_value():\n    return 42\n")
    config = load_config(root)
    index_repository(config, embedder=FakeEmbedder())
    for limit in (1, 3, 6):
        in_memory = _semantic_keys(config, monkeypatch, True, ["twin value"], None, limit)
        assert in_memory == _semantic_keys(config, monkeypatch, False, ["twin value"], None, limit)
        assert len(in_memory[0]["semantic"]) == limit


_FTS_KEYS = {"chunks": ["path", "start_line", "end_line"], "files": ["path"], "pages": ["target_path"],
             "symbols": ["path", "qualname", "start_line", "end_line"]}


def _tie_groups(rows: list[dict[str, Any]], columns: list[str]) -> list[tuple[float, set[tuple[Any, ...]]]]:
    groups: dict[float, set[tuple[Any, ...]]] = {}
    for r in rows:
        groups.setdefault(round(r["_score"], 3), set()).add(tuple(r[c] for c in columns))
    return sorted(groups.items(), reverse=True)


@pytest.mark.parametrize("query", ["how are settings loaded from a toml file", "signed session cookies",
                                   "register url rules for views", "Café sessions signing", "rule"])
@pytest.mark.parametrize("scope", [None, "src/web", "docs"])
def test_in_memory_fts_ranks_as_lancedb(store: IndexStore, query: str, scope: str | None) -> None:
    from answer.retrieval.tiers import _FILE_PAGES, _fts, _fts_lance, _fts_text, use_in_memory_ranking

    use_in_memory_ranking(store)
    text = _fts_text(query)
    compared = 0
    for table, columns in _FTS_KEYS.items():
        where = _FILE_PAGES if table == "pages" else None
        ours = _fts(store, table, text, scope, limit=5, columns=columns, where=where)
        theirs = _fts_lance(store, table, text, scope, limit=5, columns=columns, where=where)
        if store.table(table).count_rows():
            assert store.memos.get(Memo(f"bm25:{table}:{','.join(columns)}")) is not None  # in memory it ran
        # same rows with the same scores, best first; only rows of equal score may come in another order
        assert _tie_groups(ours, columns) == _tie_groups(theirs, columns)
        assert [round(r["_score"], 3) for r in ours] == [round(r["_score"], 3) for r in theirs]
        compared += len(theirs)
    if scope != "docs":
        assert compared  # every query names something in the repository


def test_bm25_counts_a_query_term_once_per_occurrence() -> None:
    from answer.retrieval import bm25

    index = bm25.build(["serialize data", "data data data", None])
    once = dict(bm25.search(index, "serialized", 3))
    twice = dict(bm25.search(index, "serialized serialization", 3))
    assert list(once) == [0]
    assert twice[0] == pytest.approx(2 * once[0])
    assert [pos for pos, _ in bm25.search(index, "data", 3)] == [1, 0]
    assert bm25.search(index, "data", 3, keep=__import__("numpy").array([True, False, False]))[0][0] == 0


def test_one_shot_processes_rank_on_the_persisted_index_and_servers_in_memory(indexed_config: Config) -> None:
    from answer.retrieval.tiers import IN_MEMORY_AFTER, use_in_memory_ranking

    def built(s: IndexStore) -> set[str]:
        return {k.name for k in s.memos
                if k.name.startswith("bm25:") and k.name != "bm25:wanted" and s.memos.get(k) is not None}

    queries = ["how are settings loaded from a toml file", "register url rules for views", "signed cookies"]
    cold = open_index(indexed_config, embedder=FakeEmbedder())
    cold_files = [_paths(search_codebase(cold, q, type="hybrid")) for q in queries[:1]]
    assert not built(cold)  # one question: LanceDB's persisted FTS index, nothing built
    assert cold.memos.get(Memo("vectors:chunks")) is None  # nor a vector matrix: LanceDB's nearest rows
    warm = open_index(indexed_config, embedder=FakeEmbedder())
    use_in_memory_ranking(warm)
    assert cold_files == [_paths(search_codebase(warm, q, type="hybrid")) for q in queries[:1]]
    assert built(warm)
    for n in range(IN_MEMORY_AFTER):  # a process that keeps asking builds it by itself
        search_codebase(cold, queries[n % len(queries)], type="lexical")
    assert built(cold)


@pytest.mark.parametrize("warm", [False, True])
def test_lexical_finds_a_piece_of_an_identifier(indexed_config: Config, warm: bool) -> None:
    """A term that is only a piece of an identifier (`ecurecookie` of SecureCookieSession) finds it through
    the trigram index of identifiers, in a one-shot process (LanceDB's FTS) and a server (in memory)."""
    from answer.retrieval.tiers import use_in_memory_ranking

    store = open_index(indexed_config, embedder=FakeEmbedder())
    if warm:
        use_in_memory_ranking(store)
    piece = search_codebase(store, "ecurecookie", type="lexical")
    assert piece.hits, piece.notes
    assert piece.hits[0].path == "src/web/sessions.py"
    assert piece.hits[0].symbol.startswith("SecureCookieSession")
    assert _paths(piece)[0] == "src/web/sessions.py"
    assert _paths(search_codebase(store, "ettingsloade", type="lexical"))[0] == "src/web/config.py"
    assert search_codebase(store, "qqqzzzxx", type="lexical").files == []  # a piece of nothing


def test_substrings_only_expand_terms_the_word_index_does_not_know(store: IndexStore) -> None:
    """Where a term matches as a word, the word-level lists rank it and nothing is expanded."""
    from answer.retrieval.tiers import DEFAULT_WEIGHTS, _substring_matches, _vocabulary, substring_expansions

    assert _substring_matches(store, "cookie session", None, DEFAULT_WEIGHTS) == []
    assert _substring_matches(store, "ookiesessio", None, DEFAULT_WEIGHTS)
    vocab = _vocabulary(store)
    assert "securecookiesession" in substring_expansions(vocab, "ookiesessio")
    assert substring_expansions(vocab, "securecookiesession") == []  # a word is not its own piece
    assert substring_expansions(vocab, "se") == []  # shorter than a trigram


def test_symbolic_finds_callers_below_the_definition(store: IndexStore) -> None:
    """A function's name finds its definition first, then the spans that call it (reference edges);
    the callers rank spans only, not files."""
    result = search_codebase(store, "add_url_rule", type="symbolic")
    spans = [(h.path, h.symbol) for h in result.hits]
    assert spans[0] == ("src/web/routing.py", "add_url_rule")
    assert ("tests/test_routing.py", "test_add_url_rule") in spans
    assert _paths(result)[0] == "src/web/routing.py"
    caller = spans.index(("tests/test_routing.py", "test_add_url_rule"))
    assert result.hits[caller].score < result.hits[0].score
    from answer.retrieval.tiers import DEFAULT_WEIGHTS, _symbolic_lists

    lists = _symbolic_lists(store, "add_url_rule", None, DEFAULT_WEIGHTS)
    assert [(c.path, c.symbol) for c in lists["callers"]] == [("tests/test_routing.py", "test_add_url_rule")]
    assert _symbolic_lists(store, "parse_rule", None, DEFAULT_WEIGHTS)["callers"] == []  # nothing calls it


def _reference_names(index: dict[str, list[dict[str, Any]]], word: str, prefixes: list[str]
                     ) -> tuple[list[str], list[str]]:
    """What the symbolic tier's name lookups were before its name index: a scan of every key."""
    import difflib

    return ([k for k in index if any(k.startswith(p) for p in prefixes)],
            difflib.get_close_matches(word, list(index), n=5, cutoff=0.8))


def test_name_index_prefix_and_fuzzy_lookups_equal_a_scan_of_every_key() -> None:
    """The name index's numpy bound (character counts) and sorted keys only skip work: the prefix keys (in
    the symbol table's order) and difflib's close matches are exactly those of a scan of every key,
    non-ASCII, digit-heavy and overlong names included."""
    import random

    from answer.retrieval import tiers as search
    from generator.index.memos import Memos

    rng = random.Random(5)
    alphabet = "abcdefghijklmnopqrstuvwxyz_0123456789.éßλ"
    names = ["".join(rng.choice(alphabet[:rng.choice((6, 26, 41))]) for _ in range(rng.randint(1, 24)))
             for _ in range(3000)]
    names += [f"parse_helper_{n}" for n in range(300)] + ["x" * 300, "parse_" * 60, "ÉCOLE_Ünïcode"]

    class Fake:
        memos = Memos()

    store: Any = Fake()
    store.memos.put(search._SYMBOL_ROWS, [
        {"path": f"m{i % 50}.py", "qualname": n, "name": n.rsplit(".", 1)[-1], "kind": "function",
         "start_line": 1, "end_line": 2, "signature": "", "docstring": "", "docstring_source": ""}
        for i, n in enumerate(names)])
    index = search._name_index(store)
    words = [*rng.sample(names, 60), "parse_helpr_12", "parse_helper_1000", "x" * 290, "parse_" * 59,
             "école_unicode", "zzzz", "ab", *("".join(rng.choice(alphabet) for _ in range(9))
                                              for _ in range(40))]
    compared = 0
    for word in (w.lower() for w in words):
        prefixed, close = _reference_names(index.by_key, word, [word[:4], word[:6]])
        assert search._prefixed(index, [word[:4], word[:6]]) == prefixed
        assert search._close_names(index, word) == close
        compared += bool(close)
    assert compared > 30  # the comparison is not vacuous: most words have close matches


def test_lcs_lengths_equal_the_dynamic_programme() -> None:
    import random

    from answer.retrieval.tiers import lcs_lengths

    def lcs(a: str, b: str) -> int:
        row = [0] * (len(b) + 1)
        for ca in a:
            prev = 0
            for j, cb in enumerate(b, start=1):
                prev, row[j] = row[j], prev + 1 if ca == cb else max(row[j], row[j - 1])
        return row[-1]

    rng = random.Random(11)
    for _ in range(40):
        word = "".join(rng.choice("ab_1é") for _ in range(rng.randint(1, 64)))
        others = ["".join(rng.choice("ab_1éz") for _ in range(rng.randint(0, 90))) for _ in range(30)]
        assert lcs_lengths(word, others).tolist() == [lcs(word, o) for o in others]


def test_the_semantic_tier_embeds_the_questions_lead_paragraph(indexed_config: Config) -> None:
    """A commit message or a bug report: its body (lists, sign-offs, links) would dilute the mean vector of
    the lead paragraph that states the topic, and references carry no meaning to embed."""
    embedder = FakeEmbedder()
    store = open_index(indexed_config, embedder=embedder)
    question = ("Sign the session cookie with the secret key (#1234)\n\n"
                "* also touches the URL rule for the view and the endpoint parsing\n\n"
                "https://example.com/acme/web/issues/1234")
    result = search_codebase(store, question, type="semantic")
    embedded = embedder.calls[-1]
    assert "cookie" in embedded
    for left_out in ("endpoint", "1234", "example"):
        assert left_out not in embedded
    assert _paths(result)[0] == "src/web/sessions.py"
