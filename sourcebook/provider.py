"""Chat models that return validated pydantic objects: one protocol, one OpenAI-compatible implementation.

Instructor turns a pydantic model into a tool schema (or JSON instructions), validates the reply and re-asks
with the validation error. It does not retry transport failures, so this module does: 429, 5xx, timeouts and
refused connections are retried with exponential backoff and jitter, honouring `Retry-After`; other 4xx
fail at once. A reply cut by max_tokens is asked once more, shorter, with whatever reply budget the context
window still allows. Whatever still fails becomes a `ProviderError` (transport) or `ProviderOutputError`
(the model never produced valid output), so callers handle exactly two outcomes: an object or one error.

Token counting is by characters (no tokenizer download offline): CHARS_PER_TOKEN = 3 is deliberately
pessimistic for code (English prose is ~4 chars/token, dense code ~3), so a prompt budgeted here fits the
model's real window. Every call is recorded in the run's `Ledger`.

Nothing reaches a model unredacted: `complete` passes every message through `outbound_messages`
(sourcebook/redaction.py) before the prompt is budgeted or sent, whoever built it (pages, docstrings, `ask`).
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel

from sourcebook.errors import ProviderError, ProviderOutputError
from sourcebook.ledger import Ledger, LedgerEntry
from sourcebook.redaction import redact_text
from sourcebook.retry import backoff_delay, retry_after, retryable

if TYPE_CHECKING:
    from sourcebook.config import LLMConfig

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
Message = Mapping[str, Any]  # {"role": "system"|"user"|"assistant", "content": "..."}

CHARS_PER_TOKEN = 3.0
MESSAGE_OVERHEAD_TOKENS = 8  # role markers and separators per message
MIN_REPLY_TOKENS = 128  # below this a structured reply cannot be complete: refuse instead of sending


def outbound_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """The messages as they may leave the machine: every content through `secrets.redact_text`.

    The one place chat text is redacted: page prompts, docstring prompts and `ask` synthesis all reach the
    model through `ChatModel.complete`, which calls this before anything is budgeted or sent.
    """
    return [{**m, "content": redact_text(str(m.get("content") or ""))} for m in messages]


def estimate_tokens(text: str) -> int:
    """Tokens `text` will take, by the documented chars-per-token rule (rounded up)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_prompt_tokens(messages: Sequence[Message], response_model: type[BaseModel] | None = None) -> int:
    """Tokens of a request: its messages plus the JSON schema Instructor sends for `response_model`."""
    total = sum(estimate_tokens(str(m.get("content") or "") + str(m.get("tool_calls") or ""))
                + MESSAGE_OVERHEAD_TOKENS for m in messages)
    if response_model is not None:
        total += _schema_tokens(response_model)
    return total


@cache
def _schema_tokens(model: type[BaseModel]) -> int:
    # pydantic rebuilds the JSON schema on every call; a model's schema never changes
    return estimate_tokens(json.dumps(model.model_json_schema()))


class ChatModel(Protocol):
    """A chat model that answers with a validated instance of `response_model`."""

    @property
    def id(self) -> str:
        """Model identity for cache keys: a page written by another model is rewritten."""
        ...

    @property
    def context_tokens(self) -> int:
        """The model's context window; prompt + reply budget must fit it."""
        ...

    @property
    def max_output_tokens(self) -> int: ...

    @property
    def ledger(self) -> Ledger: ...

    def complete(
        self,
        response_model: type[M],
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        context: Mapping[str, Any] | None = None,
        label: str = "",
    ) -> M:
        """Ask; return the validated object. `context` reaches the model's validators (`info.context`).

        Raises ProviderError after transport retries, ProviderOutputError when no reply validated.
        """
        ...


@dataclass
class _CallUsage:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, usage: Any) -> None:
        if usage is None:
            return
        self.input_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
        self.output_tokens += int(getattr(usage, "completion_tokens", 0) or 0)


# The validation context of the call running in this thread. Instructor's own `context=` argument is also
# applied as Jinja to every message (it would render `{{ ... }}` found in quoted source code, or fail on it),
# so the context reaches validators through this variable and a same-named subclass of the model instead.
_CALL_CONTEXT: ContextVar[dict[str, Any] | None] = ContextVar("sourcebook_llm_context", default=None)


@cache
def _context_bound(model: type[M]) -> type[M]:
    """`model` under the same name, schema and docstring, validating with the current call's context."""

    def model_validate(cls: type[M], obj: Any, *args: Any, context: Any = None, **kwargs: Any) -> M:
        ctx = context if context is not None else _CALL_CONTEXT.get()
        return super(bound, cls).model_validate(obj, *args, context=ctx, **kwargs)  # type: ignore[misc]

    def model_validate_json(cls: type[M], data: Any, *args: Any, context: Any = None, **kwargs: Any) -> M:
        ctx = context if context is not None else _CALL_CONTEXT.get()
        return super(bound, cls).model_validate_json(  # type: ignore[misc]
            json_without_controls(data), *args, context=ctx, **kwargs)

    namespace = {"__module__": model.__module__, "__qualname__": model.__qualname__, "__doc__": model.__doc__,
                 "model_validate": classmethod(model_validate),
                 "model_validate_json": classmethod(model_validate_json)}
    metaclass: Any = type(model)  # pydantic's ModelMetaclass builds the subclass like a class statement
    bound: type[M] = metaclass(model.__name__, (model,), namespace)
    return bound


def as_declared(model: type[M], result: BaseModel) -> M:
    """`result` (an instance of the class `_context_bound` or Instructor rebuilt from `model`) as an
    instance of `model` itself, its fields and private state kept: the rebuilt class shares `model`'s name,
    so pickling an instance of it (a draft handed to a render worker) fails with "it's not the same object
    as ...".
    Validation already ran on the way in; nothing is validated again."""
    if type(result) is model:
        return result
    if not isinstance(result, model):
        raise TypeError(f"a reply of {type(result).__qualname__} is not a {model.__qualname__}")
    plain = model.model_construct(_fields_set=set(result.model_fields_set),
                                  **{name: getattr(result, name) for name in model.model_fields})
    if result.__pydantic_private__:
        object.__setattr__(plain, "__pydantic_private__", dict(result.__pydantic_private__))
    return plain


_CONTROL = re.compile(r"[\x00-\x1f]")


def json_without_controls(data: Any) -> Any:
    """JSON text with raw control characters turned into spaces.

    Small local models write a line break inside a JSON string as a raw newline, which a strict parser
    rejects ("control character found while parsing a string"): a whole reply lost to a formatting slip.
    Outside strings JSON allows only whitespace there, so a space is always what was meant."""
    if isinstance(data, bytes | bytearray):
        data = bytes(data).decode("utf-8", errors="replace")
    return _CONTROL.sub(" ", data) if isinstance(data, str) else data


def _mode(name: str) -> Any:
    import instructor

    modes = {"tools": instructor.Mode.TOOLS, "json": instructor.Mode.JSON, "md_json": instructor.Mode.MD_JSON}
    return modes[name]


def _transport_cause(exc: BaseException) -> BaseException | None:
    """The openai transport error behind an Instructor exception, if that is what failed."""
    import openai

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, openai.APIConnectionError | openai.APIStatusError):
            return current
        current = current.__cause__ or current.__context__
    return None


def _status(exc: BaseException) -> int | None:
    import openai

    return exc.status_code if isinstance(exc, openai.APIStatusError) else None


def _retry_after(exc: BaseException) -> float | None:
    import openai

    return retry_after(exc.response.headers) if isinstance(exc, openai.APIStatusError) else None


class _DemoteInstructorErrors(logging.Filter):
    """Instructor logs every failed attempt at ERROR; this module reports the outcome itself (a retry
    warning, or one ProviderError), so those records are shown at DEBUG instead of alarming a CI log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


def _quiet_instructor() -> None:
    retry_log = logging.getLogger("instructor.v2.retry")
    if not any(isinstance(f, _DemoteInstructorErrors) for f in retry_log.filters):
        retry_log.addFilter(_DemoteInstructorErrors())


class OpenAIChatModel:
    """Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server) through Instructor."""

    def __init__(self, config: LLMConfig, ledger: Ledger | None = None) -> None:
        import instructor
        import openai

        if not config.model:
            raise ProviderError("llm", "no model configured (SOURCEBOOK_LLM_MODEL)")
        self._config = config
        self._model = config.model
        self._ledger = ledger or Ledger(config.price_in_per_mtok, config.price_out_per_mtok)
        self._slots = threading.BoundedSemaphore(max(1, config.concurrency))
        self._tool_history = config.tool_history  # turned off for the run when the server rejects it
        self._history_lock = threading.Lock()
        # temperature/seed for repeatable runs; a key the server refuses is dropped for the run
        self._sampling: dict[str, Any] = {
            k: v for k, v in (("temperature", config.temperature), ("seed", config.seed)) if v >= 0}
        self._local = threading.local()
        # Local servers ignore the key, but the client insists on one.
        client = openai.OpenAI(base_url=config.base_url, api_key=config.api_key or "not-needed",
                               max_retries=0, timeout=config.timeout_s)
        self._client = instructor.from_openai(client, mode=_mode(config.mode))
        _quiet_instructor()
        self._client.on("completion:kwargs", self._on_request)
        self._client.on("completion:response", self._on_response)

    # -- protocol ----------------------------------------------------------------------------------------
    @property
    def id(self) -> str:
        return self._model

    @property
    def context_tokens(self) -> int:
        return self._config.context_tokens

    @property
    def max_output_tokens(self) -> int:
        return self._config.max_output_tokens

    @property
    def ledger(self) -> Ledger:
        return self._ledger

    def complete(
        self,
        response_model: type[M],
        messages: Sequence[Message],
        *,
        max_tokens: int | None = None,
        context: Mapping[str, Any] | None = None,
        label: str = "",
    ) -> M:
        usage = _CallUsage()
        self._local.usage = usage
        started = time.monotonic()
        error = ""
        try:
            result = self._complete(response_model, outbound_messages(messages), max_tokens, context)
        except ProviderError as exc:
            error = str(exc)
            raise
        finally:
            self._local.usage = None
            self._ledger.record(LedgerEntry(
                label=label or response_model.__name__, model=self._model,
                input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                requests=usage.requests, ok=not error, seconds=round(time.monotonic() - started, 3),
                error=error[:300],
            ))
        return result

    # -- internals ---------------------------------------------------------------------------------------
    def _on_request(self, *args: Any, **kwargs: Any) -> None:
        usage = getattr(self._local, "usage", None)
        if usage is not None:
            usage.requests += 1

    def _on_response(self, response: Any) -> None:
        usage = getattr(self._local, "usage", None)
        if usage is not None:
            usage.add(getattr(response, "usage", None))

    def _reply_budget(self, messages: list[dict[str, Any]], response_model: type[BaseModel],
                      wanted: int) -> int:
        room = self.context_tokens - estimate_prompt_tokens(messages, response_model)
        budget = min(wanted, room)
        if budget < MIN_REPLY_TOKENS:
            raise ProviderError(
                "llm", f"prompt of ~{self.context_tokens - room} tokens leaves no room for a reply in a "
                       f"{self.context_tokens}-token context")
        return budget

    def _complete(self, response_model: type[M], messages: list[dict[str, Any]], max_tokens: int | None,
                  context: Mapping[str, Any] | None) -> M:
        from instructor.core import IncompleteOutputException, InstructorRetryException

        wanted = max_tokens or self.max_output_tokens
        transport_attempt = 0
        reasks = 0
        cut_once = False
        base = system_to_user(messages) if self._config.system_in_user else messages
        added: list[dict[str, Any] | tuple[Any, str]] = []  # plain messages, or (rejected reply, reason)
        while True:
            history = self._tool_history and any(isinstance(a, tuple) for a in added)
            messages = [*base, *(m for a in added for m in (
                reask_messages(*a, tool_history=self._tool_history) if isinstance(a, tuple) else [a]))]
            try:
                budget = self._reply_budget(messages, response_model, wanted)
            except ProviderError as exc:
                if not added:
                    raise
                # the first ask fitted; only the re-ask's history does not: the model's replies failed
                raise ProviderOutputError("llm", f"no valid reply after {reasks + 1} attempts; a further "
                                                 f"re-ask does not fit the context ({exc})") from exc
            token = _CALL_CONTEXT.set(dict(context) if context is not None else None)
            try:
                with self._slots:
                    # One attempt per create(): the re-ask below is ours, because Instructor's TOOLS-mode
                    # re-ask puts the reason in a `tool` message that llama.cpp's chatml/gemma formats drop.
                    result: M = self._client.chat.completions.create(
                        model=self._model, response_model=_context_bound(response_model),
                        messages=messages,  # type: ignore[arg-type]
                        max_tokens=budget, max_retries=0, **self._sampling_now(),
                    )
                return as_declared(response_model, result)
            except IncompleteOutputException as exc:
                self._on_response(getattr(exc, "last_completion", None))
                if cut_once:
                    raise ProviderOutputError("llm", f"reply cut at max_tokens ({budget}) twice") from exc
                cut_once = True
                log.info("llm: reply cut at %d tokens; asking once more for a shorter one", budget)
                added.append({"role": "user", "content": (
                    "Your previous reply was cut off at the length limit. Reply again with the same "
                    "structure but shorter: fewer, briefer sentences.")})
                wanted = max(budget * 2, wanted)
            except InstructorRetryException as exc:
                cause = _transport_cause(exc)
                if cause is None:  # the reply did not validate; usage was counted per reply by the hook
                    reason = reask_reason(exc)
                    if reasks >= self._config.max_reasks:
                        raise ProviderOutputError(
                            "llm", f"no valid reply after {reasks + 1} attempts: {_short(reason)}") from exc
                    reasks += 1
                    log.debug("llm: re-asking (%d/%d): %s", reasks, self._config.max_reasks, _short(reason))
                    # only the latest rejected reply and its reason: older ones would only grow the prompt
                    added = [a for a in added if not isinstance(a, tuple)]
                    added.append((getattr(exc, "last_completion", None), reason))
                    continue
                if history and self._refuses_tool_history(cause):
                    continue
                if self._refuses_sampling(cause):
                    continue
                transport_attempt = self._transport_retry(cause, transport_attempt)
            except ProviderError:
                raise
            except Exception as exc:
                # Instructor sometimes lets the openai error through unwrapped; anything else is a bug here.
                cause = _transport_cause(exc)
                if cause is None:
                    raise
                if history and self._refuses_tool_history(cause):
                    continue
                if self._refuses_sampling(cause):
                    continue
                transport_attempt = self._transport_retry(cause, transport_attempt)
            finally:
                _CALL_CONTEXT.reset(token)

    def _refuses_tool_history(self, cause: BaseException) -> bool:
        """A server that rejects a re-ask carrying tool-call history (llama-cpp-python's answers HTTP 500):
        send re-asks without it from now on, the reason still in the user message. True to resend now."""
        if _status(cause) not in {400, 422, 500}:
            return False
        with self._history_lock:
            if self._tool_history:
                self._tool_history = False
                log.warning("llm: the server rejected a re-ask with tool-call history (HTTP %s); re-asks go "
                            "without it from now on (set SOURCEBOOK_LLM_TOOL_HISTORY=0 to skip this)",
                            _status(cause))
        return True

    def _sampling_now(self) -> dict[str, Any]:
        with self._history_lock:
            return dict(self._sampling)

    def _refuses_sampling(self, cause: BaseException) -> bool:
        """A server that rejects `temperature` or `seed` (some reasoning models accept only their default):
        send calls without the setting it names from now on. True to resend now."""
        if _status(cause) not in {400, 422}:
            return False
        text = str(cause).lower()
        with self._history_lock:
            refused = [k for k in self._sampling if k in text]
            for key in refused:
                log.warning("llm: the server rejected %s=%s; calls go without it from now on", key,
                            self._sampling.pop(key))
        return bool(refused)

    def _transport_retry(self, cause: BaseException, attempt: int) -> int:
        """Sleep before the next try, or raise ProviderError when the error is final or retries are spent."""
        status = _status(cause)
        again = retryable(status)
        if not again or attempt >= self._config.max_retries:
            what = f"failed after {attempt + 1} attempts" if again else "request rejected"
            raise ProviderError("llm", f"{what}: {type(cause).__name__}: {_short(str(cause))}",
                                status) from cause
        delay = backoff_delay(attempt, self._config.retry_base_s, _retry_after(cause))
        log.warning("llm: %s (HTTP %s); retry %d/%d in %.1fs", type(cause).__name__, status or "-",
                    attempt + 1, self._config.max_retries, delay)
        time.sleep(delay)
        return attempt + 1


REASK_INSTRUCTION = ("Your previous reply was rejected:\n{reason}\nReply again with the same structure, "
                     "fixing exactly these problems and keeping everything else.")


def reask_reason(exc: BaseException) -> str:
    """The validation errors behind a rejected reply, one short line each (what the model must fix)."""
    from pydantic import ValidationError

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ValidationError):
            lines = []
            for err in current.errors(include_url=False)[:6]:
                where = ".".join(str(p) for p in err.get("loc", ()))
                msg = str(err.get("msg", "")).removeprefix("Value error, ")
                lines.append(f"- {where}: {msg}" if where else f"- {msg}")
            return "\n".join(lines)
        failed = getattr(current, "failed_attempts", None)
        if failed:
            current = getattr(failed[-1], "exception", None) or current.__cause__
            continue
        current = current.__cause__ or current.__context__
    return f"- {_short(str(exc), 600)}"


def reask_messages(completion: Any, reason: str, *, tool_history: bool = True) -> list[dict[str, Any]]:
    """Messages that follow a rejected reply: the reply itself, then the reason in a USER message.

    Every chat format keeps user messages; llama.cpp's chatml and gemma drop `tool` ones. With
    `tool_history` the rejected tool call and a `tool` reply are kept too, for servers that use them.
    """
    text = REASK_INSTRUCTION.format(reason=reason)
    out: list[dict[str, Any]] = []
    message = completion.choices[0].message if getattr(completion, "choices", None) else None
    calls = list(getattr(message, "tool_calls", None) or []) if message is not None else []
    if calls and tool_history:
        # content as text too: an empty content reaches the server as `[]`, which llama.cpp's server rejects
        text_reply = message.content or calls[0].function.arguments  # type: ignore[union-attr]
        out.append({"role": "assistant", "content": text_reply,
                    "tool_calls": [{"id": c.id, "type": "function",
                                    "function": {"name": c.function.name, "arguments": c.function.arguments}}
                                   for c in calls]})
        out.extend({"role": "tool", "tool_call_id": c.id, "content": text} for c in calls)
    elif message is not None:
        previous = message.content or (calls[0].function.arguments if calls else "")
        out.append({"role": "assistant", "content": previous or "(an empty reply)"})
    out.append({"role": "user", "content": text})
    return out


def system_to_user(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """System messages folded into the start of the first user message (for formats that drop them)."""
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    if not system:
        return rest
    for m in rest:
        if m.get("role") == "user":
            m["content"] = f"{system}\n\n{m.get('content') or ''}"
            return rest
    return [{"role": "user", "content": system}, *rest]


def _short(text: str, limit: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def get_chat_model(config: LLMConfig, ledger: Ledger | None = None) -> ChatModel | None:
    """The configured chat model, or None when no provider is configured (extractive pages only)."""
    if not config.configured:
        return None
    return OpenAIChatModel(config, ledger)
