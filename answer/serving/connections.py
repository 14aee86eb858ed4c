"""Bounds on connections that no request handler ever sees: slow or half-sent requests, and floods of them.

uvicorn's h11 protocol waits for a request's headers for ever and accepts connections until the process runs
out of file descriptors; a client sending a byte now and then (slowloris) held 21,000 connections, and then
every other client timed out. `BoundedH11Protocol` adds, per connection:

- a header deadline: a request's headers (the first request's, and each next one on a kept-alive connection)
  must be complete within HEADER_TIMEOUT_S of the connection opening or the previous response ending,
  however slowly they trickle in; otherwise the connection is closed;
- a body idle timeout: while a request body is being received, a gap of BODY_IDLE_TIMEOUT_S without data
  closes the connection (the handler, which waits for the body, then sees a disconnect);
- a connection cap (`connection_cap`, below the process's file-descriptor limit): at the cap, the
  connection that has waited longest for its headers is closed to make room; when every connection is busy
  with a request, the new one is closed instead.

A handler working on a request (an /ask waiting for the model) is never timed out here: only waiting for the
client is. Idle keep-alive connections close after KEEP_ALIVE_S (uvicorn's own timer).

`RepeatFilter` keeps a flood from filling the log: the same message from the same logger is written at most
once per REPEAT_EVERY_S, with a count of the copies left out.
"""

from __future__ import annotations

import logging
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT_S = 10.0
BODY_IDLE_TIMEOUT_S = 30.0
KEEP_ALIVE_S = 5
REPEAT_EVERY_S = 10.0
# loggers that a flood of connections or requests writes to: uvicorn's, asyncio's (accept errors), ours
LIMITED_LOGGERS = ("uvicorn", "uvicorn.error", "asyncio", "answer.serving.http_api", "answer.serving.orgs")


def connection_cap() -> int:
    """At most half the process's file descriptors go to client connections: the rest are the index's files,
    the spooled pushes and the log."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(32, min(4096, soft // 2))


def server_options() -> dict[str, Any]:
    """uvicorn settings for every `sourcebook serve`: the bounded protocol and the keep-alive timeout."""
    return {"http": BoundedH11Protocol, "timeout_keep_alive": KEEP_ALIVE_S}


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header deadline, a body idle timeout and a connection cap."""

    header_timeout_s = HEADER_TIMEOUT_S
    body_idle_timeout_s = BODY_IDLE_TIMEOUT_S
    cap: int | None = None  # connection_cap(), read once per process

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        install_log_limits()
        self._timer: Any = None  # asyncio.TimerHandle of the running deadline
        self.waiting_since: float | None = None  # when this connection began waiting for a request's headers
        self._seen_cycle: Any = None  # the request whose headers were last seen complete

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._await_headers()
        cls = type(self)
        if cls.cap is None:
            cls.cap = connection_cap()
        if len(self.connections) > cls.cap:
            waiting = [c for c in self.connections
                       if isinstance(c, BoundedH11Protocol) and c is not self and c.waiting_since is not None]
            if waiting:
                min(waiting, key=lambda c: c.waiting_since or 0.0).close_now()
            else:
                self.close_now()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.transport.is_closing():
            self._cancel()
            return
        cycle = self.cycle
        if self.waiting_since is not None:
            if cycle is None or cycle is self._seen_cycle:
                return  # still reading headers: the deadline set when waiting began stands
            self._seen_cycle, self.waiting_since = cycle, None
        if self.conn.their_state is h11.SEND_BODY:
            self._arm(self.body_idle_timeout_s)  # re-armed by every chunk that arrives
        else:
            self._cancel()  # the request is whole: the handler's time is not bounded here

    def on_response_complete(self) -> None:
        # before uvicorn's: it may start a pipelined request, which handle_events must see as new
        self._await_headers()
        super().on_response_complete()

    def close_now(self) -> None:
        self._cancel()
        self.waiting_since = None
        if not self.transport.is_closing():
            self.transport.abort()

    def _await_headers(self) -> None:
        self.waiting_since = time.monotonic()
        self._arm(self.header_timeout_s)

    def _arm(self, delay: float) -> None:
        self._cancel()
        self._timer = self.loop.call_later(delay, self.close_now)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class RepeatFilter(logging.Filter):
    """Lets one record per (logger, message template) through every `every_s` seconds; the next one let
    through says how many were left out meanwhile."""

    def __init__(self, every_s: float = REPEAT_EVERY_S) -> None:
        super().__init__()
        self.every_s = every_s
        self._last: dict[tuple[str, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg)[:200])
        now = time.monotonic()
        at, dropped = self._last.get(key, (float("-inf"), 0))
        if now - at < self.every_s:
            self._last[key] = (at, dropped + 1)
            return False
        if len(self._last) > 1000:  # many distinct messages: forget the old ones rather than grow
            self._last.clear()
        self._last[key] = (now, 0)
        if dropped:
            record.msg = f"{record.msg} [{dropped} more like this in the previous {self.every_s:g} s]"
        return True


def install_log_limits() -> None:
    """Put one RepeatFilter on each of LIMITED_LOGGERS (once per process)."""
    for name in LIMITED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RepeatFilter) for f in logger.filters):
            logger.addFilter(RepeatFilter())
