"""LLM builds of a real repository against the scripted provider: calls, pages and wall time.

    nice .venv/bin/python bench/llm_build_bench.py [--repo /work/eval-repos/flask] [--reps 3]

Copies the repository to a temp dir, then measures with the scripted OpenAI-compatible server of
tests/fake_llm.py (real HTTP on 127.0.0.1, replies in ~1 ms, so the time is the pipeline's own):
- cold build (fresh .sourcebook/): LLM calls, pages written, wall time (median of --reps);
- no-change re-run: LLM calls (must be 0), wall time;
- one-file change (a function appended to one source file): LLM calls, pages rewritten;
- pipeline overhead per LLM page = cold wall time / LLM pages, next to the extractive build's per page.
Site (mkdocs) and index stages are off: they are the same for both writers and measured elsewhere.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.build import BuildReport, build
from generator.llm_writer import LLMWriter
from generator.plan import load_state
from generator.provider import OpenAIChatModel
from generator.write import ExtractiveWriter
from sourcebook.config import Config, load_config
from tests.fake_llm import FakeLLM, page_writer_responder

CHANGED = "src/flask/helpers.py"


def llm_build(config: Config) -> tuple[BuildReport, LLMWriter, float]:
    writer = LLMWriter(OpenAIChatModel(config.llm), repo_name=config.root.name,
                       concurrency=config.llm.concurrency)
    started = time.perf_counter()
    report = build(config, writer=writer, site=False, index=False)
    return report, writer, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", default="/work/eval-repos/flask")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("instructor").setLevel(logging.CRITICAL)

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
