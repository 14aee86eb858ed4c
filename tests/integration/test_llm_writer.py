"""The LLM page writer against the scripted server: grounding, budgets, secrets, fallbacks, stop rules."""

from __future__ import annotations

import hashlib
import json

import pytest
from pydantic import ValidationError

from generator.analyze.facts import SourceFile
from generator.analyze.parse import extract
from generator.pages.llm.drafts import (
    Known,
    LLMFileDraft,
    LLMModuleDraft,
    LLMOverviewDraft,
    PartNotes,
    SymbolExplanation,
    check_text,
    clean_residue,
    resolve_paths,
    section_model,
)
from generator.pages.llm.excerpt import GAP, excerpt, pick_parts, split_parts
from generator.pages.llm.templates import prompt_version
from generator.pages.llm.writer import LLMWriter
from generator.pages.writer import (
    FileContext,
    ModuleContext,
    OverviewContext,
    PageLink,
    PageWriter,
    apply_docstrings,
    generated_docstrings,
)
from sourcebook.config import LLMConfig
from sourcebook.provider import OpenAIChatModel, estimate_prompt_tokens
from tests.support.fake_llm import FakeLLM, Reply, page_writer_responder, request_schema_name

APP = '''"""The application object."""
import os

from .helpers import helper


class App:
    """Holds the configuration."""

    def run(self, port: int = 5000) -> None:
        helper(port)

    def stop(self):
        return None


def make_app(name):
    return App()
'''
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def file_ctx(path: str = "pkg/app.py", source: str = APP) -> FileContext:
    raw = source.encode()
    sf = SourceFile(path, "python", len(raw), hashlib.sha256(raw).hexdigest())
    facts = extract(sf, raw)
    return FileContext(facts=facts, page_id=f"files/{path}.md", module=path.rsplit("/", 1)[0],
                       depends_on=(PageLink("pkg/helpers.py", "files/pkg/helpers.py.md", "helpers.py"),),
                       source=source)


def writer_for(server: FakeLLM, **config: object) -> LLMWriter:
    settings: dict[str, object] = {"base_url": server.base_url, "model": "fake", "retry_base_s": 0.01,
                                   "max_retries": 1, "max_reasks": 1, "timeout_s": 5.0}
    settings.update(config)
    chat = OpenAIChatModel(LLMConfig(**settings))  # type: ignore[arg-type]
    return LLMWriter(chat, repo_name="demo", concurrency=1)


def assert_within_window(server: FakeLLM, context_tokens: int) -> None:
    for body in server.requests:
        prompt = estimate_prompt_tokens(body["messages"])
        schema = len(json.dumps(body.get("tools", ""))) / 3
        assert prompt + schema + body["max_tokens"] <= context_tokens, (prompt, schema, body["max_tokens"])


def test_writer_is_a_page_writer_and_versioned(fake_llm: FakeLLM) -> None:
    writer = writer_for(fake_llm)
    assert isinstance(writer, PageWriter)
    assert writer.id == f"llm/fake/{prompt_version()}"
    assert writer.id.endswith("/f1.fp1.m1.mp1.o1.s2.y1")  # file_page.v1.j2, file_part.v1.j2, ...
    assert writer_for(fake_llm, model="other").id != writer.id  # the model is part of every page key


def test_valid_file_page(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.ok({
        "summary": "Defines `App`, the application object, and `make_app`.",
        "how_it_works": "`App.run` hands the port to `helper` from `pkg/helpers.py`.",
        "key_symbols": [{"qualname": "App.run", "explanation": "Starts serving."}],
        "docstrings": [{"qualname": "make_app", "explanation": "Create an App."}],
    }))
    writer = writer_for(fake_llm)
    draft = writer.file_page(file_ctx())
    assert (draft.written_by, draft.fallback) == ("llm", False)
    assert [n.qualname for n in draft.key_symbols] == ["App.run"]
    prompt = fake_llm.requests[0]["messages"][0]["content"]
    assert "App.run (method" in prompt  # the facts
    assert "def make_app(name):" in prompt  # the source, whole: it fits
    assert "make_app" in prompt.split("undocumented symbols:")[1]  # asked for the missing docstrings
    facts = apply_docstrings(file_ctx().facts, generated_docstrings(draft))
    generated = {s.qualname: (s.docstring, s.docstring_source) for s in facts.symbols}
    assert generated["make_app"] == ("Create an App.", "llm")
    assert generated["App"] == ("Holds the configuration.", "code")  # a real docstring is never replaced
    assert writer.stats().pages == 1


def test_invalid_optional_entries_are_dropped_and_the_draft_kept(fake_llm: FakeLLM,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    # what a 0.5B model sent for requests: a docstring for a documented symbol, one for a symbol that does
    # not exist, an invented key symbol; the rest of the draft is good and must not be thrown away
    fake_llm.enqueue(Reply.ok({
        "summary": "Defines `App`, the application object, and `make_app`.",
        "purpose": "It gives the package one object that owns configuration and serving.",
        "key_symbols": [{"qualname": "App.restart", "explanation": "Restarts."},
                        {"qualname": "App.run", "explanation": "Starts serving on a port."}],
        "docstrings": [{"qualname": "App", "explanation": "The app."},
                       {"qualname": "Ghost", "explanation": "Haunts."},
                       {"qualname": "make_app", "explanation": "Create an App."}],
    }))
    writer = writer_for(fake_llm, max_reasks=1)
    with caplog.at_level("INFO", logger="generator.pages.llm"):
        draft = writer.file_page(file_ctx())
    assert fake_llm.calls == 1  # no re-ask: only optional entries were wrong
    assert (draft.written_by, draft.fallback) == ("llm", False)
    assert [n.qualname for n in draft.key_symbols] == ["App.run"]
    assert generated_docstrings(draft) == {"make_app": "Create an App."}
    assert draft.purpose
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped) == 1  # one log line for the page, naming each dropped entry
    assert "App.restart" in dropped[0]
    assert "'App' is already documented" in dropped[0]
    assert "Ghost" in dropped[0]
    page = writer.chat.ledger.pages[0]
    assert (page.outcome, page.offered, page.rejected, page.docstrings) == ("llm", 6, 3, 1)


def test_invalid_required_summary_is_reasked_with_the_reason_in_a_user_message(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.ok({"summary": "HTTPAdapter"}),
                     Reply.ok({"summary": "Defines `App` and `make_app`, which builds one."}))
    draft = writer_for(fake_llm, max_reasks=1).file_page(file_ctx())
    assert draft.written_by == "llm"
    # the whole draft and its re-ask (then its missing sections, asked alone: unscripted, they fail with
    # HTTP 500, and the page keeps the summary it has)
    assert [request_schema_name(b) for b in fake_llm.requests].count("LLMFileDraft") == 2
    assert draft.summary == "Defines `App` and `make_app`, which builds one."
    reask = fake_llm.requests[1]["messages"]
    assert reask[-1]["role"] == "user"  # every chat format keeps user messages; chatml drops `tool` ones
    assert "too short" in reask[-1]["content"]
    assert "HTTPAdapter" in reask[-1]["content"]


def test_hallucinated_path_in_prose_is_fixed_on_reask(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.ok({"summary": "Works with `pkg/server.py`."}),
                     Reply.ok({"summary": "Works with `pkg/helpers.py`."}))
    draft = writer_for(fake_llm).file_page(file_ctx())
    assert draft.summary == "Works with `pkg/helpers.py`."
    assert draft.written_by == "llm"


def test_raw_line_breaks_inside_json_strings_are_read_not_rejected(fake_llm: FakeLLM) -> None:
    # small local models write a newline inside a JSON string raw: a strict parser refuses the whole reply
    fake_llm.enqueue(Reply.malformed('{"summary": "Defines the `App` class.\nIt runs\tthe helper."}'))
    draft = writer_for(fake_llm, max_reasks=0).file_page(file_ctx())
    assert (draft.written_by, draft.summary) == ("llm", "Defines the `App` class. It runs the helper.")
    assert [request_schema_name(b) for b in fake_llm.requests].count("LLMFileDraft") == 1  # no re-ask


def test_malformed_json_then_valid(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.malformed(), Reply.ok({"summary": "Defines the `App` class."}))
    assert writer_for(fake_llm).file_page(file_ctx()).written_by == "llm"


def test_planted_key_never_reaches_the_provider(fake_llm: FakeLLM) -> None:
    fake_llm.responder = page_writer_responder
    source = APP + f'\nGITHUB_TOKEN = "{GITHUB_TOKEN}"\nDB_PASSWORD = "correct-horse-battery"\n'
    writer = writer_for(fake_llm)
    writer.file_page(file_ctx(source=source))
    secret_file = file_ctx(path="deploy/.env", source=f"TOKEN={GITHUB_TOKEN}\n")
    assert writer.file_page(secret_file).written_by == "extracted"  # never sent, not even in part
    sent = fake_llm.all_text()
    assert fake_llm.calls == 1
    assert GITHUB_TOKEN not in sent
    assert "correct-horse-battery" not in sent
    assert "REDACTED" in sent
    assert "def make_app" in sent  # the rest of the file still went


def test_big_file_is_excerpted_to_fit_a_small_window(fake_llm: FakeLLM) -> None:
    fake_llm.responder = page_writer_responder
    body = "\n".join(f"    x{i} = {i} * 2" for i in range(60))
    source = APP + "".join(f"\n\ndef func_{n}(a, b):\n    '''Doc {n}.'''\n{body}\n    return a"
                           for n in range(40))
    writer = writer_for(fake_llm, context_tokens=4096, max_output_tokens=1024)
    draft = writer.file_page(file_ctx(source=source))
    assert draft.written_by == "llm"
    assert_within_window(fake_llm, 4096)
    prompts = [r["messages"][0]["content"] for r in fake_llm.requests]
    assert len(prompts) > 1  # too big for one excerpt: summarised in parts first
    assert any("part 1 of" in p for p in prompts)
    assert "Notes written earlier on its parts" in prompts[-1]


def test_excerpt_keeps_head_and_important_symbols() -> None:
    lines = [f"line {i}" for i in range(1, 201)]
    source = "\n".join(lines)
    text, truncated = excerpt(source, [(150, 160), (50, 55)], budget_chars=400)
    assert truncated
    assert "line 1" in text.split("\n")
    assert "line 150" in text.split("\n")
    assert GAP in text
    assert len(text) <= 400
    assert excerpt("short", [], 100) == ("short", False)


def test_split_parts_respects_budget_and_pick_prefers_important() -> None:
    source = "\n".join("y" * 50 for _ in range(100))
    parts = split_parts(source, [(1, 30), (31, 70), (71, 100)], budget_chars=1200)
    assert all(len(p.text) <= 1200 for p in parts)
    assert parts[0].start_line == 1
    assert parts[-1].end_line == 100
    chosen = pick_parts(parts, [(80, 90)], limit=2)
    assert len(chosen) == 2
    assert any(p.start_line <= 80 <= p.end_line for p in chosen)


def test_big_module_is_summarised_from_groups(fake_llm: FakeLLM) -> None:
    fake_llm.responder = page_writer_responder
    files = tuple(PageLink(f"pkg/mod_{i}.py", f"files/pkg/mod_{i}.py.md", f"mod_{i}.py",
                           f"Module {i} " + "does many careful things with data. " * 8) for i in range(120))
    ctx = ModuleContext(path="pkg", page_id="modules/pkg/index.md", title="pkg/", files=files)
    writer = writer_for(fake_llm, context_tokens=4096, max_output_tokens=1024)
    draft = writer.module_page(ctx)
    assert draft.written_by == "llm"
    assert fake_llm.calls > 2  # groups first, then the module
    assert_within_window(fake_llm, 4096)
    assert draft.key_items
    assert all(i.path.startswith("pkg/mod_") for i in draft.key_items)


def test_overview_readme_is_shortened_to_fit(fake_llm: FakeLLM) -> None:
    fake_llm.responder = page_writer_responder
    paragraph = "Paragraph about the project and its design. " * 5
    readme = "# Demo\n\n" + "\n\n".join(paragraph for _ in range(300))
    ctx = OverviewContext(repo_name="demo", readme=readme, readme_path="README.md",
                          top_modules=(PageLink("pkg", "modules/pkg/index.md", "pkg/", "The package."),))
    writer = writer_for(fake_llm, context_tokens=4096, max_output_tokens=1024)
    assert writer.overview(ctx).written_by == "llm"
    assert_within_window(fake_llm, 4096)
    assert "shortened" in fake_llm.requests[0]["messages"][0]["content"]


def test_outage_stops_calls_and_falls_back(fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda body: Reply.status(503)
    writer = writer_for(fake_llm, max_retries=1)
    drafts = [writer.file_page(file_ctx(path=f"pkg/f{i}.py")) for i in range(6)]
    assert all(d.fallback and d.written_by == "extracted" for d in drafts)
    assert fake_llm.calls == 3 * 2  # three pages tried (1 + 1 retry each), then the writer stopped asking
    assert "provider unavailable" in writer.stop_reason
    assert writer.stats().failures == 3


def test_max_pages_and_max_cost_stop_cleanly(fake_llm: FakeLLM) -> None:
    fake_llm.responder = page_writer_responder
    chat = OpenAIChatModel(LLMConfig(base_url=fake_llm.base_url, model="fake"))
    writer = LLMWriter(chat, max_pages=2)
    drafts = [writer.file_page(file_ctx(path=f"pkg/f{i}.py")) for i in range(4)]
    assert [d.written_by for d in drafts] == ["llm", "llm", "extracted", "extracted"]
    assert [d.fallback for d in drafts] == [False, False, True, True]
    assert "max-pages" in writer.stop_reason

    priced = OpenAIChatModel(LLMConfig(base_url=fake_llm.base_url, model="fake", price_in_per_mtok=1000.0))
    writer = LLMWriter(priced, max_cost=0.0001)
    drafts = [writer.file_page(file_ctx(path=f"pkg/g{i}.py")) for i in range(3)]
    assert drafts[0].written_by == "llm"
    assert drafts[-1].fallback
    assert "max-cost" in writer.stop_reason


def test_estimate_counts_calls_and_tokens_without_calling(fake_llm: FakeLLM) -> None:
    writer = writer_for(fake_llm)
    calls, tokens_in, tokens_out = writer.estimate(file_ctx())
    assert calls == 1
    assert tokens_in > 100
    assert tokens_out > 0
    assert writer.estimate(file_ctx(path="x/.env")) == (0, 0, 0)
    assert fake_llm.calls == 0


@pytest.mark.parametrize(("text", "reason"), [
    ("<script>alert(1)</script>", "HTML"),
    ("## Usage\nCall it.", "heading"),
    ("```python\nx = 1\n```", "code block"),
    ("Uses `App.start` to begin.", "no such member"),
    ("See `pkg/nowhere.py`.", "not in the facts"),
    ("N/A", "filler"),
    ("An odd ` backtick.", "unbalanced"),
    ('{"name": "LLMFileDraft", "arguments": {}}', "tool-call"),
    ("| a | b |", "table"),
])
def test_validators_reject_page_breaking_or_ungrounded_text(text: str, reason: str) -> None:
    known = Known.build(symbols=["App", "App.run"], top=["App"], paths=["pkg/app.py"])
    with pytest.raises(ValueError, match=reason):
        check_text("summary", text, known)


def test_empty_sections_rejected_or_dropped() -> None:
    ctx = Known.build(symbols=["App"], top=["App"], paths=["pkg/app.py"]).as_context()
    with pytest.raises(ValidationError, match="empty"):
        LLMFileDraft.model_validate({"summary": "  "}, context=ctx)
    draft = LLMFileDraft.model_validate({"summary": "Defines the `App` class.", "purpose": "", "how_it_works":
                                         "LLMFileDraft", "caveats": ["", "N/A"]}, context=ctx)
    assert draft.purpose is None
    assert draft.how_it_works is None  # a one-word echo is not a section
    with pytest.raises(ValidationError, match="too short"):
        LLMFileDraft.model_validate({"summary": "a"}, context=ctx)
    assert draft.caveats == []
    module = LLMModuleDraft.model_validate(
        {"summary": "The package of the app.",
         "key_items": [{"path": "pkg/ghost", "explanation": "x"},
                       {"path": "pkg/app.py", "explanation": "The app."}]},
        context=Known.build(items=["pkg/app.py"]).as_context())
    assert [i.path for i in module.key_items] == ["pkg/app.py"]  # the made-up path is dropped, not fatal
    assert "not one of the listed paths" in module.dropped[0]


def test_unknown_key_module_is_dropped_not_fatal() -> None:
    known = Known.build(items=["src/requests/sessions.py", "src/requests"], subject="requests")
    draft = LLMOverviewDraft.model_validate({
        "summary": "An HTTP client library: `src/requests/sessions.py` keeps cookies and pools connections.",
        "key_modules": [{"path": "src/http.py", "explanation": "HTTP."},
                        {"path": "src/requests", "explanation": "The package."}]}, context=known.as_context())
    assert [m.path for m in draft.key_modules] == ["src/requests"]
    assert draft.dropped == ["key_modules[0].path 'src/http.py' is not one of the listed paths"]


@pytest.mark.parametrize(("raw", "clean"), [
    ('Sends prepared requests through a pool.",', "Sends prepared requests through a pool."),
    ('Sends prepared requests through a pool."}', "Sends prepared requests through a pool."),
    ('"Sends prepared requests through a pool.', "Sends prepared requests through a pool."),
    ("Sends prepared requests through a pool.</tool_call>", "Sends prepared requests through a pool."),
    ('"summary": "Sends prepared requests."}]', "Sends prepared requests."),
    ('Wraps "raw" sockets.', 'Wraps "raw" sockets.'),  # paired quotes are prose
    ("Keeps a list [of pools]", "Keeps a list [of pools]"),
    ("Wraps the `Session class.", "Wraps the Session class."),  # a backtick never closed: dropped
    ("Calls `send` from `Session.request", "Calls `send` from Session.request"),
])
def test_json_residue_is_cleaned_deterministically(raw: str, clean: str) -> None:
    assert clean_residue(raw) == clean
    draft = LLMModuleDraft.model_validate({"summary": raw, "caveats": [raw]}, context=Known().as_context())
    assert draft.summary == clean
    assert draft.caveats == [clean]


@pytest.mark.parametrize("summary", [
    "A Requests session.",  # the name of the file and of the repository, nothing else
    "The sessions module.",
    "This file is for a developer wiki documenting one file of requests.",  # the prompt, echoed
    "i am a developer",  # Qwen2.5-Coder-0.5B on requests' structures.py: the model about itself
    "It wraps cookies. I will explain the rest later.",
])
def test_summaries_that_echo_the_prompt_or_restate_the_name_are_filler(summary: str) -> None:
    known = Known.build(symbols=["Session"], top=["Session"], paths=["src/requests/sessions.py"],
                        subject="src/requests/sessions.py requests")
    with pytest.raises(ValidationError, match=r"restates the name|repeats the instructions"):
        LLMFileDraft.model_validate({"summary": summary}, context=known.as_context())
    ok = LLMFileDraft.model_validate({"summary": "Keeps cookies and pooled connections across calls."},
                                     context=known.as_context())
    assert ok.summary.startswith("Keeps")


def test_part_notes_may_name_members_defined_in_other_parts(fake_llm: FakeLLM) -> None:
    # adapters.py: HTTPAdapter starts in one part, get_connection_with_tls_context sits in a later one
    methods = "\n".join(f"    def method_{i}(self):\n" + "        x = 1\n" * 30 for i in range(40))
    tail = "    def get_connection_with_tls_context(self):\n        return 1\n"
    source = f"class HTTPAdapter:\n{methods}\n{tail}"
    ctx = file_ctx(path="pkg/adapters.py", source=source)
    writer = writer_for(fake_llm, context_tokens=2048, max_output_tokens=512)
    assert writer.needs_parts(ctx)
    prompt, first_known, _label = writer._file_parts(ctx)[0]
    assert "get_connection_with_tls_context" not in prompt  # not in this part ...
    notes = PartNotes.model_validate(
        {"summary": "The adapter sends requests over pooled connections.",
         "key_symbols": [{"qualname": "HTTPAdapter.get_connection_with_tls_context",
                          "explanation": "Gets a pooled TLS connection."}]}, context=first_known.as_context())
    # ... but a real member of the file: accepted
    assert [n.qualname for n in notes.key_symbols] == ["HTTPAdapter.get_connection_with_tls_context"]


def _weak(body: dict) -> Reply:
    """A 0.5B model: every whole draft is rejected; one field or one symbol per call works, mostly."""
    name = request_schema_name(body)
    text = body["messages"][0]["content"]
    if name == "LLMFileDraft":
        return Reply.ok({"summary": "A demo app."})  # restates the name: rejected, re-asked, rejected
    if name == "SymbolExplanation":
        symbol = text.split("`", 2)[1]
        if symbol == "App.stop":
            return Reply.ok({"explanation": "The App.stop method."})  # restates its name: never accepted
        said = f"It does the work of {symbol.lower()} for callers, said plainly."
        return Reply.ok({"explanation": said + '",'})
    section = {"SummaryOnly": "summary", "PurposeOnly": "purpose", "HowItWorksOnly": "how_it_works"}[name]
    return Reply.ok({"explanation": f"`App.run` hands the port to `helper`, said for {section}.\","})


def test_a_model_failing_whole_drafts_gets_each_section_asked_alone(fake_llm: FakeLLM) -> None:
    fake_llm.responder = _weak
    writer = writer_for(fake_llm, max_reasks=1)
    draft = writer.file_page(file_ctx())
    assert (draft.written_by, draft.fallback) == ("llm", False)
    asked = [request_schema_name(b) for b in fake_llm.requests]
    assert asked[:2] == ["LLMFileDraft", "LLMFileDraft"]  # the whole draft, then its re-ask
    assert sorted(set(asked[2:])) == ["HowItWorksOnly", "PurposeOnly", "SummaryOnly", "SymbolExplanation"]
    full, single = (len(fake_llm.requests[i]["messages"][0]["content"]) for i in (0, 2))
    assert single < full  # shorter evidence for one field
    assert draft.summary.endswith("said for summary.")  # JSON residue cleaned
    assert draft.purpose
    assert draft.how_it_works
    # key symbols and docstrings: one symbol per call, the name attached by the writer, not the model
    assert [n.qualname for n in draft.key_symbols] == ["App", "App.run", "make_app"]
    assert generated_docstrings(draft) == {
        "App.run": "It does the work of app.run for callers, said plainly.",
        "make_app": "It does the work of make_app for callers, said plainly."}
    symbol_calls = [b["messages"][0]["content"] for b in fake_llm.requests
                    if request_schema_name(b) == "SymbolExplanation"]
    # App, App.run, make_app once each (a key symbol that is also undocumented costs one call), App.stop
    # twice (its reply restates its name: rejected, re-asked, rejected, then left out)
    assert sorted(t.split("`", 2)[1] for t in symbol_calls) == ["App", "App.run", "App.stop", "App.stop",
                                                                 "make_app"]
    caps = {b["max_tokens"] for b in fake_llm.requests if request_schema_name(b) == "SymbolExplanation"}
    assert caps == {200}  # a sentence or two: a rambling reply is cut early
    make_app = next(t for t in symbol_calls if t.split("`", 2)[1] == "make_app")
    assert "def make_app(name):\n    return App()" in make_app  # its own code ...
    assert "helper(port)" not in make_app  # ... not the rest of the file
    richness = writer.chat.ledger.richness()
    assert (richness.by_model, richness.docstrings) == (1, 2)
    assert richness.sections_per_page == 4  # summary, purpose, how it works, key symbols


@pytest.mark.parametrize(("timeout_s", "written_by"), [(6.0, "llm"), (0.5, "extracted")])
def test_a_slow_cpu_server_is_waited_for_as_configured(fake_llm: FakeLLM, timeout_s: float,
                                                       written_by: str) -> None:
    """Single requests to a CPU server took 35-127 s against a 60 s default: the build honours the configured
    timeout (SOURCEBOOK_LLM_TIMEOUT). Scaled down: a 2 s reply against 6 s, and against 0.5 s."""
    fake_llm.responder = lambda body: Reply.slow(2.0, {"summary": "Defines `App`, which runs `helper`.",
                                                        "purpose": "It serves the demo.",
                                                        "how_it_works": "`App.run` calls `helper`.",
                                                        "key_symbols": [{"qualname": "App",
                                                                         "explanation": "The app."}]})
    draft = writer_for(fake_llm, timeout_s=timeout_s, max_retries=0).file_page(file_ctx())
    assert draft.written_by == written_by
    assert fake_llm.calls == 1  # no retry (max_retries=0), and a reply in time is never re-sent


def test_dry_run_estimate_counts_every_call_of_the_small_model_path(fake_llm: FakeLLM) -> None:
    """`build --dry-run` must count the one-field and one-symbol calls too: the whole draft (estimate) plus
    the section-by-section path (estimate_alone) is exactly the calls a failing whole draft leads to."""
    fake_llm.responder = _weak
    writer = writer_for(fake_llm, max_reasks=1)
    ctx = file_ctx()
    (calls, _, _), (alone, alone_in, alone_out) = writer.estimate(ctx), writer.estimate_alone(ctx)
    assert fake_llm.calls == 0
    assert alone_in > 0
    assert alone_out > 0
    writer.file_page(ctx)
    assert writer.chat.ledger.totals().calls == calls + alone  # summary, purpose, how, 4 symbols + whole


def test_a_module_section_asked_alone_is_one_explanation_over_short_evidence(fake_llm: FakeLLM) -> None:
    """Qwen2.5-Coder-0.5B answered a one-field "structure" ask with the list of paths it was shown, on every
    try; the same prompt with the field named "explanation" got sentences. Every section asked alone is now
    an `explanation`, the section named in the sentence, with few import edges (paths invite copying)."""
    from generator.pages.writer import ModuleContext, PageLink

    files = tuple(PageLink(f"pkg/m{i}.py", f"files/pkg/m{i}.py.md", f"m{i}.py", f"Module {i} does step {i}.")
                  for i in range(12))
    edges = tuple((f"pkg/m{i}.py", f"pkg/m{i + 1}.py") for i in range(11))
    ctx = ModuleContext(path="pkg", page_id="modules/pkg/index.md", title="pkg", files=files,
                        internal_edges=edges)

    def replies(body: dict) -> Reply:
        name = request_schema_name(body)
        if name == "LLMModuleDraft":
            return Reply.ok({"summary": "pkg"})  # too short: rejected, re-asked, rejected
        if name == "StructureOnly":
            props = body["tools"][0]["function"]["parameters"]["properties"]
            assert list(props) == ["explanation"]
            return Reply.ok({"explanation": "pkg/m0.py\npkg/m1.py"})  # the listing: rejected
        return Reply.ok({"explanation": "`pkg/m0.py` starts the work and `pkg/m1.py` finishes it."})
    fake_llm.responder = replies
    writer = writer_for(fake_llm, max_reasks=1)
    draft = writer.module_page(ctx)
    assert (draft.written_by, draft.summary, draft.purpose) == (
        "llm", "`pkg/m0.py` starts the work and `pkg/m1.py` finishes it.",
        "`pkg/m0.py` starts the work and `pkg/m1.py` finishes it.")
    assert draft.structure is None  # failed alone too: left out, the page kept
    structure = next(b for b in fake_llm.requests if request_schema_name(b) == "StructureOnly")
    text = structure["messages"][0]["content"]
    assert 'Write only the field "explanation": its structure' in text
    assert text.count(" -> ") == 6  # SECTION_EDGES import edges, not all 11
    whole = next(b for b in fake_llm.requests if request_schema_name(b) == "LLMModuleDraft")
    assert whole["messages"][0]["content"].count(" -> ") == 11


def test_after_two_failed_whole_drafts_later_pages_go_section_by_section(fake_llm: FakeLLM) -> None:
    """A run against a small model stops paying for whole drafts (and their re-asks) it never gets."""
    fake_llm.responder = _weak
    writer = writer_for(fake_llm, max_reasks=1)
    whole = []
    for i in range(3):
        before = len(fake_llm.requests)
        draft = writer.file_page(file_ctx(path=f"pkg{i}/app.py"))
        assert (draft.written_by, bool(draft.purpose), len(draft.key_symbols)) == ("llm", True, 3)
        whole.append([request_schema_name(b) for b in fake_llm.requests[before:]].count("LLMFileDraft"))
    assert whole == [2, 2, 0]


def test_a_section_missed_twice_is_asked_alone_on_later_pages(fake_llm: FakeLLM) -> None:
    def no_purpose(body: dict) -> Reply:
        if request_schema_name(body) == "PurposeOnly":
            return Reply.ok({"explanation": "It owns configuration and serving for the package."})
        reply = page_writer_responder(body)
        return Reply.ok({k: v for k, v in reply.payload.items() if k != "purpose"})
    fake_llm.responder = no_purpose
    writer = writer_for(fake_llm)
    drafts = [writer.file_page(file_ctx(path=f"pkg/f{i}.py")) for i in range(3)]
    assert [bool(d.purpose) for d in drafts] == [False, True, True]  # missed once: tolerated; twice: alone
    assert [request_schema_name(b) for b in fake_llm.requests].count("PurposeOnly") == 2


def test_sections_a_file_cannot_have_are_never_asked_alone(fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda body: Reply.ok({"summary": "Sets the package version string for releases."})
    writer = writer_for(fake_llm)
    for i in range(3):
        ctx = file_ctx(path=f"pkg/v{i}.py", source='"""Re-exports."""\nfrom .core import run\n')
        assert not ctx.facts.symbols
        writer.file_page(ctx)
    asked = {request_schema_name(b) for b in fake_llm.requests}
    assert "KeySymbolsOnly" not in asked  # no symbols: no key-symbol call that cannot succeed
    assert "HowItWorksOnly" not in asked
    assert "PurposeOnly" in asked


def test_special_methods_get_no_docstring_call_of_their_own(fake_llm: FakeLLM) -> None:
    fake_llm.responder = _weak
    source = ('class Box:\n    """Holds items."""\n\n    def __len__(self):\n        return 0\n\n'
              '    def size(self):\n        return len(self)\n')
    draft = writer_for(fake_llm, max_reasks=1).file_page(file_ctx(path="pkg/app.py", source=source))
    asked = [b["messages"][0]["content"].split("`", 2)[1] for b in fake_llm.requests
             if request_schema_name(b) == "SymbolExplanation"]
    assert "Box.__len__" not in asked
    said = "It does the work of box.size for callers, said plainly."
    assert generated_docstrings(draft) == {"Box.size": said}


def test_a_draft_with_only_a_summary_gets_its_sections_asked_alone_at_once(fake_llm: FakeLLM) -> None:
    """What a 0.5B model returns for a whole draft: a valid summary and little else. Not a page: its
    missing core sections are asked alone on this very page (a one-file repository has no second page)."""
    def summary_only(body: dict) -> Reply:
        if request_schema_name(body) == "LLMFileDraft":  # a summary, and one core section of four
            return Reply.ok({"summary": "Defines `App`, which runs the server through `helper`.",
                             "how_it_works": "`make_app` builds an `App` whose `App.run` calls `helper`."})
        return _weak(body)
    fake_llm.responder = summary_only
    writer = writer_for(fake_llm, max_reasks=1)
    draft = writer.file_page(file_ctx())
    asked = [request_schema_name(b) for b in fake_llm.requests]
    assert asked.count("LLMFileDraft") == 1  # accepted: no re-ask
    assert {"PurposeOnly", "SymbolExplanation"} <= set(asked)
    assert "SummaryOnly" not in asked  # the summary and the section it gave are kept
    assert "HowItWorksOnly" not in asked
    assert draft.summary.startswith("Defines `App`")
    assert (bool(draft.purpose), bool(draft.how_it_works), len(draft.key_symbols)) == (True, True, 3)
    assert writer.chat.ledger.richness().docstrings == 2


def test_shortened_paths_naming_one_known_path_are_written_out_not_reasked() -> None:
    """Qwen2.5-Coder-0.5B on requests' src/: `requests/hooks.py` (module structure, asked alone three times)
    and `requests.sessions.py` (a file's purpose) were refused as unknown paths. A form that names exactly
    one known path is repaired; an ambiguous or unknown one is still refused."""
    known = Known.build(paths=["src/requests/hooks.py", "src/requests/sessions.py", "src/requests",
                               "src/a/util.py", "lib/a/util.py"], subject="src/requests requests")
    assert resolve_paths("`requests/hooks.py` calls `requests.sessions.py`.", known) == (
        "`src/requests/hooks.py` calls `src/requests/sessions.py`.")
    assert resolve_paths("`hooks.py`, `Session.send`, `src/requests`", known) == (
        "`hooks.py`, `Session.send`, `src/requests`")  # bare names, symbols and exact paths: as written
    reply = section_model("structure").model_validate(
        {"explanation": "`requests/sessions.py` keeps a session and `requests/hooks.py` runs its hooks."},
        context=known.as_context())
    assert reply.explanation == ("`src/requests/sessions.py` keeps a session and `src/requests/hooks.py` "  # type: ignore[attr-defined]
                                 "runs its hooks.")
    for unresolved in ("`a/util.py`", "`other/hooks.py`"):  # two files end in a/util.py; none in other/
        with pytest.raises(ValidationError, match="not in the facts"):
            section_model("structure").model_validate(
                {"explanation": f"The {unresolved} file runs the hooks of every session."},
                context=known.as_context())


def test_a_symbol_explanation_a_sentence_too_long_is_cut_not_reasked() -> None:
    """requests' merge_setting: a 522-character explanation (limit 400) failed all three attempts."""
    known = Known.build(subject="merge_setting")
    first = "Merges a request's setting with the session's setting, the request's value winning. "
    reply = SymbolExplanation.model_validate({"explanation": first + "It drops keys set to None. " * 20},
                                             context=known.as_context())
    assert len(reply.explanation) <= 400
    assert reply.explanation.startswith(first + "It drops keys set to None.")
    assert reply.explanation.endswith(".")
    with pytest.raises(ValidationError, match="too long"):  # not even one sentence fits: re-asked
        SymbolExplanation.model_validate({"explanation": "Merges " + "settings and " * 60 + "more."},
                                         context=known.as_context())


@pytest.mark.parametrize(("text", "reason"), [
    ("The previous reply was rejected because the JSON structure is invalid.", "repeats the instructions"),
    ("The function names are listed exactly as provided in backticks.", "repeats the instructions"),
    ("Dependencies are listed in `requirements.txt`.", "not in the facts"),
    ("Builds with the `Makefile`.", "not in the facts"),
])
def test_prompt_echoes_reask_reasons_and_invented_bare_file_names_are_rejected(text: str,
                                                                               reason: str) -> None:
    known = Known.build(symbols=["App", "App.json"], top=["App"], paths=["pkg/app.py", "README.md"])
    with pytest.raises(ValueError, match=reason):
        check_text("summary", text, known)
    check_text("summary", "`App.json` returns the body and `README.md` explains it.", known)  # real names


def test_rest_roles_and_overload_suffixes_are_cleaned_from_model_prose() -> None:
    known = Known.build(symbols=["App", "App.run", "echo"], top=["App", "echo"], paths=["pkg/app.py"])
    ctx = known.as_context()
    draft = LLMFileDraft.model_validate(
        {"summary": "Defines `App`; :meth:`App.run` calls :func:`~echo` with :param message: the text.",
         "how_it_works": "How `App.run~2` works: it calls `echo~3` once."}, context=ctx)
    assert draft.summary == "Defines `App`; `App.run` calls `echo` with `message`: the text."
    assert "~" not in (draft.how_it_works or "")
    assert ":func:" not in draft.summary


@pytest.mark.parametrize("text", [
    "The function names are listed exactly as provided in backticks.",  # published on five pages (issue 27)
    "Symbols and paths are named only if they are listed, written exactly as listed.",
    "It keeps the same structure, fixing exactly these problems and keeping everything else.",
    "`App` is documented here. Only the facts and code given here are used.",  # one echo is enough
])
def test_sentences_overlapping_the_prompts_own_instructions_are_filler(text: str) -> None:
    """Measured overlap with the instruction sentences (echo.py), not a phrase list: paraphrases too."""
    known = Known.build(symbols=["App"], top=["App"], paths=["pkg/app.py"])
    with pytest.raises(ValueError, match="repeats the instructions"):
        check_text("summary", text, known)


@pytest.mark.parametrize("text", [
    "Serialize data as JSON and write it to a file named by the caller.",
    "Register a function to run before each request, so `App` can open its database first.",
    "Lists every path in the cookie jar, in the order they were set.",
])
def test_real_prose_about_code_is_not_taken_for_an_echo(text: str) -> None:
    known = Known.build(symbols=["App"], top=["App"], paths=["pkg/app.py"])
    check_text("summary", text, known)


def test_an_echo_in_a_fake_provider_draft_is_dropped_from_the_page() -> None:
    """Through the draft model the writer validates replies with: an optional section that echoes the
    prompt is dropped and listed, the rest of the page kept."""
    known = Known.build(symbols=["App"], top=["App"], paths=["pkg/app.py"], subject="pkg/app.py")
    draft = LLMFileDraft.model_validate(
        {"summary": "`App` builds the application and routes its requests.",
         "how_it_works": "Plain Markdown sentences are used, with no headings, no HTML and no tables."},
        context=known.as_context())
    assert draft.how_it_works is None
    assert any("repeats the instructions" in d for d in draft.dropped)
    assert draft.summary.startswith("`App` builds")


def test_residue_is_cleaned_from_the_end_of_a_long_value_in_one_pass() -> None:
    # a provider's value is untrusted: a search from every position took 46 s on 16,000 characters of `, `
    assert clean_residue("Reads the file" + ", " * 16000 + "x") == "Reads the file" + ", " * 15999 + ", x"
    assert clean_residue('Reads the file."' + ', "' * 300 + '}') == 'Reads the file.'
