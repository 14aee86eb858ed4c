"""Confidence an agent can trust: answers graded by their claims against the code (answer/claims.py), through
`ask` on the CLI and over HTTP, with scripted answers from the fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from answer.claims import CodeFacts, check_claims, copied_share, is_truncated
from generator.pages.writer import apply_docstrings
from sourcebook.config import load_config
from tests.fake_llm import FakeLLM, Reply, request_text

TERM = '''"""Terminal helpers for commands."""
import sys

_stack = []


def get_current_context(silent=False):
    try:
        return _stack[-1]
    except IndexError:
        if not silent:
            raise RuntimeError("no active context")
    return None


def echo(message=None, err=False):
    stream = sys.stderr
    stream.write(str(message) + "\\n")


def prompt(text, hide_input=False, default=None):
    value = input(text)
    return value or default
'''
FILES = {"pkg/__init__.py": "", "pkg/term.py": TERM, "README.md": "# Term\n\nTerminal helpers.\n"}
# what the wiki's writer wrote for `prompt`: true, but model prose, not the code
GENERATED = ("Reads one line from the user with input and hands back the typed value, or the default "
             "value when the user typed nothing at all.")

RETURN_Q = "What does get_current_context return?"
ECHO_Q = "Where does echo write its message?"
PROMPT_Q = "What does prompt return?"
TRUE_RETURN = ("`get_current_context` returns the last entry of `_stack`; when no context is active it "
               "raises `RuntimeError` unless `silent` is true, and then returns None (`pkg/term.py`).")
# (question, answer): each false in one of the ways an agent would act on
FALSE = {
    "omits the raise": (RETURN_Q, "`get_current_context` returns either the active context or None, "
                                  "depending on whether a context is active (`pkg/term.py`)."),
    "wrong default": (RETURN_Q, "`get_current_context` returns the last entry of `_stack` and raises "
                                "`RuntimeError` when none is active; the `silent` parameter defaults to "
                                "`True` (`pkg/term.py`)."),
    "wrong stream": (ECHO_Q, "`echo` writes the message to the standard output (`pkg/term.py`)."),
    "truncated": (PROMPT_Q, "`prompt` calls `input` with the text, can hide the input field, and provide"),
    "another symbol": (RETURN_Q, "`prompt` takes `text`, `hide_input` and `default` and returns what the "
                                 "user typed (`pkg/term.py`)."),
    "copied generated docstring": (PROMPT_Q,
                                   f"`prompt` {GENERATED[0].lower()}{GENERATED[1:]} (`pkg/term.py`)"),
}


def _reply(answer: str) -> Reply:
    return Reply.ok({"answer": answer, "citations": ["pkg/term.py"]})


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository indexed as an LLM build leaves it: `prompt` carries a generated docstring."""
    from generator.analyze.parse import extract
    from generator.analyze.scan import read_source, scan
    from generator.index.writer import update_index

    root = tmp_path_factory.mktemp("claims") / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    config = load_config(root, overrides={"out_dir": str(root / ".sourcebook")}, env={})
    result = scan(config)
    facts = {f.path: extract(f, read_source(config.root, f.path)) for f in result.files}
    facts["pkg/term.py"] = apply_docstrings(facts["pkg/term.py"], {"prompt": GENERATED})
    update_index(config, result.files, facts, None, None)
    return root


def _env(server: FakeLLM) -> dict[str, str]:
    return {"SOURCEBOOK_LLM_BASE_URL": server.base_url, "SOURCEBOOK_LLM_MODEL": "fake-model",
            "SOURCEBOOK_LLM_API_KEY": "k", "SOURCEBOOK_LLM_MAX_RETRIES": "0",
            "SOURCEBOOK_LLM_MAX_REASKS": "0"}


def _cli_ask(root: Path, question: str, server: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from click.testing import CliRunner

    from sourcebook.cli import cli

    for name, value in _env(server).items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(cli, ["ask", question, "--path", str(root), "--json", "--no-cache"]
                                if _has_no_cache() else ["ask", question, "--path", str(root), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _has_no_cache() -> bool:
    from sourcebook.cli import cli

    ask = cli.commands["ask"]  # type: ignore[attr-defined]
    return any("--no-cache" in p.opts for p in ask.params)


@pytest.fixture
def fresh(repo: Path, tmp_path: Path) -> Path:
    """The indexed repository with an empty answer cache (each test's answers are its own)."""
    import shutil

    cache = repo / ".sourcebook"
    for item in cache.rglob("*cache*"):
        if item.is_dir() and "answer" in item.name:
            shutil.rmtree(item)
        elif item.is_file() and "answer" in item.name:
            item.unlink()
    return repo


def test_supported_answer_is_high_through_the_cli(fresh: Path, fake_llm: FakeLLM,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fake_llm.enqueue(_reply(TRUE_RETURN))
    data = _cli_ask(fresh, RETURN_Q, fake_llm, monkeypatch)
    assert data["confidence"] == "high", data.get("note")
    assert data["citations"] == ["pkg/term.py"]


@pytest.mark.parametrize("kind", sorted(FALSE))
def test_false_answers_are_never_high_through_the_cli(kind: str, fresh: Path, fake_llm: FakeLLM,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    question, answer = FALSE[kind]
    # a cut reply is asked for once more: the same cut reply again
    fake_llm.enqueue(_reply(answer), _reply(answer))
    data = _cli_ask(fresh, question, fake_llm, monkeypatch)
    assert data["confidence"] != "high", (kind, data.get("note"))
    assert data.get("note")
    assert "Confidence lowered" in data["note"]
    if kind in {"wrong default", "wrong stream", "another symbol"}:
        assert data["confidence"] == "low", (kind, data["note"])
    if kind == "truncated":
        assert fake_llm.calls == 2  # re-asked once
        assert "stops mid-sentence" in data["note"]


def test_generated_docstring_never_reaches_the_model_and_is_labelled_nowhere_as_code(
        fresh: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_llm.enqueue(_reply(FALSE["copied generated docstring"][1]))
    data = _cli_ask(fresh, PROMPT_Q, fake_llm, monkeypatch)
    sent = request_text(fake_llm.requests[0])
    assert "def prompt(text, hide_input=False, default=None)" in sent
    assert GENERATED[:40] not in sent
    assert "LLM-written" in sent  # the prompt tells the model which text is which
    for hit in data.get("retrieval") or []:
        for sym in hit.get("symbols") or []:
            assert GENERATED[:40] not in (sym.get("docstring") or "")
    assert "LLM-written prose" in data["note"]


def test_cut_reply_fixed_by_the_reask_is_graded_on_the_complete_one(fresh: Path, fake_llm: FakeLLM,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cut = "`get_current_context` returns the last entry of `_stack` and"
    fake_llm.enqueue(_reply(cut), _reply(TRUE_RETURN))
    data = _cli_ask(fresh, RETURN_Q, fake_llm, monkeypatch)
    assert fake_llm.calls == 2
    assert "stopped mid-sentence" in request_text(fake_llm.requests[1])
    assert data["answer"] == TRUE_RETURN
    assert data["confidence"] == "high", data.get("note")


def test_http_ask_grades_claims(fresh: Path, fake_llm: FakeLLM) -> None:
    from fastapi.testclient import TestClient

    from answer.http_api import create_app
    from answer.tools import Tools
    from answer.workspace import load_workspace

    client = TestClient(create_app(Tools(load_workspace(fresh, env=_env(fake_llm)))))
    fake_llm.enqueue(_reply(TRUE_RETURN))
    good = client.post("/ask", json={"question": RETURN_Q}).json()
    assert good["confidence"] == "high", good.get("note")
    fake_llm.enqueue(_reply(FALSE["wrong stream"][1]))
    bad = client.post("/ask", json={"question": ECHO_Q}).json()
    assert bad["confidence"] == "low"
    assert "writes to stderr" in bad["note"]


# ---------------------------------------------------------------- pure checks

ECHO = CodeFacts("echo", "echo", "def echo(message=None, err=False)",
                 "def echo(message=None, err=False):\n    stream = _default_text_stderr()\n"
                 "    stream.write(message)\n")


def test_each_claim_shape_is_checked_against_the_code() -> None:
    assert check_claims("`echo` prints to standard error.", [ECHO], ["echo"]) == []
    [wrong] = check_claims("`echo` writes to stdout.", [ECHO], ["echo"])
    assert wrong.verdict == "contradicted"
    [called] = check_claims("`echo` calls `flush_all` first.", [ECHO], ["echo"])
    assert called.verdict == "unsupported"
    [literal] = check_claims("`echo` writes `\"utf-8\"` bytes.", [ECHO], ["echo"],
                             code_text="def echo(): ...")
    assert "utf-8" in literal.why
    [raises] = check_claims("`echo` raises `ValueError` on bad input.", [ECHO], ["echo"])
    assert raises.verdict == "unsupported"
    assert check_claims("The `err` parameter defaults to `False`.", [ECHO], ["echo"]) == []
    [default] = check_claims("The `err` parameter defaults to `True`.", [ECHO], ["echo"])
    assert "defaults to False" in default.why


def test_truncation_and_copies() -> None:
    assert is_truncated("It can hide the input field, and provide")
    assert is_truncated("It returns the value and")
    assert not is_truncated("It returns the value.")
    assert not is_truncated("Steps:\n- `open` reads the file\n- `close` frees it")
    assert copied_share("`prompt` " + GENERATED, [GENERATED]) > 0.8
    assert copied_share("`prompt` returns what `input` read, else `default`.", [GENERATED]) == 0.0

