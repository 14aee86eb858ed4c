"""LLM builds of a real repository: the pipeline against the scripted provider, or a real model's output.

    nice .venv/bin/python bench/llm_build_bench.py [--repo /work/eval-repos/flask] [--reps 3]
    nice .venv/bin/python bench/llm_build_bench.py --base-url http://127.0.0.1:8766/v1 --model qwen0.5b \
        --repo /work/eval-repos/requests --include 'src/requests/sessions.py' --timeout 900 \
        --context-tokens 4096 --concurrency 1

With --base-url (any OpenAI-compatible endpoint: a hosted model, vLLM, Ollama, llama.cpp's server) it makes
one cold build of the (optionally --include-filtered) repository with that model and prints, per page, whether
the model wrote it or it fell back and how many prose sections it holds; then the totals (pages by model /
fell back, sections per page, generated docstrings, rejected-claim rate, calls, tokens, wall time) and the
`ask` answers (confidence, citations, seconds) for a fixed question list, so models can be compared.

Without --base-url, it measures the pipeline itself:
copies the repository to a temp dir, then measures with the scripted OpenAI-compatible server of
tests/support/fake_llm.py (real HTTP on 127.0.0.1, replies in ~1 ms, so the time is the pipeline's own):
- cold build (fresh .sourcebook/): LLM calls, pages written, wall time (median of --reps);
- no-change re-run: LLM calls (must be 0), wall time;
- one-file change (a function appended to one source file): LLM calls, pages rewritten;
- pipeline overhead per LLM page = cold wall time / LLM pages, next to the extractive build's per page.
Site (mkdocs) and index stages are off: they are the same for both writers and measured elsewhere.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.analyze.plan import load_state
from generator.build import BuildReport, build
from generator.build_llm import estimate_run
from generator.pages.llm.writer import LLMWriter
from generator.pages.writer import ExtractiveWriter
from sourcebook.config import Config, load_config
from sourcebook.ledger import LedgerEntry
from sourcebook.provider import OpenAIChatModel
from tests.support.fake_llm import FakeLLM, page_writer_responder

CHANGED = "src/flask/helpers.py"


def llm_build(config: Config) -> tuple[BuildReport, LLMWriter, float]:
    writer = LLMWriter(OpenAIChatModel(config.llm), repo_name=config.root.name,
                       concurrency=config.llm.concurrency)
    started = time.perf_counter()
    report = build(config, writer=writer, site=False, index=False)
    return report, writer, time.perf_counter() - started


# Asked after a real-model build. They name the repository's own concepts; --questions FILE (one per line)
# replaces them for another repository.
QUESTIONS = {
    "requests": ["How does a Session send a request and apply its default headers?",
                 "How does HTTPAdapter configure retries and connection pooling?",
                 "Where are cookies from a response stored for the next request?"],
    "flask": ["How does Flask dispatch a request to a view function?",
              "How are blueprints registered on an application?",
              "Where is the application context pushed?"],
}


def page_of(label: str) -> str:
    """The page a ledger call was for: "symbol:a.py#Session" and "file:a.py#purpose" -> "file:a.py"."""
    kind, _, rest = label.partition(":")
    kind = {"symbol": "file", "file-part": "file", "module-part": "module"}.get(kind, kind)
    page = f"{kind}:{rest}" if rest else kind
    return page.split("#", 1)[0]


def page_costs(entries: list[LedgerEntry]) -> dict[str, tuple[int, float]]:
    """page label -> (calls, seconds) over the ledger's calls."""
    out: dict[str, tuple[int, float]] = {}
    for e in entries:
        calls, seconds = out.get(page_of(e.label), (0, 0.0))
        out[page_of(e.label)] = (calls + 1, seconds + e.seconds)
    return out


def real_model(args: argparse.Namespace) -> None:
    """One cold build with a real model, then `ask` for each question; print what the model produced."""
    from answer.answering.get_answer import AnswerContext, get_answer

    questions = (Path(args.questions).read_text().splitlines() if args.questions
                 else QUESTIONS.get(Path(args.repo).name, QUESTIONS["requests"]))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / Path(args.repo).name
        shutil.copytree(args.repo, root, ignore=shutil.ignore_patterns(".git", ".sourcebook"))
        env = {"SOURCEBOOK_LLM_BASE_URL": args.base_url, "SOURCEBOOK_LLM_MODEL": args.model,
               "SOURCEBOOK_LLM_API_KEY": os.environ.get("SOURCEBOOK_LLM_API_KEY", "")}
        llm = {"concurrency": args.concurrency, "timeout_s": args.timeout,
               "context_tokens": args.context_tokens, "max_output_tokens": args.max_output_tokens,
               "max_retries": 1, "system_in_user": args.system_in_user}
        overrides: dict[str, object] = {"llm": llm}
        if args.include:
            overrides["include"] = tuple(args.include)
        config = load_config(root, overrides=overrides, env=env)
        writer = LLMWriter(OpenAIChatModel(config.llm), repo_name=root.name,
                           concurrency=config.llm.concurrency)
        est = estimate_run(config, writer)  # what `build --dry-run` promises, next to what the run spends
        print(f"dry run: {est.calls} calls if whole drafts pass, up to {est.max_calls} section by section; "
              f"{sum(est.pages.values())} LLM pages ({', '.join(f'{n} {k}' for k, n in est.pages.items())})",
              flush=True)
        started = time.perf_counter()
        report = build(config, writer=writer, site=False, index=True)
        took = time.perf_counter() - started
        ledger = writer.chat.ledger
        state = load_state(config.out_dir)
        print(f"model {args.model} at {args.base_url}: {report.files} files, {report.pages_total} pages, "
              f"context {config.llm.context_tokens}, timeout {config.llm.timeout_s:.0f}s")
        per_page = page_costs(ledger.entries)
        for page in ledger.pages:
            calls, seconds = per_page.get(page.label, (0, 0.0))
            print(f"  {page.label:<44} {page.outcome:<8} sections {page.sections}  docstrings "
                  f"{page.docstrings}  rejected {page.rejected}/{page.offered}  singles {page.single_calls}  "
                  f"calls {calls}  {seconds:.0f}s")
        for page_id, row in sorted(state.items()):
            if row.written_by == "llm":
                print(f"    {page_id}: {' '.join(row.summary.split())[:160]}")
        for kind in ("file", "module", "overview", "topic"):
            pages = [p for p in ledger.pages if p.label.split(":", 1)[0] == kind]
            if pages:
                print(f"  {kind} pages: {sum(p.outcome == 'llm' for p in pages)}/{len(pages)} by the model, "
                      f"sections {sum(p.sections for p in pages) / len(pages):.1f}/page, rejected "
                      f"{sum(p.rejected for p in pages)}/{sum(p.offered for p in pages)} claims")
        r, t = ledger.richness(), ledger.totals()
        print(f"pages by model {r.by_model}, fell back {r.fell_back} (kept earlier prose: "
              f"{len(report.kept_prose)}), sections/page {r.sections_per_page}, docstrings {r.docstrings}, "
              f"rejected claims {r.rejected_claim_rate:.0%}, single-section calls {r.single_calls}")
        files = [p for p in ledger.pages if p.label.startswith("file:")]
        if files:
            calls = sum(per_page.get(p.label, (0, 0.0))[0] for p in files)
            seconds = sum(per_page.get(p.label, (0, 0.0))[1] for p in files)
            print(f"file pages: {sum(p.outcome == 'llm' for p in files)}/{len(files)} by the model, sections "
                  f"{sum(p.sections for p in files) / len(files):.1f}/page, docstrings "
                  f"{sum(p.docstrings for p in files) / len(files):.1f}/page, {calls / len(files):.1f} calls "
                  f"and {seconds / len(files):.0f}s per page")
        writing = sum(report.timings.get(stage, 0.0) for stage in ("files", "modules", "overview", "topics"))
        print(f"calls {t.calls} ({t.requests} requests, {t.failed} failed), tokens {t.input_tokens:,} in / "
              f"{t.output_tokens:,} out, wall {took:.0f}s (writing pages {writing:.0f}s)")
        ctx = AnswerContext(config)
        for question in questions:
            started = time.perf_counter()
            reply = get_answer(ctx, question, use_cache=False)
            print(f"ask {question!r}: {time.perf_counter() - started:.0f}s, confidence {reply.confidence}, "
                  f"degraded {reply.degraded}, citations {list(reply.citations)}")
            print(f"    {' '.join(reply.answer.split())[:400]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", default="/work/eval-repos/flask")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--base-url", help="measure this OpenAI-compatible endpoint's model instead")
    parser.add_argument("--model", default="local")
    parser.add_argument("--include", action="append", help="only files matching this glob (repeatable)")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds per request (a CPU server needs minutes)")
    parser.add_argument("--context-tokens", type=int, default=8192)
    parser.add_argument("--max-output-tokens", type=int, default=1024)
    parser.add_argument("--system-in-user", action="store_true", help="for chat formats that drop system")
    parser.add_argument("--questions", help="file with one ask question per line")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("instructor").setLevel(logging.CRITICAL)
    if args.base_url:
        logging.getLogger("generator.pages.llm").setLevel(logging.INFO)  # drops, single-section asks
        real_model(args)
        return

    with tempfile.TemporaryDirectory() as tmp, FakeLLM(responder=page_writer_responder) as fake:
        root = Path(tmp) / Path(args.repo).name
        shutil.copytree(args.repo, root, ignore=shutil.ignore_patterns(".git", ".sourcebook"))
        env = {"SOURCEBOOK_LLM_BASE_URL": fake.base_url, "SOURCEBOOK_LLM_MODEL": "scripted"}
        llm = {"concurrency": args.concurrency, "retry_base_s": 0.05}

        cold_times, extract_times = [], []
        for rep in range(args.reps):
            out = Path(tmp) / f"out-extract-{rep}"
            config = load_config(root, overrides={"out_dir": str(out)}, env={})
            started = time.perf_counter()
            ext_report = build(config, writer=ExtractiveWriter(), site=False, index=False)
            extract_times.append(time.perf_counter() - started)

            out = Path(tmp) / f"out-llm-{rep}"
            config = load_config(root, overrides={"out_dir": str(out), "llm": llm}, env=env)
            before = fake.calls
            report, writer, took = llm_build(config)
            cold_times.append(took)
            cold_calls = fake.calls - before
        pages = load_state(config.out_dir)
        llm_pages = sum(1 for row in pages.values() if row.written_by == "llm")
        totals = writer.chat.ledger.totals()
        print(f"repo {args.repo}: {report.files} files, {report.pages_total} pages")
        r = writer.chat.ledger.richness()
        print(f"richness (scripted): {r.by_model} pages by the model, {r.fell_back} fell back, "
              f"{r.sections_per_page} sections/page, {r.docstrings} docstrings")
        print(f"cold build: {cold_calls} LLM calls, {len(report.pages_written)} pages written "
              f"({llm_pages} by the LLM, {len(report.write_failures)} failed), "
              f"median {statistics.median(cold_times):.2f}s "
              f"over {args.reps} (runs: {', '.join(f'{t:.2f}' for t in cold_times)}), "
              f"{totals.input_tokens:,} tokens in / {totals.output_tokens:,} out (scripted)")

        before = fake.calls
        report, _, took = llm_build(config)
        print(f"no-change re-run: {fake.calls - before} LLM calls, {len(report.pages_written)} pages "
              f"written, {took:.2f}s")

        target = root / CHANGED
        target.write_text(target.read_text() + "\n\ndef _bench_added(x):\n    return x\n")
        before = fake.calls
        report, _, took = llm_build(config)
        print(f"one-file change ({CHANGED}): {fake.calls - before} LLM calls, "
              f"{len(report.pages_written)} pages rewritten ({', '.join(sorted(report.pages_written))}), "
              f"{took:.2f}s")

        per_llm = statistics.median(cold_times) / max(1, llm_pages) * 1000
        per_ext = statistics.median(extract_times) / max(1, ext_report.pages_total) * 1000
        print(f"pipeline overhead: {per_llm:.1f} ms per LLM page (scripted replies, concurrency "
              f"{args.concurrency}); extractive build {per_ext:.1f} ms per page "
              f"(median {statistics.median(extract_times):.2f}s for {ext_report.pages_total} pages)")


if __name__ == "__main__":
    main()
