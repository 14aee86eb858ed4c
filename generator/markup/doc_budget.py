"""A CPU-time budget for rendering one of the repository's documents (generator/markup/md_html.py,
generator/markup/rst.py).

Python-Markdown and docutils are pure Python, and some of their costs grow with the square of a hostile
input: a run of 50,000 `[` (each one looks for its closing bracket), thousands of headings with the same words
(each new id is tried against the ones before), lists or quotes nested thousands deep. Within the size the
scan accepts (a megabyte) such a document held a build for hours. Under `cpu_budget` the rendering stops
with `RenderBudgetExceeded` after CPU_SECONDS of this process's CPU time (not wall time: a loaded machine
does not cut a document short), and the renderer shows the document as text instead, as it does for any
document it cannot render. A real document takes a small fraction of the budget (docs/performance.md).

The budget is a CPU-time interval timer (ITIMER_PROF: user and system time), so it needs the main thread
(where Python runs signal handlers): the build's, or a forked worker's. Elsewhere (a server's thread), and
while another budget or user of that timer is running, the rendering runs without one. A single C call (a
regular expression's one search) is not interrupted: it ends first.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CPU_SECONDS = 5.0
REPEAT_SECONDS = 0.1


class RenderBudgetExceeded(BaseException):
    """A document took more than its CPU budget to render. A BaseException, as KeyboardInterrupt is: the
    renderers' own `except Exception` (superfences falls back to plain code on any error in a highlighter)
    must not swallow it; the timer fires again every REPEAT_SECONDS until the block is left, in case one
    does anyway."""


@contextmanager
def cpu_budget(seconds: float = CPU_SECONDS) -> Iterator[None]:
    """Raises RenderBudgetExceeded in the block once it has used `seconds` of CPU time (where a budget can be
    kept, see above)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getitimer(signal.ITIMER_PROF)[0] > 0:
        yield
        return
    armed = [True]

    def over(_signum: int, _frame: Any) -> None:
        if armed[0]:
            raise RenderBudgetExceeded(f"over {seconds:g} s of CPU time")

    previous = signal.signal(signal.SIGPROF, over)
    signal.setitimer(signal.ITIMER_PROF, seconds, REPEAT_SECONDS)
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
