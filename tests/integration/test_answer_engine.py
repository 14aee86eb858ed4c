"""get_answer end to end: a real small repository indexed into LanceDB, the scripted OpenAI-compatible server
on 127.0.0.1 as the provider."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from answer.answering.episodes import EpisodeStore
from answer.answering.evidence import EVIDENCE_BUDGET, EVIDENCE_BUDGET_WIDE, fuse_relational, retrieve
from answer.answering.get_answer import AnswerContext, get_answer
from answer.retrieval.tiers import FileHit
from sourcebook.config import Config, LLMConfig, load_config
from sourcebook.errors import NotFoundError, UsageError
from tests.support.fake_llm import FakeLLM, Reply, request_text
from tests.support.session_sources import CTX, SESSIONS

PROVIDER = '''"""JSON serialization for the app."""
import json


class DefaultJSONProvider:
    """Serialize data with the standard library json module."""

    ensure_ascii = True
    """Replace non-ASCII characters with escape sequences."""

    sort_keys = True

    def dumps(self, obj, **kwargs):
        """Serialize obj to a JSON string, as templates do with ``{{ value|tojson }}``."""
        kwargs.setdefault("ensure_ascii", self.ensure_ascii)
        kwargs.setdefault("sort_keys", self.sort_keys)
        return json.dumps(obj, **kwargs)

    def loads(self, s, **kwargs):
        """Parse a JSON string."""
        return json.loads(s, **kwargs)
'''


ROUTING = '''"""URL routing."""


def add_url_rule(rule, endpoint=None, view_func=None):
    """Register a rule; endpoint names may not contain a dot."""
    if endpoint and "." in endpoint:
        raise ValueError("endpoint names may not contain a dot")
    return (rule, endpoint, view_func)
'''

FILES = {
    "pkg/__init__.py": "",
    "pkg/json_provider.py": PROVIDER,
    "pkg/sessions.py": SESSIONS,
    "pkg/ctx.py": CTX,
    "pkg/routing.py": ROUTING,
    "docs/index.md": "# Guide\n\nHow to use the package.\n",
}
QUESTION = "What does ensure_ascii do in DefaultJSONProvider?"
GOOD = {"answer": "`DefaultJSONProvider.dumps` passes `ensure_ascii` to `json.dumps` through "
                  "kwargs.setdefault (pkg/json_provider.py).",
        "citations": ["pkg/json_provider.py"]}


def _index(root: Path, out: Path) -> Config:
    from generator.analyze.parse import extract
    from generator.analyze.scan import read_source, scan
    from generator.index.writer import update_index

    config = load_config(root, overrides={"out_dir": str(out)}, env={})
    result = scan(config)
    facts = {f.path: extract(f, read_source(config.root, f.path)) for f in result.files}
    update_index(config, result.files, facts, None, None)
    return config


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Config:
    base = tmp_path_factory.mktemp("answer-engine")
    root = base / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return _index(root, base / "sb")


@pytest.fixture
def config(indexed: Config, tmp_path: Path) -> Config:
    """The shared index, with this test's own cache and episodes."""
    return replace(indexed, out_dir=tmp_path / "out", index_uri=indexed.index_location)


def _llm(server: FakeLLM, **extra: Any) -> LLMConfig:
    settings: dict[str, Any] = {"base_url": server.base_url, "api_key": "k", "model": "fake-model",
                                "mode": "tools", "max_retries": 1, "retry_base_s": 0.01, "max_reasks": 1,
                                "timeout_s": 5.0, "context_tokens": 32000}
    settings.update(extra)
    return LLMConfig(**settings)


def _ctx(config: Config, server: FakeLLM | None = None, **extra: Any) -> AnswerContext:
    if server is None:
        return AnswerContext(config, chat=None)
    from sourcebook.provider import get_chat_model

    return AnswerContext(config, chat=get_chat_model(_llm(server, **extra)))


# ---------------------------------------------------------------- synthesized answers

def test_good_grounded_answer_is_high(config: Config, fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.ok(GOOD))
    reply = get_answer(_ctx(config, fake_llm), QUESTION, include=["diagnostics"])
    assert reply.confidence == "high"
    assert reply.degraded is None
    assert reply.citations == ["pkg/json_provider.py"]
    assert reply.retrieval_quality == "high"
    assert reply.grounding in {"symbol_body", "exact_symbol"}
    assert reply.best_guesses is None
    assert reply.episodes is None
    assert "pkg/json_provider.py" not in reply.candidate_files
    assert len(reply.candidate_files) <= 3
    assert reply.retrieval is not None
    assert len(reply.retrieval) <= 2
    assert reply.retrieval[0].symbols  # top file page enriched with its symbols
    names = {b.qualname for b in reply.symbol_bodies or []}
    assert "DefaultJSONProvider.dumps" in names
    body = next(b for b in reply.symbol_bodies or [] if b.qualname == "DefaultJSONProvider.dumps")
    assert body.body.lstrip().startswith("def dumps")
    assert body.changed_since_index is None
    # the model saw the promoted symbol's body and the evidence paths
    sent = request_text(fake_llm.requests[0])
    assert "kwargs.setdefault(\"ensure_ascii\"" in sent
    assert "{{ value|tojson }}" in sent  # evidence is sent verbatim, never rendered as a template
    assert "pkg/json_provider.py" in sent
    assert {"retrieve", "synthesize", "grade", "total"} <= set(reply.meta.timings_ms)
    assert reply.meta.cache_hit is False
    assert reply.meta.hint
    data = json.loads(reply.to_json())
    assert "_meta" in data
    assert "degraded" not in data  # absent, not null
    assert "best_guesses" not in data


def test_hedged_answer_is_lowered(config: Config, fake_llm: FakeLLM) -> None:
    hedged = dict(GOOD, answer=GOOD["answer"] + " The evidence does not show where the default is changed.")
    fake_llm.enqueue(Reply.ok(hedged))
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    assert reply.confidence == "medium"
    assert reply.note is not None
    assert "hedges" in reply.note


def test_invented_number_is_lowered(config: Config, fake_llm: FakeLLM) -> None:
    invented = dict(GOOD, answer=GOOD["answer"] + " It retries 7 times with a 30 second timeout.")
    fake_llm.enqueue(Reply.ok(invented))
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    assert reply.confidence == "medium"  # two invented numbers fail one check: one step down
    assert "7" in (reply.note or "")


def test_unshown_mechanism_is_lowered(config: Config, fake_llm: FakeLLM) -> None:
    made_up = dict(GOOD, answer=GOOD["answer"] + " It then calls `escape_unicode_table`.")
    fake_llm.enqueue(Reply.ok(made_up))
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    assert reply.confidence == "medium"
    assert "escape_unicode_table" in (reply.note or "")


def test_inline_paths_become_citations(config: Config, fake_llm: FakeLLM) -> None:
    inline = dict(GOOD, citations=[])  # the path is written in the answer only
    fake_llm.enqueue(Reply.ok(inline))
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    assert reply.citations == ["pkg/json_provider.py"]
    assert reply.confidence == "high"  # as cited as the same answer with the list filled in
    assert "pkg/json_provider.py" not in reply.candidate_files


def test_uncited_answer_gets_the_files_defining_what_it_names_but_is_never_high(config: Config,
                                                                               fake_llm: FakeLLM) -> None:
    """A small model cites nothing, not even inline, but names the code it explains."""
    bare = {"answer": "`DefaultJSONProvider.dumps` passes `ensure_ascii` to `json.dumps` through "
                      "kwargs.setdefault before serializing.", "citations": []}
    fake_llm.enqueue(Reply.ok(bare))
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    assert reply.citations == ["pkg/json_provider.py"]  # attached: the file defining what it names
    assert reply.confidence == "medium"  # the same answer cited by the model is high (see above)
    assert "citations attached from the symbols the answer names" in (reply.note or "")

    nothing = {"answer": "It escapes characters when the output is written, as configured by default.",
               "citations": []}
    fake_llm.enqueue(Reply.ok(nothing))
    reply = get_answer(_ctx(config, fake_llm), QUESTION, use_cache=False)
    assert reply.citations == []  # names nothing the evidence defines: nothing to attach
    assert reply.confidence != "high"
    assert "the answer cites no file" in (reply.note or "")


def test_inline_paths_outside_the_evidence_lower_confidence(config: Config, fake_llm: FakeLLM) -> None:
    wrong = dict(GOOD, answer=GOOD["answer"] + " The defaults live in pkg/json_defaults.py:12.", citations=[])
    fake_llm.enqueue(Reply.ok(wrong))
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    assert reply.citations == ["pkg/json_provider.py"]  # never the unshown file
    assert reply.confidence == "medium"
    assert "pkg/json_defaults.py" in (reply.note or "")


def test_low_confidence_carries_best_guesses(config: Config, fake_llm: FakeLLM) -> None:
    vague = {"answer": "It probably does something; the evidence does not show it.", "citations": []}
    fake_llm.enqueue(Reply.ok(vague))
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    assert reply.confidence == "low"
    assert reply.best_guesses
    assert reply.best_guesses[0].file == "pkg/json_provider.py"
    assert reply.best_guesses[0].why_relevant
    # each guess names the symbol that answers in it, as its candidate does
    first = reply.candidates[0]
    assert f"best match {first.symbol} (lines {first.lines[0]}-{first.lines[1]})" in \
        reply.best_guesses[0].why_relevant
    assert len(reply.candidate_files) <= 5
    assert reply.retrieval is not None
    assert len(reply.retrieval) <= 5


def test_citations_outside_evidence_are_reasked_then_rejected(config: Config, fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda body: Reply.ok({"answer": "See secret/elsewhere.py.",
                                                "citations": ["secret/elsewhere.py"]})
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    assert reply.degraded == "synthesis-failed"
    assert reply.confidence != "high"
    assert fake_llm.calls >= 2  # asked, then re-asked with the validation error
    assert "not in the evidence" in request_text(fake_llm.requests[-1])
    assert reply.citations == []
    assert reply.candidates  # the ranked evidence is still there
    assert reply.fallback_targets[0] == "pkg/json_provider.py"


def test_reask_that_fixes_citations_is_accepted(config: Config, fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.ok({"answer": "See elsewhere.", "citations": ["nowhere.py"]}), Reply.ok(GOOD))
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    assert reply.degraded is None
    assert reply.citations == ["pkg/json_provider.py"]
    assert fake_llm.calls == 2


def test_provider_500_is_synthesis_failed(config: Config, fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda body: Reply.status(500)
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    assert reply.degraded == "synthesis-failed"
    assert reply.confidence == "medium"  # strong retrieval, but a degraded reply is never high
    assert "Synthesis failed" in (reply.note or "")
    # not cached: the next call asks the provider again
    calls = fake_llm.calls
    fake_llm.responder = None
    fake_llm.enqueue(Reply.ok(GOOD))
    again = get_answer(_ctx(config, fake_llm), QUESTION)
    assert fake_llm.calls == calls + 1
    assert again.degraded is None


def test_timeout_is_synthesis_failed(config: Config, fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda body: Reply.slow(2.0, GOOD)
    reply = get_answer(_ctx(config, fake_llm, timeout_s=0.3, max_retries=0), QUESTION)
    assert reply.degraded == "synthesis-failed"


# ---------------------------------------------------------------- degraded without a provider

def test_no_provider_returns_ranked_evidence_at_medium(config: Config) -> None:
    reply = get_answer(_ctx(config), QUESTION)
    assert reply.degraded == "no-llm-provider"
    assert reply.confidence == "medium"
    assert "No LLM provider" in (reply.note or "")
    assert reply.fallback_targets[0] == "pkg/json_provider.py"
    assert reply.candidates
    assert reply.candidates[0].path == "pkg/json_provider.py"
    assert "DefaultJSONProvider" in "".join(e.text for e in reply.evidence or [])  # the evidence itself
    assert len(reply.answer) < 1000  # a summary; the evidence has its own field
    assert reply.symbol_bodies  # the question named a class: its live body comes along
    assert reply.grounding is None
    # the contract: the grounding spans' files come back as citations, so the caller can reason over them
    assert reply.citations[0] == "pkg/json_provider.py"
    assert set(reply.citations) == {e.path for e in reply.evidence or []}


def test_no_provider_weak_retrieval_is_low(config: Config) -> None:
    reply = get_answer(_ctx(config), "quantum entanglement of violet giraffes")
    assert reply.degraded == "no-llm-provider"
    assert reply.confidence == "low"


def test_degraded_reply_is_never_cached(config: Config) -> None:
    ctx = _ctx(config)
    get_answer(ctx, QUESTION)
    again = get_answer(ctx, QUESTION)
    assert again.meta.cache_hit is False
    assert not list((config.out_dir / "answers").glob("*.json"))


# ---------------------------------------------------------------- cache

def test_cache_hit_and_invalidation_by_cited_file(tmp_path: Path, fake_llm: FakeLLM, make_repo: Any) -> None:
    root = make_repo(FILES)
    config = _index(root, tmp_path / "sb")
    ctx = _ctx(config, fake_llm)
    fake_llm.enqueue(Reply.ok(GOOD))
    first = get_answer(ctx, QUESTION)
    second = get_answer(ctx, "  what does ensure_ascii do in DefaultJSONProvider ")
    assert fake_llm.calls == 1
    assert second.meta.cache_hit is True
    assert second.answer == first.answer
    assert "cache" in second.meta.timings_ms
    # another scope is another question
    fake_llm.enqueue(Reply.ok(GOOD))
    get_answer(ctx, QUESTION, scope="pkg")
    assert fake_llm.calls == 2
    # the cited file changes: the entry is invalid, the provider is asked again
    path = root / "pkg/json_provider.py"
    path.write_text(path.read_text() + "\n# changed\n")
    fake_llm.enqueue(Reply.ok(GOOD))
    third = get_answer(ctx, QUESTION)
    assert fake_llm.calls == 3
    assert third.meta.cache_hit is False
    # ... and the change was noticed: note + automatic episode, body read live
    assert "changed on disk" in (third.note or "")
    episodes = EpisodeStore(config.out_dir).all()
    assert any(e.source == "auto" and e.scope == "pkg/json_provider.py" for e in episodes)


def test_live_body_bounds_follow_an_edited_file(tmp_path: Path, fake_llm: FakeLLM, make_repo: Any) -> None:
    root = make_repo(FILES)
    config = _index(root, tmp_path / "sb")
    path = root / "pkg/json_provider.py"
    path.write_text("# a new header line\n# and another\n" + path.read_text())
    fake_llm.enqueue(Reply.ok(GOOD))
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    body = next(b for b in reply.symbol_bodies or [] if b.qualname == "DefaultJSONProvider.dumps")
    assert body.changed_since_index is True
    assert body.body.lstrip().startswith("def dumps")
    live_lines = path.read_text().split("\n")
    assert live_lines[body.start_line - 1].lstrip().startswith("def dumps")


# ---------------------------------------------------------------- episodes

def test_episode_returned_below_high_when_scope_intersects(config: Config, fake_llm: FakeLLM) -> None:
    store = EpisodeStore(config.out_dir)
    store.record("json output was switched to ensure_ascii=False in staging", "pkg/json_provider.py")
    store.record("docs are regenerated nightly", "docs")
    hedged = dict(GOOD, answer=GOOD["answer"] + " It is unclear where it is overridden.")
    fake_llm.enqueue(Reply.ok(hedged))
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    assert reply.confidence == "medium"
    assert reply.episodes is not None
    assert len(reply.episodes) == 1
    assert reply.episodes[0].scope == "pkg/json_provider.py"


def test_no_episode_at_high_confidence(config: Config, fake_llm: FakeLLM) -> None:
    EpisodeStore(config.out_dir).record("json output was switched in staging", "pkg")
    fake_llm.enqueue(Reply.ok(GOOD))
    reply = get_answer(_ctx(config, fake_llm), QUESTION)
    assert reply.confidence == "high"
    assert reply.episodes is None


def test_no_episode_outside_the_answer(config: Config) -> None:
    EpisodeStore(config.out_dir).record("docs are regenerated nightly", "docs")
    reply = get_answer(_ctx(config), QUESTION)
    assert reply.confidence != "high"
    assert reply.episodes is None


# ---------------------------------------------------------------- evidence budget, relational, arguments

def test_evidence_budget(tmp_path: Path, make_repo: Any, fake_llm: FakeLLM) -> None:
    big = {f"pkg/mod{i}.py": "".join(
        f'def handler_{i}_{j}(request):\n    """Handle the widget request number {j}."""\n'
        f'    return widget_request(request, {j})\n\n' for j in range(120)) for i in range(10)}
    root = make_repo(big)
    config = _index(root, tmp_path / "sb")
    from generator.index.store import open_index

    store = open_index(config, embedder=None)
    narrow = retrieve(store, "how is a widget request handled", None, EVIDENCE_BUDGET)
    wide = retrieve(store, "how is a widget request handled", None, EVIDENCE_BUDGET_WIDE)
    assert len(narrow.text) <= EVIDENCE_BUDGET
    assert len(wide.text) <= EVIDENCE_BUDGET_WIDE
    assert len(wide.text) > EVIDENCE_BUDGET  # there was more to show, and the wider budget showed it
    # through the engine: what reaches the model obeys the same budgets
    fake_llm.responder = lambda body: Reply.ok({"answer": "`widget_request` (pkg/mod0.py).",
                                                "citations": ["pkg/mod0.py"]})
    ctx = _ctx(config, fake_llm)
    get_answer(ctx, "how is a widget request handled", use_cache=False)
    get_answer(ctx, "how is a widget request handled", include=["evidence"], use_cache=False)
    sizes = [len(request_text(body)) for body in fake_llm.requests]
    assert sizes[0] <= EVIDENCE_BUDGET + 3000
    assert EVIDENCE_BUDGET < sizes[1] <= EVIDENCE_BUDGET_WIDE + 3000
    # at the default 8,192-token window the room, not the budget, is the limit: include=evidence still
    # widens what the model sees (the default ask fills DEFAULT_ROOM_SHARE of the room, evidence all of it)
    from answer.answering.synthesize import DEFAULT_ROOM_SHARE

    small = _ctx(config, fake_llm, context_tokens=8192)
    before = len(fake_llm.requests)
    get_answer(small, "how is a widget request handled", use_cache=False)
    get_answer(small, "how is a widget request handled", include=["evidence"], use_cache=False)
    default_chars, wide_chars = (len(request_text(body)) for body in fake_llm.requests[before:])
    room = (8192 - 1024) * 3 - 1500
    assert default_chars <= room * DEFAULT_ROOM_SHARE + 3000
    assert wide_chars > default_chars + 0.2 * room  # the model sees a quarter of the room more
    assert wide_chars <= room + 3000


def test_relational_fusion_boosts_files_on_both_sides() -> None:
    main = [FileHit("a.py", 1.0, ("lexical",)), FileHit("b.py", 0.9, ("lexical",))]
    side_a = [FileHit("a.py", 1.0, ("lexical",)), FileHit("c.py", 0.5, ("symbolic",))]
    side_b = [FileHit("c.py", 1.0, ("lexical",)), FileHit("b.py", 0.2, ("lexical",))]
    main = [*main, FileHit("c.py", 0.6, ("lexical",))]
    fused = fuse_relational(main, side_a, side_b)
    by_path = {path: (score, both) for path, score, _tiers, both in fused}
    assert by_path["c.py"] == (pytest.approx(1.2), True)
    assert by_path["b.py"] == (pytest.approx(0.9), False)  # one side only: no boost
    assert by_path["a.py"] == (pytest.approx(1.0), False)
    assert [path for path, *_ in fused] == ["c.py", "a.py", "b.py"]


def test_relational_question_runs_both_sides(config: Config) -> None:
    reply = get_answer(_ctx(config), "How does the SessionInterface talk to the RequestContext?")
    top = reply.fallback_targets[:2]
    assert set(top) == {"pkg/sessions.py", "pkg/ctx.py"}


def test_scope_limits_retrieval(config: Config) -> None:
    reply = get_answer(_ctx(config), "session cookie", scope="pkg/ctx.py")
    assert reply.fallback_targets == ["pkg/ctx.py"]


def test_argument_errors(config: Config) -> None:
    ctx = _ctx(config)
    with pytest.raises(UsageError, match="all"):
        get_answer(ctx, QUESTION, repo="all")
    with pytest.raises(UsageError, match="include"):
        get_answer(ctx, QUESTION, include=["everything"])
    with pytest.raises(UsageError):
        get_answer(ctx, "   ")
    with pytest.raises(UsageError):
        get_answer(ctx, QUESTION, scope="../outside")
    with pytest.raises(NotFoundError):
        get_answer(ctx, QUESTION, repo="some-other-repo")


def test_accepts_a_config_and_a_workspace(config: Config) -> None:
    from answer.serving.workspace import single

    offline = replace(config, llm=LLMConfig())
    assert get_answer(offline, QUESTION).degraded == "no-llm-provider"
    workspace = single(config.root, alias="demo", overrides={"out_dir": str(config.out_dir),
                                                             "index_uri": config.index_location}, env={})
    assert get_answer(workspace, QUESTION, repo="demo").fallback_targets[0] == "pkg/json_provider.py"
    with pytest.raises(UsageError, match="all"):
        get_answer(workspace, QUESTION, repo="all")


# ---------------------------------------------------------------- the CLI

def test_cli_ask_and_remember(tmp_path: Path, make_repo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from sourcebook.cli import cli

    for name in ("SOURCEBOOK_LLM_BASE_URL", "SOURCEBOOK_LLM_MODEL", "SOURCEBOOK_LLM_API_KEY",
                 "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    root = make_repo(FILES)
    _index(root, root / ".sourcebook")
    runner = CliRunner()
    done = runner.invoke(cli, ["remember", "json output is ASCII-only in production", "--scope", "pkg",
                               "--path", str(root)])
    assert done.exit_code == 0, done.output
    assert "pkg" in done.output
    result = runner.invoke(cli, ["ask", QUESTION, "--path", str(root), "--json", "--include", "diagnostics"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["degraded"] == "no-llm-provider"
    assert data["retrieval_quality"] in {"high", "partial", "weak"}
    assert data["fallback_targets"][0] == "pkg/json_provider.py"
    assert data["episodes"][0]["text"] == "json output is ASCII-only in production"
    assert "_meta" in data
    human = runner.invoke(cli, ["ask", QUESTION, "--path", str(root)])
    assert human.exit_code == 0, human.output
    assert "confidence: medium (degraded: no-llm-provider)" in human.output
    assert "pkg/json_provider.py" in human.output
    refused = runner.invoke(cli, ["ask", QUESTION, "--path", str(root), "--repo", "all"])
    assert refused.exit_code != 0


def test_hedged_cached_answer_resynthesized_when_symbol_pipeline_changes(
        config: Config, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    import answer.answering.get_answer as engine

    ctx = _ctx(config, fake_llm)
    hedged = dict(GOOD, answer=GOOD["answer"] + " It is unclear where it is overridden.")
    other = "Which class has ensure_ascii?"
    fake_llm.enqueue(Reply.ok(hedged), Reply.ok(GOOD))
    get_answer(ctx, QUESTION)
    get_answer(ctx, other)
    assert get_answer(ctx, QUESTION).meta.cache_hit
    assert fake_llm.calls == 2
    monkeypatch.setattr(engine, "symbol_pipeline_version", lambda store: "a-newer-parser")
    assert get_answer(ctx, other).meta.cache_hit  # a confident answer survives a pipeline change
    fake_llm.enqueue(Reply.ok(GOOD))
    fresh = get_answer(ctx, QUESTION)  # the hedged one is asked again
    assert fresh.meta.cache_hit is False
    assert fake_llm.calls == 3
    assert fresh.confidence == "high"


@pytest.mark.parametrize(("timeout_s", "degraded"), [(10.0, None), (1.0, "synthesis-failed")])
def test_ask_honours_the_configured_timeout(config: Config, fake_llm: FakeLLM, timeout_s: float,
                                            degraded: str | None) -> None:
    # a CPU server answering in 35 s against a 120 s timeout, scaled down: a 3 s reply
    fake_llm.responder = lambda body: Reply.slow(3.0, GOOD)
    configured = replace(config, llm=_llm(fake_llm, timeout_s=timeout_s, max_retries=0))
    reply = get_answer(AnswerContext(configured), QUESTION)  # the chat model is built from the config
    assert reply.degraded == degraded
    assert fake_llm.calls == 1  # max_retries=0 honoured too


def test_ask_honours_the_configured_retries_and_does_not_cap_the_timeout(config: Config,
                                                                          fake_llm: FakeLLM) -> None:
    # two timeouts, then an answer: three attempts need max_retries=2 (ask used to cap retries at 1)
    fake_llm.enqueue(Reply.slow(1.6, GOOD), Reply.slow(1.6, GOOD), Reply.ok(GOOD))
    configured = replace(config, llm=_llm(fake_llm, timeout_s=0.8, max_retries=2))
    reply = get_answer(AnswerContext(configured), QUESTION)
    assert reply.degraded is None
    assert fake_llm.calls == 3
    cpu = AnswerContext(replace(config, llm=_llm(fake_llm, timeout_s=600.0))).chat_model()
    assert cpu._config.timeout_s == 600.0  # type: ignore[union-attr]  # was capped at 30 s for `ask`


def test_evidence_hits_lead_with_their_symbol_and_a_summary_comes_once(tmp_path: Path) -> None:
    from generator.analyze.facts import PageRecord
    from generator.analyze.parse import extract
    from generator.analyze.scan import read_source, scan
    from generator.index.writer import update_index

    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    config = load_config(root, overrides={"out_dir": str(tmp_path / "sb")}, env={})
    files = scan(config).files
    facts = {f.path: extract(f, read_source(root, f.path)) for f in files}
    pages = [PageRecord(id=f"files/{f.path}.md", kind="file", title=f.path, target_path=f.path,
                        summary="It defines 2 classes and 4 functions.", markdown=f"# {f.path}")
             for f in files if f.path.endswith(".py")]
    update_index(config, files, facts, pages, None)
    reply = get_answer(_ctx(config), "How is the session opened and saved for a request context?")
    blocks = {e.path: e.text for e in reply.evidence or []}
    assert len(blocks) >= 2
    anchored: dict[str, str] = {}
    for c in reply.candidates or []:  # a file's first candidate is its anchor (the top file names two)
        if c.symbol:
            anchored.setdefault(c.path, c.symbol)
    assert set(anchored) & set(blocks)
    for path, symbol in anchored.items():
        if path not in blocks:
            continue
        # the hit's first line after its header names the symbol that answers, not the file's summary
        lines = blocks[path].splitlines()
        lead = lines[next(i for i, line in enumerate(lines) if line.startswith("## [")) + 1]
        assert symbol in lead, lead
        assert "(lines " in lead, lead
    text = "\n".join(blocks.values())
    assert text.count("It defines 2 classes") == 1  # the summary once per answer, not once per hit
