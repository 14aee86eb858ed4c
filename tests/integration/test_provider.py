"""The chat provider against a real HTTP fake on 127.0.0.1: retries, re-asks, cut replies, the ledger."""

from __future__ import annotations

import json
import random
import socket
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationInfo, field_validator

from sourcebook.config import LLMConfig
from sourcebook.errors import ProviderError, ProviderOutputError
from sourcebook.ledger import Ledger
from sourcebook.provider import (
    OpenAIChatModel,
    estimate_prompt_tokens,
    estimate_tokens,
    get_chat_model,
)
from sourcebook.retry import backoff_delay
from tests.support.fake_llm import FakeLLM, Reply

ASK = [{"role": "user", "content": "Summarise app.py"}]


class Draft(BaseModel):
    summary: str

    @field_validator("summary")
    @classmethod
    def only_known_names(cls, value: str, info: ValidationInfo) -> str:
        known = set((info.context or {}).get("known", ()))
        for word in value.split():
            if word.startswith("`") and word.strip("`.,") not in known:
                raise ValueError(f"names {word.strip('`.,')!r}, which is not in the file")
        if not value.strip():
            raise ValueError("summary is empty")
        return value


def model_for(server: FakeLLM, **overrides: object) -> OpenAIChatModel:
    settings: dict[str, object] = {"base_url": server.base_url, "model": "fake", "retry_base_s": 0.01,
                                   "timeout_s": 2.0, "max_retries": 3, "max_reasks": 2}
    settings.update(overrides)
    return OpenAIChatModel(LLMConfig(**settings))  # type: ignore[arg-type]


@pytest.mark.parametrize(("mode", "fenced"), [("tools", False), ("json", False), ("md_json", True)])
def test_valid_reply_in_each_mode(fake_llm: FakeLLM, mode: str, fenced: bool) -> None:
    fake_llm.enqueue(Reply.ok({"summary": "Creates the `Flask` app."}, fenced=fenced))
    chat = model_for(fake_llm, mode=mode)
    draft = chat.complete(Draft, ASK, context={"known": ["Flask"]}, label="file:app.py")
    assert draft.summary == "Creates the `Flask` app."
    body = fake_llm.requests[0]
    assert ("tools" in body) == (mode == "tools")
    assert body["model"] == "fake"
    assert body["max_tokens"] <= chat.context_tokens
    entry = chat.ledger.entries[0]
    assert (entry.label, entry.ok, entry.requests) == ("file:app.py", True, 1)
    assert entry.input_tokens > 0
    assert entry.output_tokens > 0


def test_malformed_json_is_reasked(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.malformed(), Reply.ok({"summary": "fine"}))
    chat = model_for(fake_llm)
    assert chat.complete(Draft, ASK).summary == "fine"
    assert fake_llm.calls == 2
    assert "json" in json.dumps(fake_llm.requests[1]["messages"][-2:]).lower()


def test_hallucinated_symbol_is_reasked_with_the_reason_then_rejected(fake_llm: FakeLLM) -> None:
    bad = Reply.ok({"summary": "Calls `make_magic` first."})
    fake_llm.enqueue(bad, bad, bad)
    chat = model_for(fake_llm, max_reasks=2)
    with pytest.raises(ProviderOutputError, match="make_magic"):
        chat.complete(Draft, ASK, context={"known": ["Flask"]})
    assert fake_llm.calls == 3  # one ask + two bounded re-asks, then it stops
    reask = json.dumps(fake_llm.requests[1]["messages"])
    assert "not in the file" in reask  # the validator's reason went back to the model
    assert chat.ledger.totals().failed == 1


def test_hallucination_fixed_on_reask(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.ok({"summary": "Uses `Blueprint`."}), Reply.ok({"summary": "Uses `Flask`."}))
    chat = model_for(fake_llm)
    assert chat.complete(Draft, ASK, context={"known": ["Flask"]}).summary == "Uses `Flask`."


def test_429_then_success_honours_retry_after(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.status(429, retry_after=0.2), Reply.ok({"summary": "ok"}))
    chat = model_for(fake_llm)
    assert chat.complete(Draft, ASK).summary == "ok"
    assert fake_llm.calls == 2
    assert chat.ledger.entries[0].requests == 2
    assert chat.ledger.entries[0].seconds >= 0.2


def test_500s_exhaust_retries(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(*[Reply.status(500)] * 4)
    chat = model_for(fake_llm, max_retries=3)
    with pytest.raises(ProviderError) as info:
        chat.complete(Draft, ASK)
    assert info.value.status == 500
    assert not isinstance(info.value, ProviderOutputError)
    assert fake_llm.calls == 4  # first try + 3 retries


def test_client_error_is_not_retried(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.status(400), Reply.ok({"summary": "never asked"}))
    chat = model_for(fake_llm)
    with pytest.raises(ProviderError, match="rejected") as info:
        chat.complete(Draft, ASK)
    assert info.value.status == 400
    assert fake_llm.calls == 1


def test_timeout_is_retried(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.slow(1.5, {"summary": "too late"}), Reply.ok({"summary": "in time"}))
    chat = model_for(fake_llm, timeout_s=0.5)
    assert chat.complete(Draft, ASK).summary == "in time"


def test_timeouts_exhaust_retries(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(*[Reply.slow(1.0, {"summary": "late"})] * 2)
    chat = model_for(fake_llm, timeout_s=0.3, max_retries=1)
    with pytest.raises(ProviderError, match="Timeout"):
        chat.complete(Draft, ASK)


def test_connection_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    chat = OpenAIChatModel(LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", retry_base_s=0.01,
                                     max_retries=1))
    with pytest.raises(ProviderError, match="Connection"):
        chat.complete(Draft, ASK)


def test_cut_reply_is_asked_again_shorter(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.cut(), Reply.ok({"summary": "short"}))
    chat = model_for(fake_llm, max_output_tokens=200)
    assert chat.complete(Draft, ASK).summary == "short"
    second = fake_llm.requests[1]
    assert "cut off" in second["messages"][-1]["content"]
    assert second["max_tokens"] > fake_llm.requests[0]["max_tokens"]  # more room, if the window allows
    assert chat.ledger.entries[0].output_tokens > 0  # the cut reply's tokens are counted too


def test_cut_twice_fails(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.cut(), Reply.cut())
    chat = model_for(fake_llm)
    with pytest.raises(ProviderOutputError, match="cut"):
        chat.complete(Draft, ASK)


def test_prompt_that_cannot_fit_is_never_sent(fake_llm: FakeLLM) -> None:
    chat = model_for(fake_llm, context_tokens=1000)
    huge = [{"role": "user", "content": "x" * 10_000}]
    with pytest.raises(ProviderError, match="no room"):
        chat.complete(Draft, huge)
    assert fake_llm.calls == 0


def test_reply_budget_shrinks_to_fit_the_window(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.ok({"summary": "ok"}))
    chat = model_for(fake_llm, context_tokens=2000, max_output_tokens=1500)
    prompt = [{"role": "user", "content": "y" * 3000}]
    chat.complete(Draft, prompt)
    sent = fake_llm.requests[0]["max_tokens"]
    assert sent + estimate_prompt_tokens(prompt, Draft) <= 2000


def test_ledger_prices_and_saves(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply.ok({"summary": "a"}), Reply.ok({"summary": "b"}))
    ledger = Ledger(price_in_per_mtok=1_000_000.0, price_out_per_mtok=2_000_000.0)  # $1 / $2 per token
    chat = OpenAIChatModel(LLMConfig(base_url=fake_llm.base_url, model="fake"), ledger)
    chat.complete(Draft, ASK)
    chat.complete(Draft, ASK)
    totals = ledger.totals()
    assert totals.calls == 2
    assert totals.cost == totals.input_tokens * 1.0 + totals.output_tokens * 2.0
    saved = ledger.save(tmp_path)
    data = json.loads(saved.read_text())
    assert data["totals"]["calls"] == 2
    assert (tmp_path / "ledger" / "latest.json").is_file()
    assert "2 calls" in ledger.format()


def test_get_chat_model_none_without_provider() -> None:
    assert get_chat_model(LLMConfig()) is None
    assert get_chat_model(LLMConfig(base_url="http://127.0.0.1:1/v1", model="m")) is not None


def test_backoff_grows_with_jitter_and_respects_retry_after() -> None:
    rng = random.Random(7)
    delays = [backoff_delay(n, 1.0, rng=rng) for n in range(4)]
    for n, delay in enumerate(delays):
        assert 0.5 * 2**n <= delay <= 2**n
    assert backoff_delay(0, 0.01, retry_after=3.0) >= 3.0
    assert backoff_delay(0, 0.01, retry_after=10_000) <= 30.0


def test_token_estimate_is_pessimistic_for_code() -> None:
    assert estimate_tokens("x" * 300) == 100
    assert estimate_tokens("") == 0


def test_template_syntax_in_prompts_is_sent_verbatim(fake_llm: FakeLLM) -> None:
    # Instructor renders messages as Jinja when given a context; quoted source code must survive untouched.
    fake_llm.enqueue(Reply.ok({"summary": "Renders `Flask`."}), Reply.ok({"summary": "Uses `Nope`."}),
                     Reply.ok({"summary": "Uses `Flask`."}))
    chat = model_for(fake_llm)
    code = "{{ user.name }} {% if x %}{!r}{% endif %} {#"
    draft = chat.complete(Draft, [{"role": "user", "content": code}], context={"known": ["Flask"]})
    assert isinstance(draft, Draft)
    assert fake_llm.requests[0]["messages"][0]["content"] == code
    assert fake_llm.requests[0]["tools"][0]["function"]["name"] == "Draft"
    # the context still reaches the validators: an unknown name is re-asked
    assert chat.complete(Draft, ASK, context={"known": ["Flask"]}).summary == "Uses `Flask`."


def test_reask_reason_goes_in_a_user_message_with_tool_history(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.ok({"summary": "Calls `make_magic`."}), Reply.ok({"summary": "Uses `Flask`."}))
    chat = model_for(fake_llm)
    assert chat.complete(Draft, ASK, context={"known": ["Flask"]}).summary == "Uses `Flask`."
    messages = fake_llm.requests[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"summary": "Calls `make_magic`."}'
    assert "make_magic" in messages[-1]["content"]  # the reason, where llama.cpp's chatml still shows it
    assert "not in the file" in messages[-1]["content"]
    assert messages[2]["tool_call_id"] == messages[1]["tool_calls"][0]["id"]


def test_reask_without_tool_history_for_servers_that_reject_it(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.ok({"summary": "Calls `make_magic`."}), Reply.ok({"summary": "Uses `Flask`."}))
    chat = model_for(fake_llm, tool_history=False)
    chat.complete(Draft, ASK, context={"known": ["Flask"]})
    messages = fake_llm.requests[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert "make_magic" in messages[1]["content"]  # the rejected reply, as plain text
    assert "not in the file" in messages[-1]["content"]


def test_system_prompt_moves_into_the_first_user_message_when_configured(fake_llm: FakeLLM) -> None:
    asked = [{"role": "system", "content": "Answer in one line."}, *ASK]
    fake_llm.enqueue(Reply.ok({"summary": "ok"}), Reply.ok({"summary": "ok"}))
    model_for(fake_llm).complete(Draft, asked)
    model_for(fake_llm, system_in_user=True).complete(Draft, asked)
    plain, folded = (body["messages"] for body in fake_llm.requests)
    assert [m["role"] for m in plain] == ["system", "user"]
    assert [m["role"] for m in folded] == ["user"]
    assert folded[0]["content"] == "Answer in one line.\n\nSummarise app.py"


def test_reasks_render_through_llama_cpp_chat_formats() -> None:
    """Dev-only check: what llama.cpp's own chatml/gemma formatters keep of a re-ask (needs llama_cpp)."""
    chat_format = pytest.importorskip("llama_cpp.llama_chat_format")
    from types import SimpleNamespace

    from sourcebook.provider import reask_messages, system_to_user

    call = SimpleNamespace(id="call_1", function=SimpleNamespace(name="Draft", arguments='{"summary": "x"}'))
    completion = SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=None,
                                                                                  tool_calls=[call]))])
    reask = reask_messages(completion, "- summary: names 'make_magic', which is not in the file")
    messages = [{"role": "system", "content": "SYSTEM RULES"}, *ASK, *reask]
    chatml = chat_format.format_chatml(messages=messages).prompt
    assert "make_magic" in chatml  # the reason survives although the tool message is dropped
    gemma = chat_format.format_gemma(messages=messages).prompt
    assert "SYSTEM RULES" not in gemma  # gemma drops system messages ...
    gemma = chat_format.format_gemma(messages=system_to_user(messages)).prompt
    assert "SYSTEM RULES" in gemma  # ... so SOURCEBOOK_LLM_SYSTEM_IN_USER moves them into the user message
    assert "make_magic" in gemma


def test_server_rejecting_tool_history_gets_reasks_without_it(fake_llm: FakeLLM) -> None:
    # llama-cpp-python's server answers HTTP 500 to an assistant tool-call message in the history
    def strict(body: dict) -> Reply:
        if any(m.get("tool_calls") or m.get("role") == "tool" for m in body["messages"]):
            return Reply.status(500)
        if len(body["messages"]) == 1:
            return Reply.ok({"summary": "Calls `make_magic`."})
        return Reply.ok({"summary": "Uses `Flask`."})
    fake_llm.responder = strict
    chat = model_for(fake_llm, max_retries=0)
    assert chat.complete(Draft, ASK, context={"known": ["Flask"]}).summary == "Uses `Flask`."
    assert [m["role"] for m in fake_llm.requests[-1]["messages"]] == ["user", "assistant", "user"]
    assert "not in the file" in fake_llm.requests[-1]["messages"][-1]["content"]
    fake_llm.reset()
    chat.complete(Draft, ASK, context={"known": ["Flask"]})  # later calls skip the rejected form at once
    assert fake_llm.calls == 2
    assert chat.ledger.totals().failed == 0


def test_reasks_keep_only_the_latest_rejection_and_never_overflow_the_window(fake_llm: FakeLLM) -> None:
    long = Reply.ok({"summary": "Calls `make_magic` " + "and more " * 300 + "."})
    fake_llm.enqueue(long, long, long)
    chat = model_for(fake_llm, max_reasks=2, context_tokens=2000, max_output_tokens=256, tool_history=False)
    with pytest.raises(ProviderOutputError, match="after 3 attempts"):
        chat.complete(Draft, ASK, context={"known": ["Flask"]})
    for body in fake_llm.requests:
        assert [m["role"] for m in body["messages"]].count("assistant") <= 1  # one rejected reply at most

    fake_llm.reset()
    longer = Reply.ok({"summary": "Calls `make_magic` " + "and more " * 600 + "."})
    fake_llm.enqueue(longer)
    # the re-ask would overflow the window: the model failed (an output error), not the provider
    with pytest.raises(ProviderOutputError, match="does not fit the context"):
        chat.complete(Draft, ASK, context={"known": ["Flask"]})
    assert fake_llm.calls == 1


def test_temperature_and_seed_are_sent_so_runs_repeat(fake_llm: FakeLLM) -> None:
    """The same page got 1 or 2 sections on two runs against llama.cpp (its default temperature is 0.8):
    every call now carries temperature and seed; a negative setting is not sent (the server's default)."""
    fake_llm.enqueue(Reply.ok({"summary": "one"}), Reply.ok({"summary": "two"}))
    model_for(fake_llm).complete(Draft, ASK)
    assert (fake_llm.requests[0]["temperature"], fake_llm.requests[0]["seed"]) == (0.0, 0)
    model_for(fake_llm, temperature=0.7, seed=-1).complete(Draft, ASK)
    assert fake_llm.requests[1]["temperature"] == 0.7
    assert "seed" not in fake_llm.requests[1]


def test_a_server_refusing_temperature_gets_calls_without_it(fake_llm: FakeLLM) -> None:
    """Some hosted reasoning models accept only their default temperature (HTTP 400 naming it)."""
    fake_llm.enqueue(Reply.status(400, error="Unsupported value: 'temperature' does not support 0.0"),
                     Reply.ok({"summary": "first"}), Reply.ok({"summary": "second"}))
    chat = model_for(fake_llm)
    assert chat.complete(Draft, ASK).summary == "first"
    assert chat.complete(Draft, ASK).summary == "second"
    assert ["temperature" in b for b in fake_llm.requests] == [True, False, False]
    assert all(b["seed"] == 0 for b in fake_llm.requests)  # only what the server named is dropped
    fake_llm.enqueue(Reply.status(400, error="bad request"))
    with pytest.raises(ProviderError, match="rejected"):  # any other 400 is still final
        chat.complete(Draft, ASK)


def test_a_chatml_server_that_drops_tool_messages_still_sees_why_a_reply_was_rejected(
        fake_llm: FakeLLM) -> None:
    """The issue's failure, reproduced: llama.cpp's chatml format drops `role: "tool"` messages, so a re-ask
    whose reason travels only there is a blind re-sample. This fake server renders the conversation the way
    chatml does (tool messages gone) and answers correctly only when the reason is in what it kept."""
    def chatml(body: dict) -> Reply:
        kept = [m for m in body["messages"] if m.get("role") != "tool"]
        seen = "\n".join(str(m.get("content") or "") for m in kept)
        if "make_magic" in seen and "not in the file" in seen:
            return Reply.ok({"summary": "Uses `Flask`."})  # the model read why, and fixed it
        return Reply.ok({"summary": "Calls `make_magic`."})  # the same mistake, again
    fake_llm.responder = chatml
    chat = model_for(fake_llm, max_reasks=1)
    assert chat.complete(Draft, ASK, context={"known": ["Flask"]}).summary == "Uses `Flask`."
    assert fake_llm.calls == 2  # one re-ask was enough


def _draft_models() -> list[type[BaseModel]]:
    """Every response model the writers ask a provider for: the classes of generator.pages.llm.drafts."""
    import inspect

    from generator.pages.llm import drafts as llm_drafts

    return [c for _, c in inspect.getmembers(llm_drafts, inspect.isclass)
            if issubclass(c, BaseModel) and c.__module__ == llm_drafts.__name__]


def test_a_reply_is_the_declared_class_and_crosses_a_process_boundary(fake_llm: FakeLLM) -> None:
    """Instructor (and the provider's context binding) build a subclass named like the response model;
    pickling one fails ("it's not the same object as ..."), and the files stage hands drafts to forked
    workers. The provider returns the declared class itself, private state included."""
    import pickle

    from generator.pages.llm.drafts import Known, LLMFileDraft

    summary = "Defines `App`, which serves requests for the whole package and keeps its settings."
    fake_llm.enqueue(Reply.ok({"summary": summary, "purpose": "A short one.",
                               "key_symbols": [{"qualname": "Nope", "explanation": "Invented here."}]}))
    known = Known.build(symbols=["App"], top=["App"], paths=["pkg/app.py"], subject="pkg/app.py")
    draft = model_for(fake_llm).complete(LLMFileDraft, ASK, context={"known": known}, label="file:pkg/app.py")
    assert type(draft) is LLMFileDraft
    assert draft.dropped  # the invented symbol was dropped: private state the pickle must keep
    again = pickle.loads(pickle.dumps(draft))
    assert type(again) is LLMFileDraft
    assert again.model_dump() == draft.model_dump()
    assert (again.dropped, again.offered) == (draft.dropped, draft.offered)


def test_every_draft_model_survives_the_boundary_conversion() -> None:
    import pickle

    from sourcebook.provider import _context_bound, as_declared

    models = _draft_models()
    assert len(models) >= 5
    for model in models:
        rebuilt = _context_bound(model)
        assert rebuilt is not model
        assert rebuilt.__qualname__ == model.__qualname__
        values = {name: ("x" if field.annotation is str else []) if field.is_required()
                  else field.get_default(call_default_factory=True)
                  for name, field in model.model_fields.items()}
        plain = as_declared(model, rebuilt.model_construct(**values))
        assert type(plain) is model, model
        assert pickle.loads(pickle.dumps(plain)).model_dump() == plain.model_dump(), model
