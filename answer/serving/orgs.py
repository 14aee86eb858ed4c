"""Organisations: one server, several tenants, each with its own tokens and its own index databases.

`sourcebook serve --orgs ORGS.toml` reads:

    [orgs.acme]
    token_sha256 = "9f86d08…"          # sha256 hex of a bearer token, or a list of them; never the token
    index_root = "/srv/sourcebook/acme"  # or s3://bucket/acme, gs://…, az://…
    max_file_bytes = 1000000             # optional push limits (answer/serving/pushes.py)
    max_request_bytes = 32000000
    max_files = 20000
    max_concurrent = 8                   # optional: its requests served at once

    [orgs.globex]
    token_sha256 = ["…", "…"]
    index_root = "s3://globex-index/sb"

Each repository of an organisation is its own LanceDB database at `<index_root>/<repo>`, created by the first
push of files to it; each organisation is answered by its own `Tools` (own open indexes, caches, state
folders), so nothing one organisation's request touches is another's. The bearer token selects the
organisation (its sha256 compared with every configured hash in constant time, all of them every time); no
or a wrong token is 401; a repository of another organisation is looked up under the caller's own root
only, so it answers exactly what a repository that does not exist answers. Storage credentials come from
the server's environment, never from a request or the file: by default the standard variables LanceDB
reads itself (AWS_* / GOOGLE_* / AZURE_*), shared by every organisation; with `storage_env` an
organisation names its own variables, one per Lance storage option:

    [orgs.acme]
    index_root = "s3://acme-index/sb"
    storage_env = {aws_access_key_id = "ACME_AWS_ACCESS_KEY_ID", aws_secret_access_key = "ACME_AWS_SECRET"}

Every connection to a database under that root is made with those options (generator/index/object_stores.py
registers the root), which win over the standard variables; a variable that is not set fails the load.

MCP over streamable HTTP is at `/mcp` on the same server, behind the same token: the token selects the
organisation, whose own MCP server (the agent tools over that organisation's Tools) answers. Stateless
(each POST carries its JSON-RPC exchange, no server-side session): with several worker processes a
client's next request may reach another one, which holds no session it could resume.

Fairness: each organisation has at most `max_concurrent` requests (default MAX_CONCURRENT) in the thread
pool at once; more wait in the event loop, holding no thread, and past MAX_WAITING more are refused with 429
at once. The shared pool is kept larger than all the organisations' limits together, so one organisation's
slow calls never hold another's requests, and `/health` (which is never queued) always finds a thread.

`OrgRouter.reload()` (on SIGHUP in `sourcebook serve`, through `schedule_reload`) re-reads the file:
organisations whose settings are unchanged keep their warm state; a file that no longer parses keeps the
previous configuration. With `--workers N` the supervisor checks the file first and then replaces the
workers one by one (each reads it at start; a push is visible to the other workers within `index_refresh_s`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import re
import threading
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from answer.serving.pushes import PushLimits
from answer.serving.workspace import Workspace
from sourcebook.errors import ConfigError, NotFoundError, UsageError
from sourcebook.settings import Settings

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import ASGIApp, Receive, Scope, Send

    from answer.serving.tools import Tools
    from sourcebook.config import Config

log = logging.getLogger(__name__)

# all matched whole (fullmatch): `$` would also match before a trailing newline
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_LIMITS = ("max_file_bytes", "max_request_bytes", "max_files")
MAX_CONCURRENT = 8  # an organisation's requests in the thread pool at once (its max_concurrent)
MAX_WAITING = 64  # past this many queued behind them, its requests are refused (429) without waiting
SPARE_THREADS = 16  # pool threads beyond the organisations' limits: /health, MCP sessions, warm-up
_OPTION = re.compile(r"[a-z][a-z0-9_]{0,63}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


@dataclass(frozen=True)
class OrgSpec:
    name: str
    token_hashes: tuple[str, ...]
    index_root: str  # an absolute path or an object-store prefix, without a trailing slash
    limits: PushLimits = field(default_factory=PushLimits)
    # storage option key (Lance's: aws_access_key_id, …) -> the server environment variable holding it
    storage_env: tuple[tuple[str, str], ...] = ()
    max_concurrent: int = MAX_CONCURRENT


def storage_settings(spec: OrgSpec, env: Mapping[str, str]) -> dict[str, str]:
    """The organisation's storage options, read from `env` by the names its `storage_env` gives (ConfigError
    naming every variable that is not set; never a value)."""
    # a variable's name is shown only when it looks like one: a secret pasted in its place is never echoed
    missing = [f"{key} ({var})" if var.isupper() and "_" in var else key
               for key, var in spec.storage_env if not env.get(var)]
    if missing:
        raise ConfigError(f"orgs.{spec.name}: the environment variables storage_env names for "
                          f"{', '.join(missing)} are not set in the server's environment")
    return {key: env[var] for key, var in spec.storage_env}


def token_sha256(token: str) -> str:
    """What an orgs file holds for `token`."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def parse_orgs(data: dict[str, Any], base: Path) -> dict[str, OrgSpec]:
    """The organisations of a parsed orgs file; every problem reported at once (ConfigError). Pure but for
    resolving relative local roots against `base`."""
    problems: list[str] = []
    orgs = data.get("orgs")
    for key in data:
        if key != "orgs":
            problems.append(f"orgs file: unknown setting {key!r}")
    if not isinstance(orgs, dict) or not orgs:
        raise ConfigError([*problems, "orgs file: an [orgs.<name>] table with at least one organisation is "
                                      "required"])
    out: dict[str, OrgSpec] = {}
    owner: dict[str, str] = {}
    roots: dict[str, str] = {}
    for name, spec in orgs.items():
        where = f"orgs.{name}"
        if not _NAME.fullmatch(name):
            problems.append(f"{where}: invalid name (letters, digits, _ . -)")
            continue
        if not isinstance(spec, dict):
            problems.append(f"{where}: must be a table")
            continue
        for key in spec:
            if key not in {"token_sha256", "index_root", "storage_env", "max_concurrent", *_LIMITS}:
                problems.append(f"{where}: unknown setting {key!r}" + (
                    " (the file holds token_sha256, the hash, never the token)" if key == "token" else ""))
        raw = spec.get("token_sha256")
        hashes = [raw] if isinstance(raw, str) else raw
        if not isinstance(hashes, list) or not hashes or not all(isinstance(h, str) for h in hashes):
            problems.append(f"{where}: token_sha256 must be a sha256 hex string or a list of them")
            continue
        hashes = [h.strip().lower() for h in hashes]
        for h in hashes:
            if not _SHA256.fullmatch(h):
                problems.append(f"{where}: token_sha256 {h[:12]!r}… is not 64 hex digits")
            elif h in owner and owner[h] != name:
                problems.append(f"{where}: a token hash is also {owner[h]}'s (a token must select one "
                                "organisation)")
            owner.setdefault(h, name)
        root = spec.get("index_root")
        if not isinstance(root, str) or not root.strip():
            problems.append(f"{where}: index_root (a path or an s3:// gs:// az:// prefix) is required")
            continue
        root = _root(root.strip(), base)
        for other, other_root in roots.items():
            if root == other_root or root.startswith(other_root + "/") or other_root.startswith(root + "/"):
                problems.append(f"{where}: index_root overlaps {other}'s ({other_root}): each organisation "
                                "needs its own")
        roots[name] = root
        limits = {}
        for key in _LIMITS:
            value = spec.get(key)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                problems.append(f"{where}: {key} must be a positive integer")
            else:
                limits[key] = value
        storage = spec.get("storage_env", {})
        if not isinstance(storage, dict) or not all(
                isinstance(k, str) and _OPTION.fullmatch(k) and isinstance(v, str) and _ENV_NAME.fullmatch(v)
                for k, v in storage.items()):
            problems.append(f"{where}: storage_env maps storage option keys (aws_access_key_id, …) to the "
                            "names of environment variables holding them: never the values themselves")
            storage = {}
        concurrent = spec.get("max_concurrent", MAX_CONCURRENT)
        if not isinstance(concurrent, int) or isinstance(concurrent, bool) or not 1 <= concurrent <= 256:
            problems.append(f"{where}: max_concurrent must be an integer from 1 to 256")
            concurrent = MAX_CONCURRENT
        out[name] = OrgSpec(name, tuple(hashes), root, PushLimits(**limits), tuple(sorted(storage.items())),
                            concurrent)
    if problems:
        raise ConfigError(problems)
    return out


def _root(raw: str, base: Path) -> str:
    """The one spelling of an index root, so that two spellings of one folder cannot pass the overlap check
    as two roots: the scheme lower-cased, the rest percent-decoded, '.' and empty segments dropped; a
    '..' segment, and a decoded '/' or control character, refused (a bucket never resolves them the way the
    check would). A local path (file:// too) is made absolute and resolved."""
    if "://" in raw:
        from urllib.parse import unquote

        scheme, rest = raw.split("://", 1)
        scheme = scheme.lower()
        if scheme not in {"s3", "gs", "az", "file"}:
            raise ConfigError(f"index_root {raw!r}: unsupported scheme {scheme!r} (s3, gs, az or a path)")
        segments = []
        for segment in rest.split("/"):
            try:
                decoded = unquote(segment, errors="strict")
            except UnicodeDecodeError:
                raise ConfigError(f"index_root {raw!r}: a segment is not UTF-8 once decoded") from None
            if "/" in decoded or any(ord(c) < 32 or ord(c) == 127 for c in decoded):
                raise ConfigError(f"index_root {raw!r}: a segment decodes to a '/' or a control character")
            if decoded == "..":
                raise ConfigError(f"index_root {raw!r}: '..' segments are not allowed")
            if decoded not in {"", "."}:
                segments.append(decoded)
        if not segments:
            raise ConfigError(f"index_root {raw!r}: names no bucket")
        if scheme == "file":
            return str(Path("/", *segments).resolve())
        return f"{scheme}://{'/'.join(segments)}"
    path = Path(raw).expanduser()
    return str((base / path if not path.is_absolute() else path).resolve())


def load_orgs(path: Path | str) -> dict[str, OrgSpec]:
    file = Path(path)
    try:
        with file.open("rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read the orgs file ({exc.strerror or exc})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: {exc}") from exc
    return parse_orgs(data, file.parent.resolve())


def router_from_settings(serialized: str) -> OrgRouter:
    """App factory for `serve --orgs --workers N`: each worker process builds its own router (own Tools per
    organisation) from the orgs file the supervisor checked, named in the one settings object the CLI
    serialized (sourcebook/settings.py's ServeSettings, JSON)."""
    from sourcebook.settings import ServeSettings

    serve = ServeSettings.model_validate_json(serialized)
    if serve.orgs_file is None:
        raise ConfigError("serve settings for an organisations server name no orgs file")
    return OrgRouter(serve.orgs_file, max_body_bytes=serve.max_body, host=serve.host, settings=serve.settings)


# ---------------------------------------------------------------- one organisation's repositories


class OrgWorkspace(Workspace):
    """The repositories under one organisation's index root: each `<index_root>/<alias>` that holds an index,
    found when first named and created by a push. A local root is listed as a folder; an object-store root
    through the marks its pushes leave (generator.index.store.mark_database), re-listed at most every
    LIST_EVERY_S: so every worker, and a restarted server, knows an organisation's only repository."""

    LIST_EVERY_S = 2.0
    named_by_push = True

    def __init__(self, org: OrgSpec, env: dict[str, str] | None = None,
                 settings: Settings | None = None) -> None:
        self.org = org
        self.entries = {}
        self._env = env
        self._settings = settings
        self._configs: dict[str, Config] = {}
        self._known: set[str] = set()
        self._listed: tuple[float, set[str]] = (float("-inf"), set())
        self._lock = threading.Lock()

    def uri(self, alias: str) -> str:
        return f"{self.org.index_root}/{alias}"

    def _exists(self, alias: str) -> bool:
        from generator.index.store import outage_errors, read_index_state

        if alias in self._known:
            return True
        try:
            found = read_index_state(self.uri(alias)) is not None
        except outage_errors() as exc:
            log.warning("org %s: cannot look up %s: %s", self.org.name, alias, exc)
            found = False
        if found:
            with self._lock:
                self._known.add(alias)
        return found

    @property
    def aliases(self) -> list[str]:
        found = set(self._known)
        if "://" not in self.org.index_root:
            if os.path.isdir(self.org.index_root):
                found |= {name for name in os.listdir(self.org.index_root)
                          if _NAME.fullmatch(name) and os.path.isdir(os.path.join(self.org.index_root, name))}
        else:
            found |= self._marked()
        return sorted(found)

    def _marked(self) -> set[str]:
        import time

        from generator.index.store import marked_databases, outage_errors

        at, names = self._listed
        if time.monotonic() - at < self.LIST_EVERY_S:
            return names
        try:
            names = {n for n in marked_databases(self.org.index_root) if _NAME.fullmatch(n)}
        except outage_errors() as exc:  # the store is down: the repositories named so far
            log.warning("org %s: cannot list %s: %s", self.org.name, self.org.index_root, exc)
        self._listed = (time.monotonic(), names)
        return names

    def published(self, alias: str) -> None:
        """A push wrote `<root>/<alias>`: on an object store, mark it so that listings find it."""
        from generator.index.store import mark_database

        if "://" in self.org.index_root:
            mark_database(self.org.index_root, alias)

    @property  # type: ignore[override]
    def default(self) -> str | None:
        aliases = self.aliases
        return aliases[0] if len(aliases) == 1 else None

    @default.setter
    def default(self, value: str | None) -> None:  # Workspace.__init__'s assignment; never called here
        raise AttributeError("an organisation's default repository is its only one")

    def alias_for(self, repo: str | None) -> str:
        if repo is None or repo == "":
            aliases = self.aliases
            if len(aliases) == 1:
                return aliases[0]
            if not aliases:
                raise NotFoundError("this organisation has no repositories yet: push files to /index")
            raise UsageError(f"repo is required: this organisation has {len(aliases)} repositories "
                             f"({', '.join(aliases[:20])})")
        if not isinstance(repo, str):
            raise UsageError("repo must be a string alias")
        # a name that is no valid alias, and one of another organisation, answer what a missing one does
        if not _NAME.fullmatch(repo) or not self._exists(repo):
            shown = repo if len(repo) <= 80 else repo[:80] + "…"
            raise NotFoundError(f"unknown repository {shown!r}")
        return repo

    def create(self, repo: str | None) -> str:
        """The alias a push writes to: an existing repository, or a new one under this root."""
        if repo is None or repo == "":
            return self.alias_for(None)
        # not ".lance": on an object store such a folder would read as a table of the root's listing
        if (not isinstance(repo, str) or not _NAME.fullmatch(repo) or repo.lower() == "all"
                or repo.lower().endswith(".lance")):
            raise UsageError("repo: a repository name is 1-64 letters, digits, _ . - (not 'all', not "
                             "ending in .lance)")
        with self._lock:
            self._known.add(repo)
        return repo

    def abandon(self, alias: str) -> None:
        """A push to `alias` failed: unless an index is there (an earlier push's), forget the name, so a
        refused or failed first push leaves no repository that lists but cannot answer."""
        from generator.index.store import outage_errors, read_index_state

        try:
            if read_index_state(self.uri(alias)) is not None:
                return
        except outage_errors() as exc:
            log.warning("org %s: cannot look up %s: %s", self.org.name, alias, exc)
        with self._lock:
            self._known.discard(alias)
            self._configs.pop(alias, None)
        if "://" not in self.org.index_root:
            with contextlib.suppress(OSError):  # only an empty folder: what a store wrote stays, to look at
                os.rmdir(self.uri(alias))

    def resolve(self, repo: str | None = None) -> Config:
        from sourcebook.config import detached_state_dir, load_config

        alias = self.alias_for(repo)
        with self._lock:
            if alias not in self._configs:
                uri = self.uri(alias)
                state = detached_state_dir(uri, self._env)
                self._configs[alias] = load_config(
                    state, overrides={"out_dir": str(state), "index_uri": uri, "checkout": False},
                    env=self._env, settings=self._settings)
            return self._configs[alias]


# ---------------------------------------------------------------- the router


@dataclass
class _Tenant:
    spec: OrgSpec
    tools: Tools
    app: ASGIApp
    mcp: ASGIApp  # this organisation's MCP server over streamable HTTP (/mcp)
    mcp_manager: StreamableHTTPSessionManager
    mcp_scope: anyio.CancelScope | None = None  # set once its session manager runs (first /mcp request)
    limiter: anyio.CapacityLimiter | None = None  # its share of the thread pool, made in the event loop
    waiting: int = 0  # its requests queued for the limiter


class OrgRouter:
    """The ASGI app of `serve --orgs`: authenticates the bearer token, then hands the request to that
    organisation's own app (the HTTP API over its own Tools)."""

    def __init__(self, path: Path | str, max_body_bytes: int, env: dict[str, str] | None = None,
                 host: str = "127.0.0.1", settings: Settings | None = None) -> None:
        self.path = Path(path)
        self.max_body_bytes = max_body_bytes
        self.env = env
        self.settings = settings  # the user's (the CLI's); None: each config reads the environment
        self.host = host  # the bound address: the MCP transport's DNS-rebinding check follows it
        self._tenants: dict[str, _Tenant] = {}
        self._hashes: list[tuple[bytes, str]] = []
        self._lock = threading.Lock()
        self._retired: list[_Tenant] = []  # replaced by a reload: their MCP managers stop at the next request
        self._task_group: TaskGroup | None = None  # the lifespan's: the MCP session managers run in it
        self._mcp_lock: anyio.Lock | None = None
        self._reload_pipe: tuple[int, int] | None = None
        self.reload(strict=True)

    @property
    def orgs(self) -> list[str]:
        return sorted(self._tenants)

    def reload(self, strict: bool = False) -> bool:
        """Re-read the orgs file; False (and the previous configuration kept) when it does not load."""
        try:
            specs = load_orgs(self.path)
        except ConfigError as exc:
            if strict:
                raise
            log.error("orgs file %s not reloaded, the previous configuration stays: %s", self.path, exc)
            return False
        from generator.index.object_stores import set_scopes

        env = os.environ if self.env is None else self.env
        try:
            scopes = {spec.index_root: storage_settings(spec, env) for spec in specs.values()}
        except ConfigError as exc:
            if strict:
                raise
            log.error("orgs file %s not reloaded, the previous configuration stays: %s", self.path, exc)
            return False
        with self._lock:
            set_scopes({root: options for root, options in scopes.items() if options})
            tenants = {}
            for name, spec in specs.items():
                old = self._tenants.get(name)
                same = old is not None and ((old.spec.index_root, old.spec.limits, old.spec.storage_env,
                                             old.spec.max_concurrent)
                                            == (spec.index_root, spec.limits, spec.storage_env,
                                                spec.max_concurrent))
                tenants[name] = old if same and old else self._tenant(spec)
            self._retired += [t for name, t in self._tenants.items() if tenants.get(name) is not t]
            self._tenants = tenants
            self._hashes = [(bytes.fromhex(h), name) for name, spec in specs.items()
                            for h in spec.token_hashes]
        log.info("orgs: %s", ", ".join(sorted(specs)))
        return True

    def schedule_reload(self) -> None:
        """Ask for a reload; safe to call from a signal handler. The reload runs on the reloader thread,
        never in the handler: one that ran there re-entered its own lock when a second SIGHUP arrived
        during it, and the server hung. Requests made while one runs are coalesced into one more reload."""
        if self._reload_pipe is None:
            raise RuntimeError("start_reloader() first")
        with contextlib.suppress(BlockingIOError):  # the pipe is full: a reload is already pending
            os.write(self._reload_pipe[1], b"r")

    def start_reloader(self) -> None:
        """Start the daemon thread that runs the reloads schedule_reload asks for."""
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)  # a signal handler must never block
        self._reload_pipe = (read_fd, write_fd)

        def run() -> None:
            while os.read(read_fd, 4096):  # every request made so far: one reload
                try:
                    self.reload()
                except Exception as exc:  # the thread must outlive one failed reload
                    log.error("orgs file %s not reloaded: %s", self.path, exc, exc_info=exc)

        threading.Thread(target=run, name="sourcebook-orgs-reload", daemon=True).start()

    def _tenant(self, spec: OrgSpec) -> _Tenant:
        from answer.serving.http_api import create_app
        from answer.serving.tools import Tools

        tools = Tools(OrgWorkspace(spec, self.env, self.settings))
        tools.push_limits = spec.limits
        tools.hidden_roots = (spec.index_root,)  # never shown to the organisation (tool_contracts.hide_roots)
        tools.long_lived = True  # a server: every repository it opens ranks in memory
        app = create_app(tools, token=None, max_body_bytes=self.max_body_bytes, serve_wiki=False,
                         vouched=True)
        return _Tenant(spec, tools, app, *self._mcp_app(tools))

    def _mcp_app(self, tools: Tools) -> tuple[ASGIApp, StreamableHTTPSessionManager]:
        from answer.serving.http_api import Guard
        from answer.serving.mcp_server import create_server

        server = create_server(tools)
        inner = server.streamable_http_app(stateless_http=True, host=self.host)
        # the router vouched for the token; the guard still caps the body as the HTTP API's does
        return Guard(inner, None, self.max_body_bytes, vouched=True), server.session_manager

    def org_for(self, authorization: bytes) -> str | None:
        """The organisation a `Bearer <token>` header selects, or None. Every configured hash is compared,
        in constant time, whatever matched: the time taken says nothing about which or how many."""
        scheme, _, value = authorization.partition(b" ")
        value = value.strip()
        if scheme.lower() != b"bearer" or not value:
            return None
        digest = hashlib.sha256(value).digest()
        found = None
        for expected, name in self._hashes:
            if hmac.compare_digest(digest, expected):
                found = name
        return found

    def tenant(self, name: str) -> _Tenant:
        return self._tenants[name]

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Hold a task group open for the server's life: each organisation's MCP session manager runs in
        it (a manager's task group must be entered and left by one task, never by a request's)."""
        async with anyio.create_task_group() as group:
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    self._task_group = group
                    self._mcp_lock = anyio.Lock()
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    self._task_group = None
                    group.cancel_scope.cancel()
                    break
        await send({"type": "lifespan.shutdown.complete"})

    async def _run_mcp(self, tenant: _Tenant, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        with anyio.CancelScope() as scope:
            async with tenant.mcp_manager.run():
                tenant.mcp_scope = scope
                task_status.started()
                await anyio.sleep_forever()

    async def _mcp_ready(self, tenant: _Tenant) -> bool:
        """Start the organisation's MCP session manager on its first /mcp request (an organisation added
        by a reload gets one too); stop those of organisations a reload replaced."""
        if self._task_group is None or self._mcp_lock is None:
            return False  # no lifespan (a server that never started one): no MCP
        async with self._mcp_lock:
            retired, self._retired = self._retired, []
            for old in retired:
                if old.mcp_scope is not None:
                    old.mcp_scope.cancel()
            if tenant.mcp_scope is None:
                await self._task_group.start(self._run_mcp, tenant)
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from answer.serving.http_api import send_json

        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = dict(scope.get("headers") or [])
        name = self.org_for(headers.get(b"authorization", b""))
        tenant = self._tenants.get(name) if name is not None else None
        if tenant is None:
            await send_json(send, 401, {"error": "Unauthorized", "message": "missing or wrong bearer token"},
                            extra=[(b"www-authenticate", b"Bearer")])
            return
        path = scope.get("path") or ""
        if path == "/health":  # never queued: it says the server is alive whatever one organisation does
            await tenant.app(scope, receive, send)
            return
        limiter = self._limiter(tenant)
        if tenant.waiting >= MAX_WAITING:
            await send_json(send, 429, {"error": "TooManyRequests",
                                         "message": f"more than {tenant.spec.max_concurrent + MAX_WAITING} "
                                                    "requests of this organisation at once: retry later"},
                             extra=[(b"retry-after", b"1")])
            return
        tenant.waiting += 1
        try:
            await limiter.acquire()
        finally:
            tenant.waiting -= 1
        try:
            if path == "/mcp" or path.startswith("/mcp/"):
                if not await self._mcp_ready(tenant):
                    await send_json(send, 503, {"error": "Unavailable", "message": "MCP is not running"})
                    return
                await tenant.mcp(scope, receive, send)
                return
            await tenant.app(scope, receive, send)
        finally:
            limiter.release()

    def _limiter(self, tenant: _Tenant) -> anyio.CapacityLimiter:
        """The organisation's limiter (made in the event loop, on its first request), and the shared thread
        pool grown to hold every organisation's limit plus SPARE_THREADS."""
        if tenant.limiter is None:
            import anyio.to_thread

            tenant.limiter = anyio.CapacityLimiter(tenant.spec.max_concurrent)
            pool = anyio.to_thread.current_default_thread_limiter()
            wanted = sum(t.spec.max_concurrent for t in self._tenants.values()) + SPARE_THREADS
            pool.total_tokens = max(pool.total_tokens, wanted)
        return tenant.limiter
