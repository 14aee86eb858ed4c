"""CPU-bound build work spread over the cores: `ordered_map(fn, items, processes)` is `map(fn, items)` whose
items are shared between this process and `processes - 1` forked workers, results in order.

The file pages of a 12,000-file repository take a minute of CPU to render (syntax highlighting, reST, the
templates) and the build ran them on one core of two. Workers are forked, so `fn` and everything it reads
(the facts, the symbol index, the plan) are inherited, not pickled: only an item goes out and a result comes
back. This process renders too whenever the workers have enough queued, so `processes` counts it (one process
is plain `map`, and so is a list too short to be worth a fork). Items are taken from `items` lazily, in this
thread: a generator that asks a writer (threads, the LLM) is consumed as `map` would.

A worker's log lines travel back with its result and are logged here (same logger, level and message) when
the result is taken: a forked child must not write to a terminal the parent's progress bar is drawing. A
worker that dies (killed, out of memory) fails the build with a SourcebookError, never a hang.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from sourcebook.errors import SourcebookError

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

MIN_ITEMS_PER_PROCESS = 32  # fewer, and a fork (tens of ms, a copy of what a worker touches) is not worth it
# items a worker has queued before this process takes the next one itself: deep enough that a worker does
# not run dry while this process renders a long item (a 300 kB file) or does its own serial work
QUEUED_PER_WORKER = 16
# results held back in order, a worker: a long item in a worker holds this process back only after so many
# (seconds of short items)
WINDOW_PER_WORKER = 1024
LogLine = tuple[str, int, str]  # logger name, level, message


class WorkerError(SourcebookError):
    """A worker process ended without finishing its item (killed, or out of memory)."""


class _Inherited:
    """What a forked worker finds: the function to run (set just before the fork) and its captured lines."""

    fn: Callable[[Any], Any] | None = None
    lines: list[LogLine] | None = None


_here = _Inherited()


class _Capture(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        if _here.lines is not None:
            _here.lines.append((record.name, record.levelno, record.getMessage()))


def ordered_map(fn: Callable[[T], R], items: Iterable[T], processes: int, *,
                min_items: int = MIN_ITEMS_PER_PROCESS, expected: int | None = None,
                heavy: Callable[[T], bool] | None = None) -> Iterator[R]:
    """`fn` over `items`, in order, in up to `processes` processes (this one included).

    `expected`: how many items there are, when `items` is an iterator; below `min_items` per process no
    worker is forked. `fn` may be a closure: the workers inherit it. `heavy(item)`: an item this process
    never takes itself (a page of a 400 kB changelog takes a second or two): a worker gets it however much
    it has queued, so the workers never run dry while this process is on one long item."""
    count = expected if expected is not None else len(items) if isinstance(items, (list, tuple)) else 0
    workers = min(processes - 1, count // max(1, min_items) - 1)
    if workers < 1:
        yield from map(fn, items)
        return
    yield from _fan_out(fn, items, workers, heavy)


def _fan_out(fn: Callable[[T], R], items: Iterable[T], workers: int,
             heavy: Callable[[T], bool] | None) -> Iterator[R]:
    log.info("spreading the work over %d processes (this one and %d forked)", workers + 1, workers)
    _here.fn = fn
    gc.freeze()  # what exists now stays shared with the workers: no collection touches (and copies) it
    pool = _pool(workers)
    try:
        yield from _ordered(pool, workers, fn, lambda item: item, items, heavy=heavy)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        gc.unfreeze()
        _here.fn = None


def _pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=_worker_started, initargs=(os.getpid(),))


def _ordered(pool: ProcessPoolExecutor, workers: int, here: Callable[[Any], Any], sent: Callable[[Any], Any],
             items: Iterable[Any], *, heavy: Callable[[Any], bool] | None = None) -> Iterator[Any]:
    """`here(item)` for each item in order, computed by the pool's workers (given `sent(item)`) or, when
    they have enough queued and the item is not `heavy`, in this process."""
    # results in item order: a future (a worker's) or a value (computed here)
    pending: deque[tuple[Future[tuple[Any, list[LogLine]]] | None, Any]] = deque()
    finished: list[None] = []  # one entry a worker's finished item (appended by the pool's thread)
    submitted = 0
    window = WINDOW_PER_WORKER * workers
    try:
        for item in items:
            if submitted - len(finished) < workers * QUEUED_PER_WORKER or (heavy is not None and heavy(item)):
                future = pool.submit(_run, sent(item))
                future.add_done_callback(lambda _future: finished.append(None))
                submitted += 1
                pending.append((future, None))
            else:  # the workers are busy: this process takes this item
                pending.append((None, here(item)))
            while pending and (pending[0][0] is None or pending[0][0].done() or len(pending) > window):
                yield _result(pending.popleft())
        while pending:
            yield _result(pending.popleft())
    finally:
        for waiting, _ in pending:
            if waiting is not None:
                waiting.cancel()


class Workers:
    """Processes forked once, when made, for several ordered maps: `map(job, items)` is
    `map(jobs[job], items)` spread like `ordered_map`. For work that must fork before something a child
    must not inherit exists (the index step forks before LanceDB is imported: its runtime is not fork-safe),
    so every job is named at the fork, and an item carries what happened after it. One process (or a
    `map` of too few items) runs here, as `map`. A context manager: leaving it ends the workers."""

    def __init__(self, jobs: Mapping[str, Callable[[Any], Any]], processes: int) -> None:
        self.jobs = dict(jobs)
        self.workers = max(0, processes - 1)
        self._pool: ProcessPoolExecutor | None = None
        if self.workers:
            log.info("spreading the work over %d processes (this one and %d forked)", processes, self.workers)
            _here.fn = self._dispatch
            gc.freeze()
            self._pool = _pool(self.workers)
            self._pool.submit(_run, None).result()  # the fork context starts every worker at a first submit

    def _dispatch(self, item: tuple[str, Any] | None) -> Any:
        return None if item is None else self.jobs[item[0]](item[1])

    def map(self, job: str, items: Iterable[Any], *, expected: int | None = None,
            min_items: int = MIN_ITEMS_PER_PROCESS) -> Iterator[Any]:
        """`jobs[job]` over `items`, in order; in this process alone below `min_items` items a process."""
        fn = self.jobs[job]
        count = expected if expected is not None else len(items) if isinstance(items, (list, tuple)) else 0
        if self._pool is None or count < 2 * max(1, min_items):
            yield from map(fn, items)
            return
        yield from _ordered(self._pool, self.workers, fn, lambda item: (job, item), items)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
            gc.unfreeze()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _result(entry: tuple[Future[tuple[Any, list[LogLine]]] | None, Any]) -> Any:
    future, value = entry
    if future is None:
        return value
    try:
        value, lines = future.result()
    except BrokenProcessPool as exc:
        raise WorkerError("a worker process ended before finishing its pages (killed, or out of memory?); "
                          "run again, or with --site-workers 1") from exc
    for name, level, message in lines:
        logging.getLogger(name).log(level, "%s", message)
    return value


def _run(item: Any) -> tuple[Any, list[LogLine]]:
    """In a worker: `fn(item)` and the lines it logged."""
    assert _here.fn is not None
    _here.lines = []
    try:
        return _here.fn(item), _here.lines
    finally:
        _here.lines = None


def _worker_started(parent: int) -> None:
    # a worker writes nothing to the terminal: its log lines go back with its results
    root = logging.getLogger()
    root.handlers[:] = [_Capture()]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the build's to handle; it shuts the pool down
    die_with_parent(parent)


def die_with_parent(parent: int) -> None:
    """Make this forked worker die with `parent`: a killed or timed-out build must not leave workers behind
    (Linux; elsewhere the pool's pipes end them when the parent exits)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)
