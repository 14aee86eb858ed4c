"""The token and cost ledger of one run: every LLM request, what it cost, and whether it succeeded; and per
page, how rich the writer's prose was (sections filled, generated docstrings, claims rejected).

Prices are per million tokens (`LLMConfig.price_in_per_mtok` / `price_out_per_mtok`), so a local model costs
0 and a hosted one is priced by configuration, not by a table baked into the code. The ledger is thread-safe
(pages are written concurrently), printable, and saved under `<out_dir>/ledger/` as JSON.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sourcebook.atomic import atomic_write_text
from sourcebook.errors import SourcebookError


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    label: str  # what the call was for: "file:src/app.py", "module:src", "answer"
    model: str
    input_tokens: int
    output_tokens: int
    requests: int  # HTTP requests made for this call (re-asks and transport retries included)
    ok: bool
    seconds: float
    error: str = ""


@dataclass(frozen=True, slots=True)
class PageRichness:
    """What one page got from the model: how it was written and how much of it the validators kept."""

    label: str  # "file:src/app.py", "module:src", "overview"
    outcome: str  # "llm" | "fallback" (extractive prose) | "kept" (an earlier model draft was kept)
    sections: int = 0  # prose sections filled (summary, purpose, how it works, key symbols, ...)
    docstrings: int = 0  # docstrings generated for undocumented symbols
    offered: int = 0  # optional claims the model made (entries and sections)
    rejected: int = 0  # of those, dropped by the validators (unknown names, filler, ...)
    single_calls: int = 0  # sections asked one at a time (the small-model strategy)


@dataclass(frozen=True, slots=True)
class Richness:
    pages: int
    by_model: int
    fell_back: int
    sections_per_page: float  # mean over pages written by the model
    docstrings: int
    rejected_claim_rate: float  # rejected / offered over the run
    single_calls: int


@dataclass(frozen=True, slots=True)
class LedgerTotals:
    calls: int
    requests: int
    failed: int
    input_tokens: int
    output_tokens: int
    cost: float


@dataclass
class Ledger:
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    started: float = field(default_factory=time.time)
    entries: list[LedgerEntry] = field(default_factory=list)
    pages: list[PageRichness] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.price_in_per_mtok + output_tokens * self.price_out_per_mtok) / 1_000_000

    def record(self, entry: LedgerEntry) -> None:
        with self._lock:
            self.entries.append(entry)

    def record_page(self, page: PageRichness) -> None:
        with self._lock:
            self.pages.append(page)

    def richness(self) -> Richness:
        with self._lock:
            pages = list(self.pages)
        by_model = [p for p in pages if p.outcome == "llm"]
        offered = sum(p.offered for p in pages)
        sections = round(sum(p.sections for p in by_model) / len(by_model), 2) if by_model else 0.0
        return Richness(
            pages=len(pages), by_model=len(by_model), fell_back=sum(1 for p in pages if p.outcome != "llm"),
            sections_per_page=sections,
            docstrings=sum(p.docstrings for p in pages),
            rejected_claim_rate=round(sum(p.rejected for p in pages) / offered, 3) if offered else 0.0,
            single_calls=sum(p.single_calls for p in pages))

    def totals(self) -> LedgerTotals:
        with self._lock:
            entries = list(self.entries)
        tokens_in = sum(e.input_tokens for e in entries)
        tokens_out = sum(e.output_tokens for e in entries)
        return LedgerTotals(
            calls=len(entries),
            requests=sum(e.requests for e in entries),
            failed=sum(1 for e in entries if not e.ok),
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            cost=self.cost(tokens_in, tokens_out),
        )

    def format(self) -> str:
        """One human line for the end of a build."""
        t = self.totals()
        line = (f"LLM: {t.calls} calls ({t.requests} requests, {t.failed} failed), "
                f"{t.input_tokens:,} tokens in, {t.output_tokens:,} tokens out, cost ${t.cost:.4f}")
        r = self.richness()
        if r.pages:
            line += (f"; pages: {r.by_model} by the model, {r.fell_back} fell back, "
                     f"{r.sections_per_page} sections/page, {r.docstrings} docstrings, "
                     f"{r.rejected_claim_rate:.0%} of optional claims rejected")
        return line

    def to_dict(self) -> dict[str, object]:
        with self._lock:
            entries = [asdict(e) for e in self.entries]
            pages = [asdict(p) for p in self.pages]
        return {
            "started": self.started,
            "price_in_per_mtok": self.price_in_per_mtok,
            "price_out_per_mtok": self.price_out_per_mtok,
            "totals": asdict(self.totals()),
            "richness": asdict(self.richness()),
            "entries": entries,
            "pages": pages,
        }

    def save(self, out_dir: Path) -> Path:
        """Write `<out_dir>/ledger/run-<time>.json` and `latest.json` atomically; return the run file."""
        folder = out_dir / "ledger"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(self.started))
            text = json.dumps(self.to_dict(), indent=1)
            run_file = folder / f"run-{stamp}-{os.getpid()}.json"
            for target in (run_file, folder / "latest.json"):
                atomic_write_text(target, text)
        except OSError as exc:
            raise SourcebookError(f"{folder}: cannot write the LLM ledger: {exc}") from exc
        return run_file


def load_ledger(path: Path) -> dict[str, object]:
    """Read a saved ledger (for `sourcebook` commands that show past runs)."""
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return data
