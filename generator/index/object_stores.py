"""Per-root object-store settings and outage breakers: what one process knows about the stores it reads.

Scopes: `serve --orgs` registers each organisation's index root with that organisation's own storage options
(answer/serving/orgs.py resolves them from the server's environment); every connection to a URI under a
root is
made with that root's options (generator/index/store.py: storage_options), and roots never overlap, so one
organisation's databases are opened with its settings only. Registered options take precedence over the
store's standard environment (AWS_* and the like), which LanceDB still reads for keys a scope leaves out.

Breakers: a reader's call that fails because the store cannot be reached (connection refused, timed out,
DNS) opens the breaker of its root (a registered scope, else the bucket) for OPEN_S seconds. Meanwhile
readers of that root fail at once with StoreUnavailable (an OSError: every reader reports it as an outage,
degraded, never "not indexed"), instead of each waiting out the store client's retries (seconds a call);
a background probe re-tries the root every PROBE_S and closes the breaker as soon as the store answers,
so recovery needs no request to pay for the probe.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

OPEN_S = 30.0  # how long a breaker stays open without a successful probe (probes close it sooner)
PROBE_S = 0.5  # between background probes of an open breaker's root
# the transport failures of object_store / reqwest / hyper (not a missing table, not a denied key)
_UNREACHABLE = re.compile(r"error sending request|connect(ion)? error|connection refused|timed out|"
                          r"dns error|connection reset|broken pipe|operation timed out", re.IGNORECASE)

_scopes: dict[str, dict[str, str]] = {}  # root (no trailing slash) -> its storage options
_lock = threading.Lock()


def set_scopes(scopes: Mapping[str, Mapping[str, str]]) -> None:
    """Replace every registered root's storage options (a reload passes the whole set)."""
    fresh = {root.rstrip("/"): dict(options) for root, options in scopes.items()}
    with _lock:
        _scopes.clear()
        _scopes.update(fresh)


def _root_of(uri: str) -> str | None:
    uri = uri.rstrip("/")
    with _lock:
        roots = list(_scopes)
    for root in roots:
        if uri == root or uri.startswith(root + "/"):
            return root
    return None


def scoped_options(uri: str) -> dict[str, str]:
    """The storage options registered for the root holding `uri` ({} when none does)."""
    root = _root_of(uri)
    with _lock:
        return dict(_scopes.get(root, {})) if root is not None else {}


def breaker_key(uri: str) -> str:
    """The breaker a URI's reads share: its registered root, else its bucket (scheme://bucket)."""
    root = _root_of(uri)
    if root is not None:
        return root
    scheme, _, rest = uri.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


class StoreUnavailable(OSError):
    """The object store of a root is known to be unreachable right now: failed at once, without a request."""


def unreachable(exc: BaseException) -> bool:
    """Whether `exc` says the store could not be reached at all (as opposed to a missing or denied object)."""
    return isinstance(exc, StoreUnavailable) or bool(_UNREACHABLE.search(str(exc)))


@dataclass
class _Breaker:
    key: str
    probe: Callable[[], object]
    opened_at: float = 0.0
    reason: str = ""
    closed: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.closed.set()


_breakers: dict[str, _Breaker] = {}


def _probe_loop(breaker: _Breaker) -> None:
    while not breaker.closed.is_set():
        time.sleep(PROBE_S)
        try:
            breaker.probe()
        except Exception as exc:  # noqa: BLE001 - any answer but "unreachable" means the store is back
            if unreachable(exc) and time.monotonic() - breaker.opened_at < OPEN_S:
                continue
        # it answered (a refusal or a missing object is an answer too), or OPEN_S passed: the next read
        # tries the store itself, and opens the breaker again if it is still down
        log.info("object store %s: reads go to the store again", breaker.key)
        breaker.closed.set()


def _trip(key: str, exc: BaseException, probe: Callable[[], object]) -> None:
    with _lock:
        breaker = _breakers.get(key)
        if breaker is None:
            breaker = _breakers[key] = _Breaker(key, probe)
        if not breaker.closed.is_set():
            return
        breaker.probe, breaker.opened_at, breaker.reason = probe, time.monotonic(), str(exc)[:300]
        breaker.closed.clear()
    log.warning("object store %s unreachable, failing its reads at once until it answers: %s", key,
                str(exc)[:300])
    threading.Thread(target=_probe_loop, args=(breaker,), name=f"store-probe {key}", daemon=True).start()


def check(uri: str) -> None:
    """Raise StoreUnavailable when the breaker of `uri`'s root is open (a no-op for a local path)."""
    if "://" not in uri:
        return
    breaker = _breakers.get(breaker_key(uri))
    if breaker is not None and not breaker.closed.is_set():
        raise StoreUnavailable(f"the object store of {breaker.key} is unreachable ({breaker.reason}); "
                               "its reads fail at once until a background probe reaches it again")


@contextmanager
def guarded(uri: str, probe: Callable[[], object]) -> Iterator[None]:
    """Run a read of `uri` behind its root's breaker: refused at once while open; a failure to reach the
    store opens it (and starts `probe`, a cheap read of the same store, in the background)."""
    check(uri)
    try:
        yield
    except Exception as exc:
        if "://" in uri and unreachable(exc) and not isinstance(exc, StoreUnavailable):
            _trip(breaker_key(uri), exc, probe)
        raise


def call(uri: str, probe: Callable[[], object], fn: Callable[[], T]) -> T:
    """`fn()` behind `uri`'s breaker (see guarded)."""
    with guarded(uri, probe):
        return fn()
