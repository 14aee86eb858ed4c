"""The HTTP API: one endpoint per agent tool, the OpenAPI schema, and the built wiki under /wiki/.

Every tool endpoint is generated from its ToolSpec (answer/serving/tool_contracts.py): the request model's
fields are
its query parameters and JSON body, its reply model documents the response in OpenAPI, and the call goes to
the one implementation in `answer.serving.tools.Tools`; the one error boundary turns a SourcebookError into
its `http_status` with a JSON body `{"error": <kind>, "message": ..., "problems": [...]}`.

Security, in the order a request meets it (one ASGI middleware, before routing):
1. When a token is configured, `Authorization: Bearer <token>` must match (constant-time compare) on every
   request, the schema and the wiki included; otherwise 401.
2. Bodies larger than `max_body_bytes` are refused with 413, whether announced by Content-Length or streamed.
3. State-changing calls (POST /index, POST /remember) take only JSON (or, for POST /index, a tar archive:
   `TarPushes`, capped by the push limits instead of `max_body_bytes`), and, unless the bearer token
   vouched for the request, never from a web page: a request carrying the headers only browsers send
   (`Origin`,
   `Sec-Fetch-Site`, which no page script can set or remove) is refused with 403. Agents, curl and the MCP
   bridge send neither. So neither a page elsewhere (a cross-site form) nor one served from /wiki/ itself
   can plant an episode that later answers would quote.
4. Calls that spend provider calls (/ask) are refused (403) for a cross-site request unless the token
   vouched for it, and a POST body other than JSON is a 415: a page elsewhere cannot spend the user's calls.
A server bound to a non-loopback address without a token refuses to start (`check_bind`).

The wiki under /wiki/ is served with a strict Content-Security-Policy (generator.site.publish.site_headers):
scripts only from the site itself (Material's inline start-up scripts are files in sourcebook's theme
layer), no inline handlers, and network requests only to the wiki's own path, so even markup that slipped
past the site's sanitizer could neither run nor reach the API.

Body fields take precedence over query-string fields on every POST, and either works alone, so
`POST /ask?q=x` and `POST /ask {"question": "x"}` are the same request.
"""

from __future__ import annotations

import hmac
import inspect
import ipaddress
import json
import logging
import os
import re
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, create_model

from answer.serving.tool_contracts import TOOLS, ToolSpec, hide_roots
from generator.site.publish import owned_here, site_headers
from sourcebook import __version__
from sourcebook.errors import AccessError, SourcebookError, UsageError
from sourcebook.settings import TOKEN_ENV  # the variable named in the token's messages

if TYPE_CHECKING:
    from starlette.responses import Response
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from answer.serving.tools import Tools

log = logging.getLogger(__name__)

DEFAULT_MAX_BODY_BYTES = 1_000_000


def is_loopback(host: str) -> bool:
    if host in {"localhost", "ip6-localhost"}:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def check_token(token: str | None) -> None:
    """Refuse a token that cannot protect anything: empty or blank (`--token " "` would otherwise serve
    as if no token were set), or padded with whitespace (no client header could ever match it)."""
    if token is None:
        return
    if not token.strip():
        raise UsageError(f"the bearer token (--token or ${TOKEN_ENV}) is empty or only whitespace")
    if token != token.strip():
        raise UsageError(f"the bearer token (--token or ${TOKEN_ENV}) starts or ends with whitespace")


def check_bind(host: str, token: str | None) -> None:
    """Refuse a malformed token, and refuse to expose the API beyond this machine without one."""
    check_token(token)
    if not is_loopback(host) and not token:
        raise AccessError(
            f"refusing to bind {host}: serving beyond loopback requires a bearer token "
            f"(--token or ${TOKEN_ENV})")


# ---------------------------------------------------------------- routes from the tool contracts


def _is_list(annotation: Any) -> bool:
    return typing.get_origin(annotation) is list


def _max_length(metadata: typing.Iterable[Any]) -> int | None:
    """The `max_length` a field's constraints state (tool_contracts caps every string), else None."""
    for item in metadata:
        if getattr(item, "max_length", None) is not None:
            return int(item.max_length)
        inner = _max_length(getattr(item, "metadata", ()))  # a FieldInfo inside Annotated
        if inner is not None:
            return inner
    return None


def _cap_schema(annotation: Any, metadata: typing.Iterable[Any]) -> dict[str, Any] | None:
    cap = _max_length(metadata)
    return None if cap is None else {"maxItems" if _is_list(annotation) else "maxLength": cap}


def _query_cap(annotation: Any, metadata: typing.Iterable[Any]) -> int | None:
    """A query parameter's cap: the field's own, or for a comma-separated list its items' caps joined."""
    cap = _max_length(metadata)
    if not _is_list(annotation) or cap is None:
        return cap
    (item,) = typing.get_args(annotation)
    item_cap = _max_length(getattr(item, "__metadata__", ()))
    return None if item_cap is None else cap * (item_cap + 1)


def _body_model(spec: ToolSpec) -> type[BaseModel]:
    """The POST body: every request field optional (the query string may carry it), plus the aliases. Each
    states its contract's length cap in the schema; `ToolSpec.parse` enforces it (here, pydantic would refuse
    a lone surrogate in a capped string with a message that does not say so)."""
    fields: dict[str, Any] = {
        name: (typing.Optional[info.annotation],  # noqa: UP045
               Field(None, description=info.description,
                     json_schema_extra=_cap_schema(info.annotation, info.metadata)))
        for name, info in spec.request.model_fields.items()}
    for alias, target in spec.http_aliases.items():
        cap = _cap_schema(str, spec.request.model_fields[target].metadata)
        fields[alias] = (str | None, Field(None, description=f"Alias of `{target}`.", json_schema_extra=cap))
    model: type[BaseModel] = create_model(f"{spec.request.__name__}Body",
                                          __config__=ConfigDict(extra="forbid"), **fields)
    return model


def _query_parameters(spec: ToolSpec) -> list[inspect.Parameter]:
    """One optional query parameter per request field (lists comma-separated), plus the aliases."""
    params = []
    fields = spec.request.model_fields
    names = {**{n: (i.annotation, i.description, _query_cap(i.annotation, i.metadata))
                for n, i in fields.items() if n not in spec.body_only},
             **{a: (str, f"Alias of `{t}`.", _max_length(fields[t].metadata))
                for a, t in spec.http_aliases.items()}}
    for name, (annotation, description, cap) in names.items():
        listed = _is_list(annotation)
        kind: Any = str if listed else annotation
        help_text = f"{description} (comma-separated)" if listed else description
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                        annotation=typing.Optional[kind],  # noqa: UP045
                                        default=Query(None, description=help_text, max_length=cap)))
    return params


def _arguments(spec: ToolSpec, query: dict[str, Any], body: BaseModel | None) -> dict[str, Any]:
    """Query-string values overridden by whatever the body sets (None = not set); aliases folded in."""
    merged: dict[str, Any] = {}
    for name, value in query.items():
        if value is None:
            continue
        annotation = spec.request.model_fields[name].annotation if name in spec.request.model_fields else None
        merged[name] = _split_list(value) if _is_list(annotation) else value
    if body is not None:
        merged.update({k: v for k, v in body.model_dump().items() if v is not None})
    for alias, target in spec.http_aliases.items():
        value = merged.pop(alias, None)
        if value is not None and merged.get(target) is None:
            merged[target] = value
    return merged


def _route(tools: Tools, spec: ToolSpec, post: bool) -> Callable[..., dict[str, Any]]:
    """An endpoint for `spec` whose signature FastAPI reads for parameters, validation and OpenAPI."""
    params = _query_parameters(spec)
    if post:
        params.insert(0, inspect.Parameter("body", inspect.Parameter.KEYWORD_ONLY,
                                           annotation=typing.Optional[_body_model(spec)],  # noqa: UP045
                                           default=None))

    def endpoint(body: BaseModel | None = None, **query: Any) -> dict[str, Any]:
        return spec.invoke(tools, spec.parse(_arguments(spec, query, body)))

    endpoint.__name__ = f"{spec.name}_{'post' if post else 'get'}"
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        params, return_annotation=dict[str, Any])
    return endpoint


def _split_list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


# ---------------------------------------------------------------- middleware


LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
# Endpoints that change state. They only accept a JSON content type, which a browser cannot send
# cross-origin without a CORS preflight this server never grants: a web page cannot plant an episode
# (later shown to agents) or trigger indexing through the user's browser.
MUTATING_PATHS = frozenset({"/index", "/remember"})
# Endpoints that spend the user's provider calls. Answers are read by the wiki's own ask box (a same-origin
# GET), but a page elsewhere must not spend them: an <img src=".../ask?q=..."> or a cross-site form cost
# the user three calls each. So no cross-site request (Sec-Fetch-Site cross-site/same-site, or an Origin
# other than this server's), and a POST body only as JSON (a form's urlencoded or text/plain body is what
# a page can send without a preflight).
COSTLY_PATHS = frozenset({"/ask"})


def _from_a_web_page(headers: dict[bytes, bytes]) -> bool:
    """True when a browser sent the request on behalf of a page (fetch, XHR, form), not a user typing a URL.

    Browsers put `Origin` on every POST and `Sec-Fetch-Site` on requests to loopback and https servers;
    both are forbidden header names, so a page cannot drop them."""
    site = headers.get(b"sec-fetch-site", b"").strip().lower()
    return b"origin" in headers or site not in {b"", b"none"}


def _cross_site(headers: dict[bytes, bytes]) -> bool:
    """True when a browser sent the request for a page of another origin (or an opaque one)."""
    site = headers.get(b"sec-fetch-site", b"").strip().lower()
    if site in {b"cross-site", b"same-site"}:
        return True
    origin = headers.get(b"origin")
    if origin is None:
        return False
    origin_host = origin.strip().lower().partition(b"://")[2]
    return origin_host != headers.get(b"host", b"").strip().lower()


def _host_name(host_header: bytes) -> str:
    host = host_header.decode("latin-1").strip().lower()
    if host.startswith("["):  # [::1]:7700
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """Bearer token on every request, a loopback Host check, a hard cap on the body size, JSON-only writes.

    `local_only` (set when serving on loopback without a token) refuses any Host header other than
    localhost / 127.0.0.1 / [::1]: a DNS-rebinding page (Host: evil.example) cannot read the code.
    """

    def __init__(self, app: ASGIApp, token: str | None, max_body_bytes: int,
                 local_only: bool = False, vouched: bool = False) -> None:
        self.app = app
        self.token = token.encode() if token else None
        # vouched: a router in front (answer/serving/orgs.py) already checked an organisation's token
        self.vouched = vouched
        self.max_body_bytes = max_body_bytes
        self.local_only = local_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if self.token is not None:
            given = headers.get(b"authorization", b"")
            scheme, _, value = given.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), self.token):
                await send_json(send, 401, {"error": "Unauthorized",
                                            "message": "missing or wrong bearer token"},
                                extra=[(b"www-authenticate", b"Bearer")])
                return
        if self.local_only and _host_name(headers.get(b"host", b"")) not in LOCAL_HOSTS:
            await send_json(send, 403, {"error": "Forbidden",
                                        "message": "Host not allowed: this server answers localhost only"})
            return
        ctype = _content_type(headers)
        tar_push = _is_tar_push(scope, ctype)
        length = headers.get(b"content-length")
        if length is not None and not tar_push:
            try:
                announced = int(length)
            except ValueError:
                await send_json(send, 400, {"error": "BadRequest", "message": "bad Content-Length"})
                return
            if announced > self.max_body_bytes:
                await send_json(send, 413, _too_large(self.max_body_bytes))
                return
        if scope.get("path") in COSTLY_PATHS:
            if self.token is None and _cross_site(headers):
                await send_json(send, 403, {
                    "error": "Forbidden",
                    "message": "answers spend provider calls and are not given to other sites' pages; "
                               "call the API from a client or the wiki's own ask box"})
                return
            if scope.get("method") == "POST" and ctype and ctype != b"application/json":
                await send_json(send, 415, {"error": "UnsupportedMediaType",
                                            "message": "send a JSON body (Content-Type: application/json)"})
                return
        if scope.get("method") == "POST" and scope.get("path") in MUTATING_PATHS:
            if self.token is None and not self.vouched and _from_a_web_page(headers):
                await send_json(send, 403, {
                    "error": "Forbidden",
                    "message": "state-changing calls are not accepted from web pages; call the API from a "
                               "client, or serve with --token and send it"})
                return
            if ctype != b"application/json" and not tar_push:
                await send_json(send, 415, {"error": "UnsupportedMediaType",
                                            "message": "send a JSON body (Content-Type: application/json)"})
                return
        if tar_push:  # TarPushes streams it to disk under the push's own cap (answer/serving/pushes.py)
            await self.app(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:
                    raise _BodyTooLarge(self.max_body_bytes)
            return message

        try:
            await self.app(scope, limited, send)
        except _BodyTooLarge:
            await send_json(send, 413, _too_large(self.max_body_bytes))


TAR_TYPES = frozenset({b"application/x-tar", b"application/tar"})
_TAR_QUERY = frozenset({"repo", "prune", "commit"})


def _content_type(headers: dict[bytes, bytes]) -> bytes:
    """The request's media type, lower-case, without its parameters (b"" when none is given)."""
    return headers.get(b"content-type", b"").split(b";")[0].strip().lower()


def _is_tar_push(scope: Scope, ctype: bytes) -> bool:
    return scope.get("method") == "POST" and scope.get("path") == "/index" and ctype in TAR_TYPES


def _tar_query(query_string: bytes) -> tuple[str | None, bool, str | None]:
    """repo, prune and commit of a tar push's query string; UsageError on anything else."""
    from urllib.parse import parse_qs

    query = parse_qs(query_string.decode("latin-1"), keep_blank_values=True)
    unknown = sorted(set(query) - _TAR_QUERY)
    if unknown:
        raise UsageError(f"unknown query parameter(s) for a tar push: {', '.join(unknown)} "
                         "(repo, prune, commit)")
    prune_text = (query.get("prune") or ["false"])[-1].lower()
    if prune_text not in {"", "0", "1", "false", "true", "no", "yes"}:
        raise UsageError(f"prune: true or false, got {prune_text!r}")
    repo = query["repo"][-1] or None if "repo" in query else None
    commit = query["commit"][-1] if "commit" in query else None
    return repo, prune_text in {"1", "true", "yes"}, commit


class TarPushes:
    """POST /index with a tar body (`Content-Type: application/x-tar`; repo, prune and commit in the query
    string): the body is streamed to a temporary file on disk, refused with 413 as soon as it passes the
    push's cap, and handed to `Tools.index_tar`, which checks its members as a JSON push's entries are.
    Inside the Guard: the token and web-page checks have run. Any other request passes through."""

    def __init__(self, app: ASGIApp, tools: Tools) -> None:
        self.app = app
        self.tools = tools

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers") or []) if scope["type"] == "http" else {}
        if scope["type"] != "http" or not _is_tar_push(scope, _content_type(headers)):
            await self.app(scope, receive, send)
            return
        import functools
        import tempfile

        import anyio.to_thread

        from answer.serving.pushes import tar_body_cap

        cap = tar_body_cap(self.tools.push_limits)
        try:
            repo, prune, commit = _tar_query(scope.get("query_string", b""))
        except UsageError as exc:
            await send_json(send, exc.http_status, error_payload(exc))
            return
        length = dict(scope.get("headers") or []).get(b"content-length", b"")
        if length.isdigit() and int(length) > cap:
            await send_json(send, 413, _too_large(cap))
            return
        with tempfile.TemporaryFile(prefix="sourcebook-push-") as spool:
            seen = 0
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                body = message.get("body", b"")
                seen += len(body)
                if seen > cap:
                    await send_json(send, 413, _too_large(cap))
                    return
                spool.write(body)
                if not message.get("more_body"):
                    break
            spool.seek(0)
            call = functools.partial(self.tools.index_tar, spool, repo=repo, prune=prune, commit=commit)
            try:
                reply, status = await anyio.to_thread.run_sync(call), 200
            except SourcebookError as exc:
                if exc.http_status >= 500:
                    log.warning("%s: %s", type(exc).__name__, exc)
                hide_roots(exc, self.tools.hidden_roots)
                reply, status = error_payload(exc), exc.http_status
            except Exception as exc:  # the boundary for bugs, as the app's own handler
                log.error("unhandled error: %s", exc, exc_info=exc)
                reply, status = {"error": "InternalError", "message": "internal error (logged)"}, 500
        await send_json(send, status, reply)


class _BodyTooLarge(HTTPException):
    # An HTTPException so that FastAPI's body parser re-raises it instead of turning it into a 400.
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body larger than {limit} bytes")


def _too_large(limit: int) -> dict[str, str]:
    return {"error": "PayloadTooLarge", "message": f"request body larger than {limit} bytes"}


async def send_json(send: Send, status: int, payload: dict[str, Any],
                    extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


# ---------------------------------------------------------------- the app


# matched whole (fullmatch): `$` would pass a trailing newline
_HOST = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?")


ASK_MARKER = "sourcebook-api.json"


class _Wiki(StaticFiles):
    """The built site under a strict CSP; a site not built yet is a 404 with a hint, not a 500."""

    def __init__(self, *, mount: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mount = mount

    async def check_config(self) -> None:
        if self.directory is None or not os.path.isdir(self.directory):
            raise HTTPException(404, "the wiki is not built: run `sourcebook build`")
        await super().check_config()

    async def get_response(self, path: str, scope: Scope) -> Response:
        # on every request, not once (check_config): the folder may be swapped under a running server
        if not owned_here(Path(str(self.directory))):
            # a site committed with the repository would run its script on this origin, next to /ask
            raise HTTPException(404, "the wiki here was not built by this user (it may have come with the "
                                     "repository): run `sourcebook build`, which sets it aside")
        if path == ASK_MARKER:
            # tells the ask box (site/assets/sourcebook/ask.js) that /ask answers behind this wiki; a static
            # copy of the site has no such file, so it shows no box
            response: Response = JSONResponse({"ask": "/ask"})
        else:
            response = await super().get_response(path, scope)
        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1").strip()
        # the prefix needs an absolute URL in CSP ('self' cannot carry a path); a Host header that is not
        # a plain host[:port] falls back to 'self' rather than being spliced into the policy
        # plus /ask alone: the ask box (site/assets/sourcebook/ask.js) reads answers; every other endpoint,
        # the state-changing ones above all, stays out of the pages' reach
        origin = f"{scope.get('scheme', 'http')}://{host}"
        connect = f"{origin}{self.mount}/ {origin}/ask" if _HOST.fullmatch(host) else "'self'"
        img = f"{origin}{self.mount}/ data:" if _HOST.fullmatch(host) else "'self' data:"
        response.headers.update(site_headers(Path(str(self.directory)), connect=connect, img=img))
        return response



def error_payload(exc: SourcebookError) -> dict[str, Any]:
    payload: dict[str, Any] = {"error": type(exc).__name__, "message": str(exc)}
    problems = getattr(exc, "problems", None)
    if problems:
        payload["problems"] = problems
    return payload


def create_app(tools: Tools, token: str | None = None, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,  # noqa: PLR0917
               serve_wiki: bool = True, local_only: bool = False, vouched: bool = False) -> FastAPI:
    """The FastAPI app over `tools`. Wrap it in nothing else: the guard is installed here.

    `local_only`: accept only loopback Host headers (what `sourcebook serve` sets on a loopback bind
    without a token). `vouched`: the caller already authenticated the request (answer/serving/orgs.py's
    router)."""
    app = FastAPI(title="sourcebook", version=__version__,
                  description="Answers and code context for coding agents, from a sourcebook index.")

    @app.exception_handler(SourcebookError)
    async def _sourcebook_error(_: Request, exc: SourcebookError) -> JSONResponse:
        if exc.http_status >= 500:
            log.warning("%s: %s", type(exc).__name__, exc)
        return JSONResponse(error_payload(exc), status_code=exc.http_status)

    @app.exception_handler(RequestValidationError)
    async def _bad_arguments(_: Request, exc: RequestValidationError) -> JSONResponse:
        # the same 400 and error shape as a request the tool contract refuses (ToolSpec.parse)
        problems = [f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()]
        return JSONResponse({"error": "UsageError", "message": "; ".join(problems), "problems": problems},
                            status_code=400)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        # The boundary for bugs: log the traceback, answer JSON (never a stack trace to the client).
        log.error("unhandled error: %s", exc, exc_info=exc)
        return JSONResponse({"error": "InternalError", "message": "internal error (logged)"}, status_code=500)

    @app.get("/health", summary="Liveness and the repositories served")
    def health() -> dict[str, Any]:
        return {"status": "ok", "version": __version__, "repos": tools.workspace.aliases,
                "default": tools.workspace.default}

    for spec in TOOLS:
        described: dict[int | str, dict[str, Any]] = {
            200: {"model": spec.reply, "description": "The tool's reply."}}
        if spec.http_get:
            app.add_api_route(spec.http_path, _route(tools, spec, post=False), methods=["GET"],
                              summary=spec.http_summary, description=spec.description, responses=described)
        if spec.http_post:
            app.add_api_route(spec.http_path, _route(tools, spec, post=True), methods=["POST"],
                              summary=spec.http_summary + " (JSON body; body fields beat the query string)",
                              description=spec.description, responses=described)

    if serve_wiki:
        # /wiki/ is the default repository's built site; in a workspace every repository's site is also
        # under /wikis/<alias>/. check_dir=False: the site may be built after the server starts.
        site_dir = tools.workspace.resolve(None).site_dir
        app.mount("/wiki", _Wiki(mount="/wiki", directory=site_dir, html=True, check_dir=False), name="wiki")
        if len(tools.workspace.aliases) > 1:
            for alias in tools.workspace.aliases:
                app.mount(f"/wikis/{alias}", _Wiki(mount=f"/wikis/{alias}",
                                                   directory=tools.workspace.resolve(alias).site_dir,
                                                   html=True, check_dir=False), name=f"wiki-{alias}")

    app.add_middleware(TarPushes, tools=tools)  # inside the guard (added later: outer)
    app.add_middleware(Guard, token=token, max_body_bytes=max_body_bytes, local_only=local_only,
                       vouched=vouched)
    return app


def app_from_settings(serialized: str) -> FastAPI:
    """App factory for multi-worker uvicorn (`sourcebook serve --workers N`): each worker process builds
    its own Tools (own index handles and caches) from the one settings object the CLI serialized
    (sourcebook/settings.py's ServeSettings, JSON), handed to it by uvicorn with the factory."""
    from answer.serving.tools import Tools
    from sourcebook.settings import ServeSettings

    serve = ServeSettings.model_validate_json(serialized)
    # no path: no checkout, the index URI (the settings' index_uri) alone answers
    tools = Tools.for_path(serve.path, settings=serve.settings)
    tools.warm_in_background(graph=True)
    return create_app(tools, token=serve.token, max_body_bytes=serve.max_body, local_only=serve.local_only)
