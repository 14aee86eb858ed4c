"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests and benchmarks.

Real sockets, real HTTP: the provider under test talks to it exactly as it would talk to a hosted model.
Replies are queued with `enqueue()` (or produced by `responder` once the queue is empty); every request body
is recorded in `requests` so a test can prove what did and did not leave the machine. It also serves
`/v1/embeddings` (deterministic vectors from a hash of each input; bodies recorded in `embedding_requests`),
so one fake stands for both providers; `all_text()` covers chat and embedding requests alike.

    from tests.support.fake_llm import FakeLLM, Reply

    def test_x(fake_llm):                      # fixture in tests/conftest.py
        fake_llm.enqueue(Reply.status(429), Reply.ok({"summary": "..."}))
        ...  # point the provider at fake_llm.base_url
        assert len(fake_llm.requests) == 2

A `Reply.ok(obj)` adapts to the request: a tool call when the request carries `tools` (instructor's TOOLS
mode), JSON text otherwise (JSON mode), fenced JSON when `fenced=True` (MD_JSON).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build with the class methods, not the constructor."""

    status_code: int = 200
    payload: Any = None  # object to serialise as the structured answer
    raw_text: str | None = None  # exact answer text (for malformed JSON); overrides payload
    finish_reason: str = "stop"
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    fenced: bool = False
    error: str = ""  # the error message of a non-200 reply

    @classmethod
    def ok(cls, payload: Any, *, fenced: bool = False, delay_s: float = 0.0) -> Reply:
        return cls(payload=payload, fenced=fenced, delay_s=delay_s)

    @classmethod
    def malformed(cls, text: str = '{"summary": "unterminated') -> Reply:
        return cls(raw_text=text)

    @classmethod
    def status(cls, code: int, *, retry_after: float | None = None, error: str = "") -> Reply:
        headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
        return cls(status_code=code, headers=headers, error=error)

    @classmethod
    def slow(cls, delay_s: float, payload: Any = None) -> Reply:
        """Answer only after `delay_s` (past the client's timeout, the client gives up first)."""
        return cls(payload=payload if payload is not None else {}, delay_s=delay_s)

    @classmethod
    def cut(cls, text: str = '{"summary": "The file def') -> Reply:
        """A reply stopped by max_tokens: finish_reason=length and a truncated body."""
        return cls(raw_text=text, finish_reason="length")


Responder = Callable[[dict[str, Any]], Reply]


class FakeLLM:
    """The server plus its script. Thread-safe; start()/stop() or use as a context manager."""

    def __init__(self, responder: Responder | None = None, model: str = "fake-model",
                 embedding_dim: int = 16) -> None:
        self.model = model
        self.responder = responder
        self.embedding_dim = embedding_dim
        self.requests: list[dict[str, Any]] = []
        self.embedding_requests: list[dict[str, Any]] = []
        self.auth_headers: list[str] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- script -------------------------------------------------------------------------------------------
    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    def all_text(self) -> str:
        """Every chat and embedding request body, concatenated: what left the machine."""
        with self._lock:
            return "\n".join(json.dumps(body) for body in [*self.requests, *self.embedding_requests])

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.embedding_requests.clear()
            self.auth_headers.clear()
            self._queue.clear()

    # -- server -------------------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeLLM:
        return self.start_on(0)

    def start_on(self, port: int) -> FakeLLM:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/").endswith("/embeddings"):
                    reply, status, data = Reply(), 200, fake._embeddings(body)
                else:
                    reply = fake._next(body, self.headers.get("authorization", ""))
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                    status, data = fake._render(reply, body)
                raw = json.dumps(data).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(raw)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client timed out and left; that is the point of a slow reply

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals ----------------------------------------------------------------------------------------
    def _next(self, body: dict[str, Any], auth: str) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.auth_headers.append(auth)
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(body)
        return Reply.status(500)  # an unscripted call is a test bug: fail loudly, like an outage

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        """An OpenAI-shaped embeddings reply: one vector per input, derived from the input's hash."""
        with self._lock:
            self.embedding_requests.append(body)
        inputs = body.get("input") or []
        inputs = [inputs] if isinstance(inputs, str) else inputs
        data = []
        for i, text in enumerate(inputs):
            digest = hashlib.sha256(str(text).encode()).digest()
            data.append({"object": "embedding", "index": i,
                         "embedding": [b / 255.0 - 0.5 for b in digest[:self.embedding_dim]]})
        return {"object": "list", "model": body.get("model", self.model), "data": data,
                "usage": {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}}

    def _render(self, reply: Reply, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if reply.status_code != 200:
            message = reply.error or f"scripted HTTP {reply.status_code}"
            return reply.status_code, {"error": {"message": message, "type": "server_error",
                                                 "code": reply.status_code}}
        text = reply.raw_text if reply.raw_text is not None else json.dumps(reply.payload)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        tools = body.get("tools") or []
        if tools:
            name = tools[0].get("function", {}).get("name", "tool")
            message["tool_calls"] = [{"id": f"call_{len(self.requests)}", "type": "function",
                                      "function": {"name": name, "arguments": text}}]
            finish = "tool_calls" if reply.finish_reason == "stop" else reply.finish_reason
        else:
            message["content"] = f"```json\n{text}\n```" if reply.fenced else text
            finish = reply.finish_reason
        prompt_chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
        usage = {"prompt_tokens": max(1, prompt_chars // 4), "completion_tokens": max(1, len(text) // 4)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": usage,
        }


def request_schema_name(body: dict[str, Any]) -> str:
    """The response model a request asks for (tool name in TOOLS mode, else from the system prompt)."""
    tools = body.get("tools") or []
    if tools:
        return str(tools[0].get("function", {}).get("name", ""))
    return ""


def request_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body.get("messages", []))


_SYMBOL_LINE = re.compile(r"^- (\S+) \((?:\w+), lines \d+-\d+\)", re.M)
_CHILD_LINE = re.compile(r"^- (?:submodule )?([^\s:]+?)/?: ", re.M)


def page_writer_responder(body: dict[str, Any]) -> Reply:
    """A valid reply to any prompt of generator.pages.llm.writer, built from the prompt itself (TOOLS mode).

    It names only symbols and paths the prompt lists, so it passes the writer's validators: what a
    well-behaved model would do, minus the prose quality. Used by build tests and bench/llm_build_bench.py.
    """
    name = request_schema_name(body)
    text = request_text(body)
    subject = re.search(r'^File: (\S+)|module \(directory\) "([^"]*)"|repository "([^"]*)"', text, re.M)
    what = next((g for g in subject.groups() if g), "this code") if subject else "this code"
    summary = f"Scripted summary {len(text) % 997}: this part of {what} does its job."
    if name == "PartNotes":
        return Reply.ok({"summary": summary})
    if name == "LLMFileDraft":
        symbols = _SYMBOL_LINE.findall(text)
        undocumented = re.search(r"undocumented symbols: (.+)\.$", text, re.M)
        docstrings = [{"qualname": q.strip(), "explanation": f"Scripted docstring for {q.strip()}."}
                      for q in (undocumented.group(1).split(", ") if undocumented else [])]
        return Reply.ok({"summary": summary, "purpose": "It exists to be documented by a test.",
                         "how_it_works": "Its pieces call each other in a scripted order.",
                         "key_symbols": [{"qualname": q, "explanation": "An important symbol."}
                                         for q in symbols[:2]],
                         "docstrings": docstrings})
    if name in {"LLMModuleDraft", "LLMOverviewDraft"}:
        field = "key_items" if name == "LLMModuleDraft" else "key_modules"
        children = [c for c in _CHILD_LINE.findall(text) if not c.startswith(("(", "key_"))]
        prose = ({"purpose": "It groups scripted files for a test.",
                  "structure": "Its files call each other in a scripted order."} if name == "LLMModuleDraft"
                 else {"architecture": "Scripted modules pass scripted data along."})
        return Reply.ok({"summary": summary, **prose,
                         field: [{"path": c, "explanation": "An important part."} for c in children[:2]]})
    if name == "LLMTopicDraft":  # generator/pages/llm/topics.py: sections citing the evidence as listed
        cites = re.findall(r"^- \[(\S+:\d+-\d+)\]", text, re.M)
        return Reply.ok({"summary": summary, "sections": [
            {"heading": f"Scripted step {n}", "body": f"Scripted step {n} of {what} hands its data on.",
             "sources": cites[n - 1:n + 1]} for n in (1, 2) if cites[n - 1:n + 1]]})
    if name == "SymbolExplanation":  # one symbol asked alone, with its code
        symbol = re.search(r"^You are describing the \w+ `([^`]+)`", text, re.M)
        return Reply.ok({"explanation": f"Scripted explanation of {symbol.group(1) if symbol else what} "
                                        "and what it is for."})
    if name.endswith("Only"):  # one section asked alone (section_model: its one field is `explanation`)
        section = re.sub(r"(?<!^)([A-Z])", r"_\1", name.removesuffix("Only")).lower()
        return Reply.ok({"explanation": f"Scripted {section.replace('_', ' ')} of {what}, said plainly."})
    return Reply.ok({"summary": summary})


def main() -> None:
    """Serve the scripted page writer on 127.0.0.1:PORT (for manual runs:
    `python -m tests.support.fake_llm 8765`)."""
    import sys

    server = FakeLLM(responder=page_writer_responder).start_on(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
