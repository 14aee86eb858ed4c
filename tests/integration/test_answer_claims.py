"""Confidence an agent can trust: answers graded by their claims against the code (sourcebook/claims.py),
through `ask` on the CLI and over HTTP, with scripted answers from the fake OpenAI-compatible server on
127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.pages.writer import apply_docstrings
from sourcebook.claims import CodeFacts, check_claims, copied_share, is_truncated
from sourcebook.config import load_config
from tests.support.fake_llm import FakeLLM, Reply, request_text

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


def test_generated_docstring_is_labelled_wherever_it_appears_after_the_code_and_never_supports(
        fresh: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """Provenance (issue 27): the wiki model's docstring for `prompt` reaches the synthesis prompt only on a
    labelled line after the code, `retrieval` marks it `docstring_source: "llm"`, `symbol_bodies` keeps it
    apart from the live body, and an answer that copies it is never high."""
    from answer.answering.evidence import GENERATED_DOC_LABEL

    fake_llm.enqueue(_reply(FALSE["copied generated docstring"][1]))
    data = _cli_ask(fresh, PROMPT_Q, fake_llm, monkeypatch)
    sent = request_text(fake_llm.requests[0])
    code_at = sent.index("def prompt(text, hide_input=False, default=None)")
    lines = [line for line in sent.split("\n") if GENERATED[:40] in line]
    assert lines  # shown, for orientation...
    assert all(line.startswith(GENERATED_DOC_LABEL) for line in lines)  # ...only ever labelled
    assert sent.index(GENERATED[:40]) > code_at  # ranked after the code
    assert "LLM-written docstring" in sent.split("Question:")[0]  # the system prompt says which is which
    labelled = [sym for hit in data.get("retrieval") or [] for sym in hit.get("symbols") or []
                if GENERATED[:40] in (sym.get("docstring") or "")]
    assert labelled
    assert all(sym["docstring_source"] == "llm" for sym in labelled)
    bodies = {body["qualname"]: body for body in data.get("symbol_bodies") or []}
    assert all(GENERATED[:40] not in body["body"] for body in bodies.values())
    assert bodies["prompt"]["generated_docstring"].startswith(GENERATED[:40])
    assert data["confidence"] != "high"
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

    from answer.serving.http_api import create_app
    from answer.serving.tools import Tools
    from answer.serving.workspace import load_workspace

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



# ---------------------------------------------------------------- other languages

POLYGLOT = {
    "net/dial.go": ("package net\n\n// Dial connects to the address.\nfunc Dial(network string, addr string, "
                    "timeout int) (*Conn, error) {\n\tif addr == \"\" {\n\t\treturn nil, ErrNoAddr\n\t}\n"
                    "\treturn open(network, addr, timeout)\n}\n"),
    "web/request.ts": ("/** Sends a request. */\nexport function sendRequest(url: string, "
                       "retries: number = 3, verbose?: boolean): Promise<Response> {\n"
                       "  return fetch(url);\n}\n"),
    "core/Calc.java": ("package core;\n\npublic class Calc {\n    /** Adds two numbers. */\n"
                       "    public static int addNumbers(int left, int right) {\n"
                       "        return left + right;\n    }\n}\n"),
}
POLY_Q = {"go": "What are the parameters of Dial?", "ts": "What does sendRequest take?",
          "java": "What are the parameters of addNumbers?"}


@pytest.fixture(scope="module")
def polyglot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from generator.index.command import index_repository

    root = tmp_path_factory.mktemp("poly") / "repo"
    for rel, text in POLYGLOT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    index_repository(load_config(root, overrides={"out_dir": str(root / ".sourcebook"),
                                                  "embed": {"provider": "none"}}, env={}))
    return root


@pytest.mark.parametrize(("lang", "answer", "cited", "expect"), [
    ("go", "`Dial` takes `network`, `addr` and a `timeout` parameter, and returns what `open` returns.",
     "net/dial.go", "holds"),
    ("go", "The `timeout` parameter of `Dial` defaults to `30`, so callers may leave it out.",
     "net/dial.go", "low"),  # Go has no defaults: contradicted
    ("go", "`Dial` takes a `deadline` parameter after the address and returns the connection.",
     "net/dial.go", "low"),
    ("ts", "`sendRequest` takes `url`; the `retries` parameter defaults to `3`, and `verbose` is optional.",
     "web/request.ts", "holds"),
    ("ts", "`sendRequest` takes `url`; the `retries` parameter defaults to `5` when it is not given.",
     "web/request.ts", "low"),
    # Java signatures are not read here: a parameter claim can be neither confirmed nor refuted
    ("java", "`addNumbers` takes a `left` parameter and a `right` parameter and returns their sum.",
     "core/Calc.java", "medium"),
])
def test_parameter_claims_in_other_languages_through_ask(polyglot: Path, fake_llm: FakeLLM,
                                                         monkeypatch: pytest.MonkeyPatch, lang: str,
                                                         answer: str, cited: str, expect: str) -> None:
    """"holds": no claim is faulted (the grade is retrieval's); "low": a claim the signature contradicts;
    "medium": a parameter claim about a signature the checker cannot read is capped below high."""
    fake_llm.enqueue(Reply.ok({"answer": answer, "citations": [cited]}))
    data = _cli_ask(polyglot, POLY_Q[lang], fake_llm, monkeypatch)
    note = data.get("note") or ""
    if expect == "holds":
        assert "contradicts" not in note
        assert "bear out" not in note
        assert data["confidence"] != "low", note
    elif expect == "low":
        assert data["confidence"] == "low", note
        assert "the code contradicts the answer" in note
    else:
        assert data["confidence"] != "high"
        assert "cannot be read from its signature" in note


def test_signatures_of_each_language_parse_to_parameters() -> None:
    from sourcebook.claims import signature_params

    assert signature_params("func (c *Client) Do(req *Request, opts ...Option) (*Response, error)") == {
        "req": None, "opts": None}
    assert signature_params("func Max[T any](a, b T) T") == {"a": None, "b": None}
    assert signature_params("pub fn get(&self, key: &str, map: HashMap<String, u8>) -> Option<&V>") == {
        "key": None, "map": None}
    assert signature_params("function send(body, retries = 2, { timeout } = {})") == {
        "body": None, "retries": "2"}
    assert signature_params("def f(a, *, b=2, **kw)") == {"a": None, "b": "2", "kw": None}
    assert signature_params("def g()") == {}
    assert signature_params("public static int add(int a, int b)") is None  # not read: not judged
    assert signature_params("func f(int, string)") is None
