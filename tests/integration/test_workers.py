"""ordered_map: map over items shared between this process and forked workers, in order, logs relayed."""

from __future__ import annotations

import logging
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from generator.build import build
from sourcebook import workers as workers_module
from sourcebook.config import load_config
from sourcebook.workers import StallError, WorkerError, Workers, chunked_map, fork_hazard, ordered_map


@pytest.fixture(autouse=True)
def _lance_loaded_by_other_tests_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other tests of this process load LanceDB, whose runtime (and its event-loop thread) forbids forking
    (workers.fork_hazard), and leave their loopback servers' request threads waiting on kept-alive
    connections. These tests of the fan-out fork anyway, as the suite always did: they use neither. Any
    other thread still stops a fork."""
    def hazard() -> str | None:
        others = [t.name for t in threading.enumerate() if t is not threading.current_thread()
                  and t.is_alive() and not t.name.startswith("LanceDB")
                  and not (t.daemon and "process_request_thread" in t.name)]
        return f"{len(others)} other thread(s) running ({', '.join(sorted(others))})" if others else None

    monkeypatch.setattr(workers_module, "fork_hazard", hazard)


def _slow_square(n: int) -> tuple[int, int]:
    total = sum(k * k for k in range(20_000))  # a few ms of CPU, so the workers take a share
    return n * n + 0 * total, os.getpid()


def test_results_come_in_order_from_this_process_and_the_workers() -> None:
    results = list(ordered_map(_slow_square, list(range(300)), 2, min_items=10))
    assert [r for r, _ in results] == [n * n for n in range(300)]
    pids = {pid for _, pid in results}
    assert len(pids) >= 2  # a forked worker took items


def _sigterm_handler(n: int) -> tuple[str, int]:
    handler = signal.getsignal(signal.SIGTERM)
    return ("default" if handler == signal.SIG_DFL else repr(handler)), os.getpid()


def test_a_worker_ends_quietly_on_sigterm_whatever_handler_the_build_set() -> None:
    """The build raises on SIGTERM so its `finally` blocks run; a worker must not inherit that: the pool
    terminates idle workers itself, and each would print a traceback of the raise."""

    def build_handler(signum: int, frame: types.FrameType | None) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, build_handler)
    try:
        results = list(ordered_map(_sigterm_handler, list(range(40)), 2, min_items=10, heavy=lambda n: True))
    finally:
        signal.signal(signal.SIGTERM, before)
    in_workers = {handler for handler, pid in results if pid != os.getpid()}
    assert in_workers == {"default"}


def test_heavy_items_go_to_a_worker_however_much_it_has_queued() -> None:
    """This process takes an item only when the workers have enough queued, and never a heavy one: a long
    item here would leave the workers idle."""
    results = list(ordered_map(_slow_square, list(range(300)), 2, min_items=10, heavy=lambda n: n % 7 == 0))
    assert [r for r, _ in results] == [n * n for n in range(300)]
    assert {pid for n, (_, pid) in enumerate(results) if n % 7 == 0} - {os.getpid()}
    assert os.getpid() not in {pid for n, (_, pid) in enumerate(results) if n % 7 == 0}
    assert os.getpid() in {pid for _, pid in results}  # the light ones shared as before


def test_one_process_or_few_items_fork_nothing() -> None:
    assert {pid for _, pid in ordered_map(_slow_square, list(range(300)), 1, min_items=10)} == {os.getpid()}
    assert {pid for _, pid in ordered_map(_slow_square, list(range(15)), 4, min_items=10)} == {os.getpid()}


def test_items_are_taken_lazily_and_a_closure_is_inherited() -> None:
    taken: list[int] = []
    offset = 1000  # read by the closure in the workers: inherited at the fork, never pickled

    def items() -> Iterator[int]:
        for n in range(2000):
            taken.append(n)
            yield n

    results = ordered_map(lambda n: n + offset, items(), 2, min_items=10, expected=2000)
    assert next(results) == 1000
    assert len(taken) < 2000  # not all drawn for the first result (at most a window of results ahead)
    assert list(results) == [n + 1000 for n in range(1, 2000)]


def _noisy(n: int) -> int:
    logging.getLogger("generator.noisy").warning("item %d: %s", n, "odd" if n % 2 else "even")
    return n


def test_worker_log_lines_are_logged_here_with_logger_and_level(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        assert list(ordered_map(_noisy, list(range(100)), 2, min_items=10)) == list(range(100))
    lines = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "generator.noisy"]
    # each once; a worker's when its result is taken, this process's own as they happen
    assert sorted(lines) == sorted((logging.WARNING, f"item {n}: {'odd' if n % 2 else 'even'}")
                                   for n in range(100))
    assert any("spreading the work over 2 processes" in r.getMessage() for r in caplog.records)


def _fails_at_42(n: int) -> int:
    if n == 42:
        raise ValueError(f"bad item {n}")
    return n


def test_an_error_in_a_worker_is_raised_here() -> None:
    # item 42 raises here (the error itself) or in a worker (one WorkerError naming the item and the cause)
    with pytest.raises((ValueError, WorkerError), match="bad item 42"):
        list(ordered_map(_fails_at_42, list(range(200)), 2, min_items=10))


def _fails_in_a_worker(parent: int) -> Callable[[int], int]:
    def fn(n: int) -> int:
        if os.getpid() != parent and n % 5 == 0:
            raise ValueError(f"bad item {n}")
        return n
    return fn


def test_an_error_in_a_worker_names_the_item_and_the_cause_in_one_line() -> None:
    with pytest.raises(WorkerError) as caught:
        list(ordered_map(_fails_in_a_worker(os.getpid()), list(range(200)), 2, min_items=10,
                         describe=lambda n: f"the page of item {n}"))
    message = str(caught.value)
    assert re.fullmatch(r"the page of item \d+: ValueError: bad item \d+", message), message
    assert "\n" not in message


def _sleeps_in_a_worker(parent: int) -> Callable[[int], int]:
    def fn(n: int) -> int:
        if os.getpid() != parent:
            time.sleep(60)  # a hung render (or a lock never released)
        return n
    return fn


def test_a_worker_that_finishes_nothing_fails_the_stage_within_the_stall_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCEBOOK_STALL_SECONDS", "1.5")
    started = time.monotonic()
    with pytest.raises(StallError, match=r"item \d+: no worker finished anything for 2 s"):
        list(ordered_map(_sleeps_in_a_worker(os.getpid()), list(range(200)), 2, min_items=10,
                         describe=lambda n: f"item {n}"))
    assert time.monotonic() - started < 30  # the sleeping worker was killed, not waited for


def test_no_fork_while_another_thread_runs(caplog: pytest.LogCaptureFixture) -> None:
    """A thread inside subprocess at a fork hangs the parent for ever (its exec-status pipe is inherited):
    with another thread alive, the work is done here."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="asks-the-provider")
    other.start()
    try:
        assert fork_hazard() is not None  # the real check sees it (among whatever else runs here)
        with caplog.at_level(logging.INFO, logger="sourcebook.workers"):
            pids = {pid for _, pid in ordered_map(_slow_square, list(range(300)), 2, min_items=10)}
    finally:
        stop.set()
        other.join()
    assert pids == {os.getpid()}
    assert "not forking workers" in caplog.text


def test_no_fork_once_lance_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers_module, "fork_hazard", fork_hazard)  # the real check, Lance included
    monkeypatch.setitem(sys.modules, "lance", types.ModuleType("lance"))
    assert fork_hazard() is not None
    assert {pid for _, pid in ordered_map(_slow_square, list(range(300)), 2, min_items=10)} == {os.getpid()}
    with Workers({"square": _slow_square}, 2) as workers:
        assert workers.workers == 0
        assert {pid for _, pid in workers.map("square", list(range(300)))} == {os.getpid()}


def test_workers_are_forked_before_the_first_item_is_drawn() -> None:
    """Items may come from a generator that starts threads (a model writer's): the workers exist by then,
    so the fork never meets those threads."""
    seen: list[int] = []

    def items() -> Iterator[int]:
        seen.append(len(multiprocessing.active_children()))
        pool = threading.Thread(target=lambda: None)
        pool.start()
        pool.join()
        yield from range(300)

    results = list(ordered_map(_slow_square, items(), 2, min_items=10, expected=300))
    assert [r for r, _ in results] == [n * n for n in range(300)]
    assert seen == [1]  # the worker was running when the first item was drawn
    assert len({pid for _, pid in results}) == 2


def _square_or_fail(n: int) -> int:
    if n == 77:
        raise KeyError("no page 77")
    return n * n


def test_chunked_map_runs_every_item_in_the_workers_in_order_and_names_a_failure() -> None:
    def started(parent: int) -> None:
        return None

    assert list(chunked_map(_pid_square, list(range(100)), 2, chunk=4, initializer=started)) == [
        (n * n, True) for n in range(100)]
    with pytest.raises(WorkerError, match=r"page 77: KeyError: 'no page 77'"):
        list(chunked_map(_square_or_fail, list(range(100)), 2, chunk=4, initializer=started,
                         describe=lambda n: f"page {n}"))


_PARENT = os.getpid()


def _pid_square(n: int) -> tuple[int, bool]:
    return n * n, os.getpid() != _PARENT


def _dies_in_a_worker(parent: int) -> Callable[[int], int]:
    def fn(n: int) -> int:
        if os.getpid() != parent:
            os._exit(3)  # killed (as the out-of-memory killer would): the pool breaks
        return n
    return fn


def test_a_worker_that_dies_fails_with_one_clear_error_not_a_hang() -> None:
    with pytest.raises(WorkerError, match="worker process ended"):
        list(ordered_map(_dies_in_a_worker(os.getpid()), list(range(200)), 2, min_items=10))


def _many_modules() -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {"README.md": "# Many\n\nMany small modules.\n"}
    for n in range(90):
        k = (n + 1) % 90
        files[f"pkg/m{n:02d}.py"] = (f'"""Module {n}."""\nfrom pkg.m{k:02d} import f{k}\n\n\n'
                                     f'def f{n}(x: int) -> int:\n    """Add {n}; see `f{k}`."""\n'
                                     f"    return x + {n}\n")
    for n in range(4):  # reST documents: rendered through the document cache (its counts come back too)
        files[f"docs/d{n}.rst"] = f"Doc {n}\n=====\n\nSee :func:`pkg.m0{n}.f{n}` and `m <../pkg/m01.py>`_.\n"
    return files


def _same_outputs(one: Path, two: Path) -> None:
    """The same docs/ files, byte for byte, and the same page state."""
    mine, theirs = (sorted(p.relative_to(o) for p in (o / "docs").rglob("*") if p.is_file())
                    for o in (one, two))
    assert mine == theirs
    assert len(mine) > 90
    for rel in mine:
        assert (one / rel).read_bytes() == (two / rel).read_bytes(), rel
    assert (one / "state/pages.json").read_bytes() == (two / "state/pages.json").read_bytes()


def test_a_build_in_two_processes_writes_the_same_pages_state_and_facts(
        make_repo: Callable[..., Path], caplog: pytest.LogCaptureFixture) -> None:
    root = make_repo(_many_modules())
    outs = {}
    for processes in (1, 2):
        out = root.parent / f"out{processes}"
        caplog.clear()
        with caplog.at_level(logging.INFO):
            build(load_config(root, overrides={"out_dir": str(out)}), site=False, index=False,
                  site_workers=processes)
        forked = [r for r in caplog.records if "spreading the work" in r.getMessage()]
        assert len(forked) == (2 if processes > 1 else 0)  # the parse, then the file pages
        rendered = "documents (reST, Markdown): 5 rendered, 0 from the cache"
        assert any(rendered in r.getMessage() for r in caplog.records)
        outs[processes] = out
    _same_outputs(outs[1], outs[2])
    assert (outs[1] / "cache/facts.json").read_bytes() == (outs[2] / "cache/facts.json").read_bytes()


def test_extractive_drafts_made_in_the_render_workers_equal_drafts_made_here(
        make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The extractive writer's file drafts are made where each page is rendered (pages.drafts_where_rendered),
    a forked worker too; any other writer's are made in this process. Same pages, same state."""
    from generator.pages.writer import ExtractiveWriter

    class HereOnly(ExtractiveWriter):  # the same prose and id, drafted by this process as a model's would be
        pass

    here: list[str] = []  # file drafts made in this process
    drafted = ExtractiveWriter.file_page
    monkeypatch.setattr(ExtractiveWriter, "file_page",
                        lambda self, ctx: here.append(ctx.page_id) or drafted(self, ctx))
    root = make_repo(_many_modules())
    outs, counts = {}, {}
    for writer in (ExtractiveWriter(), HereOnly()):
        here.clear()
        out = root.parent / f"out-{type(writer).__name__}"
        build(load_config(root, overrides={"out_dir": str(out)}), writer=writer, site=False, index=False,
              site_workers=2)
        outs[type(writer)], counts[type(writer)] = out, len(set(here))
    _same_outputs(outs[ExtractiveWriter], outs[HereOnly])
    assert counts[HereOnly] >= 95  # every file page's draft (90 modules, 4 documents, the README)
    assert 0 < counts[ExtractiveWriter] < counts[HereOnly]  # the worker drafted the rest


# -- Workers: forked once, for several ordered maps ----------------------------------------------------------


def test_workers_fork_once_and_run_the_jobs_named_then_in_order() -> None:
    from sourcebook.workers import Workers

    state = {"offset": 1000}  # what the jobs read: as it was at the fork, in the workers

    def add(n: int) -> tuple[int, int]:
        return _slow_square(n)[0] + state["offset"], os.getpid()

    with Workers({"add": add, "square": _slow_square}, 2) as workers:
        assert workers.workers == 1
        state["offset"] = 5  # after the fork: only this process sees it
        added = list(workers.map("add", list(range(200)), min_items=10))
        squared = list(workers.map("square", list(range(200)), min_items=10))
    assert [r for r, _ in squared] == [n * n for n in range(200)]
    forked = {pid for _, pid in added + squared} - {os.getpid()}
    assert len(forked) == 1  # both maps ran in the same forked worker (and here)
    assert {r - n * n for n, (r, pid) in enumerate(added) if pid in forked} == {1000}
    assert {r - n * n for n, (r, pid) in enumerate(added) if pid not in forked} <= {5}


def test_workers_of_one_process_or_few_items_run_here() -> None:
    from sourcebook.workers import Workers

    with Workers({"square": _slow_square}, 1) as alone:
        assert alone.workers == 0
        assert {pid for _, pid in alone.map("square", list(range(100)), min_items=1)} == {os.getpid()}
    with Workers({"square": _slow_square}, 2) as few:
        assert {pid for _, pid in few.map("square", list(range(15)), min_items=10)} == {os.getpid()}


def test_the_site_engine_dies_with_the_build_that_started_it(tmp_path: Path) -> None:
    """The engine is told the build's process (--parent): one whose parent is not that process is already
    orphaned and stops at once, and a started engine is killed with its build (PR_SET_PDEATHSIG): a killed
    build left it rendering on."""
    import subprocess
    import sys
    import time

    code_root = str(Path(__file__).resolve().parents[2])
    cmd = [sys.executable, "-m", "generator.site.material.engine", str(tmp_path / "missing.yml"),
           str(tmp_path / "site")]
    orphan = subprocess.run([*cmd, "--parent", "1"], cwd=code_root, capture_output=True, check=False,
                            timeout=60)
    assert orphan.returncode == 1
    assert not (tmp_path / "site").exists()
    # a parent that starts the engine's die-with rule and then a long sleep in its place is killed: its child
    # goes with it
    starter = ("import os, subprocess, sys, time\n"
               "child = subprocess.Popen([sys.executable, '-c', 'import os, sys, time\\n"
               "from sourcebook.workers import die_with_parent\\n"
               "die_with_parent(int(sys.argv[1]))\\nprint(os.getpid(), flush=True)\\ntime.sleep(120)', "
               "str(os.getpid())], stdout=subprocess.PIPE, text=True)\n"
               "print(child.stdout.readline().strip(), flush=True)\ntime.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, "-c", starter], cwd=code_root, stdout=subprocess.PIPE,
                              text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.kill()
    parent.wait(timeout=30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:  # gone, or a zombie its new parent has not reaped yet
            if Path(f"/proc/{child}/stat").read_text().split(")")[-1].split()[0] == "Z":
                break
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.05)
    else:
        os.kill(child, 9)
        raise AssertionError("the child outlived its killed parent")
