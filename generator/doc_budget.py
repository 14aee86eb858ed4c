"""A CPU-time budget for rendering one of the repository's documents (generator/md_html.py, generator/rst.py).

Python-Markdown and docutils are pure Python, and some of their costs grow with the square of a hostile
input: a run of 50,000 `[` (each one looks for its closing bracket), thousands of headings with the same words
(each new id is tried against the ones before), lists or quotes nested thousands deep. Within the size the
scan accepts (a megabyte) such a document held a build for hours. Under `cpu_budget` the rendering stops
with `RenderBudgetExceeded` after CPU_SECONDS of this process's CPU time (not wall time: a loaded machine
does not cut a document short), and the renderer shows the document as text instead, as it does for any
document it cannot render. A real document takes milliseconds (flask's largest reST page: ~0.1 s).

The budget is a virtual-time interval timer, so it needs the main thread (where Python runs signal
handlers): the build's, or a forked worker's. Elsewhere (a server's thread), and while another budget or
user of that timer is running, the rendering runs without one.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CPU_SECONDS = 5.0


class RenderBudgetExceeded(Exception):
    """A document took more than its CPU budget to render."""


@contextmanager
def cpu_budget(seconds: float = CPU_SECONDS) -> Iterator[None]:
    """Raises RenderBudgetExceeded in the block once it has used `seconds` of CPU time (where a budget can be
    kept, see above)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getitimer(signal.ITIMER_VIRTUAL)[0] > 0:
        yield
        return
    armed = [True]

    def over(_signum: int, _frame: Any) -> None:
        if armed[0]:
            raise RenderBudgetExceeded(f"over {seconds:g} s of CPU time")

    previous = signal.signal(signal.SIGVTALRM, over)
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)
