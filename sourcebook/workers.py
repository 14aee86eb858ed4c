"""CPU-bound build work spread over the cores: `ordered_map(fn, items, processes)` is `map(fn, items)` whose
items are shared between this process and `processes - 1` forked workers, results in order.

The file pages of a 12,000-file repository take long to render (syntax highlighting, reST, the
templates) and the build ran them on one core of two. Workers are forked, so `fn` and everything it reads
(the facts, the symbol index, the plan) are inherited, not pickled: only an item goes out and a result comes
back. This process renders too whenever the workers have enough queued, so `processes` counts it (one process
is plain `map`, and so is a list too short to be worth a fork). Items are taken from `items` lazily, in this
thread: a generator that asks a writer (threads, the LLM) is consumed as `map` would.

A worker's log lines travel back with its result and are logged here (same logger, level and message) when
the result is taken: a forked child must not write to a terminal the parent's progress bar is drawing. A
worker that dies (killed, out of memory) or raises fails the build with one SourcebookError naming the item
and the cause, and a worker that finishes nothing for `stall_seconds()` fails it too: never a traceback from a
child, never a hang.

Forking is safe only in a process where nothing else runs: a thread inside `subprocess` at the fork (the
openai client runs `uname -p` on its first request) leaves the child holding the write end of its exec-status
pipe, and the parent waits for ever; Lance's runtime is not fork-safe either. So workers are forked before any
item is drawn (a generator of items may start threads: a model writer's), and never while another Python
thread is alive or Lance is loaded (`fork_hazard`): the work then runs in this process, which is slower but
correct.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
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
# no result for this long from a worker (or from a model's page threads, generator/pages/stages.py) fails the
# stage: far beyond a page's CPU budget (generator/markup/doc_budget.py) and a provider's own timeout, so only
# a real hang trips it
STALL_SECONDS = 900.0
# modules whose runtimes do not survive a fork (their threads are gone in the child; a lock held at the fork
# hangs it), by the names they are imported under
_FORK_UNSAFE = ("lance", "lancedb")


class WorkerError(SourcebookError):
    """A worker process ended without finishing its item (killed, or out of memory)."""


class StallError(WorkerError):
    """No item finished for `stall_seconds()`: a hung worker, provider call or lock."""


def stall_seconds() -> float:
    """How long a stage may finish nothing before it fails (SOURCEBOOK_STALL_SECONDS, else STALL_SECONDS)."""
    from sourcebook.settings import current

    value = current().stall_seconds
    return value if value is not None and value > 0 else STALL_SECONDS


def fork_hazard() -> str | None:
    """Why forking this process now could hang or corrupt a child, or None when it is safe: another Python
    thread is alive (it may hold a lock or be inside subprocess at the fork), or a fork-unsafe runtime is
    loaded. Native pools that register fork handlers (OpenBLAS, tokenizers) are not counted."""
    others = [t.name for t in threading.enumerate() if t is not threading.current_thread() and t.is_alive()]
    if others:
        return f"{len(others)} other thread(s) running ({', '.join(sorted(others)[:3])})"
    loaded = [name for name in _FORK_UNSAFE if name in sys.modules]
    if loaded:
        return f"{loaded[0]} is loaded (not fork-safe)"
    return None


class _Failed:
    """What a worker returns for an item that raised: the cause as text (exceptions may not pickle)."""

    def __init__(self, exc: BaseException) -> None:
        self.cause = f"{type(exc).__name__}: {exc}"


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
                heavy: Callable[[T], bool] | None = None,
                describe: Callable[[T], str] = repr) -> Iterator[R]:
    """`fn` over `items`, in order, in up to `processes` processes (this one included).

    `expected`: how many items there are, when `items` is an iterator; below `min_items` per process no
    worker is forked. `fn` may be a closure: the workers inherit it. `heavy(item)`: an item this process
    never takes itself (a page of a 400 kB changelog is a long one): a worker gets it however much
    it has queued, so the workers never run dry while this process is on one long item. `describe(item)`
    names an item in an error (a worker that raised, died or hung on it)."""
    count = expected if expected is not None else len(items) if isinstance(items, (list, tuple)) else 0
    workers = min(processes - 1, count // max(1, min_items) - 1)
    hazard = fork_hazard() if workers >= 1 else None
    if hazard is not None:
        log.info("not forking workers (%s): this process does the work alone", hazard)
    if workers < 1 or hazard is not None:
        yield from map(fn, items)
        return
    yield from _fan_out(fn, items, workers, heavy, describe)


def _fan_out(fn: Callable[[T], R], items: Iterable[T], workers: int,
             heavy: Callable[[T], bool] | None, describe: Callable[[T], str]) -> Iterator[R]:
    log.info("spreading the work over %d processes (this one and %d forked)", workers + 1, workers)
    _here.fn = fn
    gc.freeze()  # what exists now stays shared with the workers: no collection touches (and copies) it
    pool, children = _started_pool(workers)  # before the first item: drawing one may start threads
    finished = False
    try:
        yield from _ordered(pool, workers, fn, lambda item: item, items, heavy=heavy, describe=describe)
        finished = True
    finally:
        _stop(pool, children, finished)
        gc.unfreeze()
        _here.fn = None


def _started_pool(workers: int, initializer: Callable[..., None] | None = None,
                  ) -> tuple[ProcessPoolExecutor, list[multiprocessing.process.BaseProcess]]:
    """A pool whose `workers` processes are all forked now (the fork context starts every worker at the
    first submit, which is made here and waited for), and those processes. `initializer(parent pid)` runs
    first in each (default: this module's, which captures the worker's log lines)."""
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=initializer or _worker_started, initargs=(os.getpid(),))
    try:
        pool.submit(_ready).result(timeout=stall_seconds())
    except (BrokenProcessPool, FutureTimeout) as exc:
        pool.shutdown(wait=False, cancel_futures=True)
        raise WorkerError(f"the worker processes did not start ({type(exc).__name__}); run again, or with "
                          "--site-workers 1") from exc
    return pool, [p for p in multiprocessing.active_children() if p not in before]


def _stop(pool: ProcessPoolExecutor, children: list[multiprocessing.process.BaseProcess],
          finished: bool) -> None:
    """End the pool: after all its work, wait for it; after an error or an interrupt, kill the workers now
    (an item a worker is on may take seconds, and nobody wants its result)."""
    if finished:
        pool.shutdown(wait=True, cancel_futures=True)
        return
    for child in children:
        if child.is_alive():
            child.kill()
    for child in children:
        child.join(timeout=5)
    # quick now the workers are gone; waited for, so its manager and feeder threads do not outlive the map
    pool.shutdown(wait=True)


def _ready() -> None:
    """The first job of every pool: returns once the workers are forked."""


def _ordered(pool: ProcessPoolExecutor, workers: int, here: Callable[[Any], Any], sent: Callable[[Any], Any],
             items: Iterable[Any], *, heavy: Callable[[Any], bool] | None = None,
             describe: Callable[[Any], str] = repr) -> Iterator[Any]:
    """`here(item)` for each item in order, computed by the pool's workers (given `sent(item)`) or, when
    they have enough queued and the item is not `heavy`, in this process."""
    # results in item order: (a worker's future, the item) or (None, the value computed here)
    pending: deque[tuple[Future[tuple[Any, list[LogLine]]] | None, Any]] = deque()
    finished: list[float] = []  # when each of the workers' items finished (appended by the pool's thread)
    submitted = 0
    window = WINDOW_PER_WORKER * workers
    try:
        for item in items:
            if submitted - len(finished) < workers * QUEUED_PER_WORKER or (heavy is not None and heavy(item)):
                future = pool.submit(_run, sent(item))
                future.add_done_callback(lambda _future: finished.append(time.monotonic()))
                submitted += 1
                pending.append((future, item))
            else:  # the workers are busy: this process takes this item
                pending.append((None, here(item)))
            while pending and (pending[0][0] is None or pending[0][0].done() or len(pending) > window):
                yield _result(pending.popleft(), finished, describe)
        while pending:
            yield _result(pending.popleft(), finished, describe)
    finally:
        # queued items are not cancelled here: the caller kills the workers (`_stop`), which fails them
        # all at once (cancelling first trips the pool's own clean-up: it sets an error on each)
        pending.clear()


def chunked_map(fn: Callable[[T], R], items: Sequence[T], workers: int, *, chunk: int,
                initializer: Callable[[int], None], describe: Callable[[T], str] = repr) -> Iterator[R]:
    """`fn` over `items`, in order, all in `workers` processes forked now (never in this one), `chunk` items
    a job: for a process that only collects (the site engine). The workers run `initializer(parent pid)`
    first and keep their own logging. The same safety as `ordered_map`: no fork while `fork_hazard()` (then
    this process does the work), a worker that raises, dies or stalls fails the map naming its item."""
    hazard = fork_hazard()
    if hazard is not None:
        log.info("not forking workers (%s): this process does the work alone", hazard)
        yield from map(fn, items)
        return
    _here.fn = fn
    gc.freeze()  # what exists now stays shared with the workers: no collection touches (and copies) it
    pool, children = _started_pool(workers, initializer)
    finished: list[float] = []
    done = False
    try:
        pending: deque[tuple[Future[Any], Any]] = deque()
        starts = iter(range(0, len(items), chunk))
        for start in starts:
            part = list(items[start:start + chunk])
            future = pool.submit(_run_chunk, part)
            future.add_done_callback(lambda _future: finished.append(time.monotonic()))
            pending.append((future, part))
            while len(pending) > workers * QUEUED_PER_WORKER or (pending and pending[0][0].done()):
                yield from _chunk_result(pending.popleft(), finished, describe)
        while pending:
            yield from _chunk_result(pending.popleft(), finished, describe)
        done = True
    finally:
        _stop(pool, children, done)
        gc.unfreeze()
        _here.fn = None


def _chunk_result(entry: tuple[Future[Any], Any], finished: list[float],
                  describe: Callable[[Any], str]) -> Iterator[Any]:
    future, part = entry
    results = _result((future, part), finished, lambda chunk: ", ".join(describe(i) for i in chunk[:3]))
    if isinstance(results, tuple):  # (index in the chunk, why): one item raised
        index, cause = results
        raise WorkerError(f"{describe(part[index])}: {cause}")
    yield from results


def _run_chunk(part: list[Any]) -> tuple[list[Any] | tuple[int, str], list[LogLine]]:
    """In a worker: `fn` over one chunk, or (the index of the item that raised, why); no log lines (the
    caller's initializer keeps the worker's own logging)."""
    assert _here.fn is not None
    out = []
    for n, item in enumerate(part):
        try:
            out.append(_here.fn(item))
        except Exception as exc:  # noqa: BLE001 - any failure is reported by the parent, naming the item
            return (n, f"{type(exc).__name__}: {exc}"), []
    return out, []


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
        self._children: list[multiprocessing.process.BaseProcess] = []
        hazard = fork_hazard() if self.workers else None
        if hazard is not None:
            log.info("not forking workers (%s): this process does the work alone", hazard)
            self.workers = 0
        if self.workers:
            log.info("spreading the work over %d processes (this one and %d forked)", processes, self.workers)
            _here.fn = self._dispatch
            gc.freeze()
            self._pool, self._children = _started_pool(self.workers)

    def _dispatch(self, item: tuple[str, Any]) -> Any:
        return self.jobs[item[0]](item[1])

    def map(self, job: str, items: Iterable[Any], *, expected: int | None = None,
            min_items: int = MIN_ITEMS_PER_PROCESS) -> Iterator[Any]:
        """`jobs[job]` over `items`, in order; in this process alone below `min_items` items a process."""
        fn = self.jobs[job]
        count = expected if expected is not None else len(items) if isinstance(items, (list, tuple)) else 0
        if self._pool is None or count < 2 * max(1, min_items):
            yield from map(fn, items)
            return
        yield from _ordered(self._pool, self.workers, fn, lambda item: (job, item), items,
                            describe=lambda item: f"{job} {describe(item)}")

    def close(self, *, finished: bool = True) -> None:
        if self._pool is not None:
            _stop(self._pool, self._children, finished)
            self._pool = None
            gc.unfreeze()
            _here.fn = None

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close(finished=kind is None)


def describe(item: Any) -> str:
    """A short name of an item for an error message."""
    text = repr(item)
    return text if len(text) <= 120 else text[:117] + "..."


def _result(entry: tuple[Future[tuple[Any, list[LogLine]]] | None, Any], finished: list[float],
            describe: Callable[[Any], str]) -> Any:
    future, value = entry
    if future is None:
        return value
    stall = stall_seconds()
    while True:
        try:
            result, lines = future.result(timeout=stall)
            break
        except FutureTimeout:
            # other items may have finished meanwhile (this one waits behind them): a stall is no progress
            if finished and time.monotonic() - finished[-1] < stall:
                continue
            raise StallError(f"{describe(value)}: no worker finished anything for {stall:.0f} s; stopped "
                             "(SOURCEBOOK_STALL_SECONDS sets the limit)") from None
        except BrokenProcessPool as exc:
            raise WorkerError(f"{describe(value)}: a worker process ended before finishing it (killed, or "
                              "out of memory?); run again, or with --site-workers 1") from exc
        except Exception as exc:  # the item or its result did not cross the process boundary (pickling)
            raise WorkerError(f"{describe(value)}: {type(exc).__name__}: {exc}") from exc
    for name, level, message in lines:
        logging.getLogger(name).log(level, "%s", message)
    if isinstance(result, _Failed):
        raise WorkerError(f"{describe(value)}: {result.cause}")
    return result


def _run(item: Any) -> tuple[Any, list[LogLine]]:
    """In a worker: `fn(item)` (or why it failed) and the lines it logged."""
    assert _here.fn is not None
    _here.lines = []
    try:
        return _here.fn(item), _here.lines
    except Exception as exc:  # noqa: BLE001 - any failure is reported by the parent, naming the item
        return _Failed(exc), _here.lines
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
    (Linux; elsewhere the pool's pipes end them when the parent exits). SIGTERM, too, ends it at once."""
    # the build's own SIGTERM handler (raise, so every `finally` runs) is the parent's: inherited here, it
    # turned the pool's terminate of its idle workers into tracebacks on the terminal (CPython's pool can
    # take a worker's normal exit at shutdown for a broken pool, and then terminates the others)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)
