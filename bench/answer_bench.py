"""get_answer on the development set: file ranking, calibration and latency.

    .venv/bin/python bench/answer_bench.py [--flask PATH] [--requests PATH] [--embedder none|default]
        [--out results.jsonl] [--limit N]

1. Ranking, no LLM: the files get_answer returns (citations, then best_guesses / candidates / candidate_files
   / fallback_targets, in order) scored by /work/shared/eval/score.py next to `rank_files` on the same index
   (system names `get_answer-<embedder>` and `rank_files-<embedder>`).
2. Calibration: confusion of confidence (and of retrieval_quality, which is what would make a synthesized
   answer "high") against hit@1 of get_answer's ranking.
3. Latency, in process, warm: degraded (no provider) p50/p90; with the scripted OpenAI-compatible server
   (tests/support/fake_llm.py) the pipeline overhead = total - synthesize stage; a cache hit.

Indexes are built in a temp dir; the checkouts are never written to.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.answering.get_answer import AnswerContext, get_answer
from answer.retrieval.tiers import rank_files
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.config import LLMConfig, load_config

EVAL = Path("/work/shared/eval")


def _questions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _scripted_responder(body: dict[str, Any]) -> Any:
    """Answer like a well-behaved model: cite the top evidence file, name what the evidence names."""
    from tests.support.fake_llm import Reply

    text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    paths = re.findall(r"^## \[\d+\] (\S+)", text, flags=re.MULTILINE)
    top = paths[0] if paths else ""
    answer = f"The behaviour is implemented in `{top}`."
    return Reply.ok({"answer": answer, "citations": [top] if top else []})


def _swebench(repos: dict[str, Path], tmp: Path, embedder: str) -> list[dict[str, Any]]:
    """SWE-bench issues as questions, each on a clean checkout (cloned locally) of its base commit."""
    rows: list[dict[str, Any]] = []
    for r in _questions(EVAL / "dev" / "swebench_dev.jsonl"):
        dest = tmp / f"{r['repo'].replace('/', '_')}-swebench"
        if not dest.exists():
            source = str(repos[r["repo"]])
            subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", source, str(dest)], check=True)
        subprocess.run(["git", "-C", str(dest), "checkout", "-q", "-f", r["commit"]], check=True)
        settings = {"out_dir": str(tmp / f"{dest.name}-out"), "embed": {"provider": embedder}}
        config = load_config(dest, settings, env={})
        index_repository(config)
        store = open_index(config)
        ctx = AnswerContext(config, store=store, chat=None)
        t0 = time.perf_counter()
        ranked_files = [f.path for f in rank_files(store, r["question"], limit=10)]
        t1 = time.perf_counter()
        ranked = get_answer(ctx, r["question"], use_cache=False).ranked_files()
        t2 = time.perf_counter()
        for system, order, secs in ((f"rank_files-{embedder}-swebench", ranked_files, t1 - t0),
                                    (f"get_answer-{embedder}-swebench", ranked, t2 - t1)):
            rows.append({"system": system, "id": r["id"], "repo": r["repo"], "gold_files": r["gold_files"],
                         "ranked": order, "seconds": secs})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flask", default="/work/eval-repos/flask")
    parser.add_argument("--requests", default="/work/eval-repos/requests")
    parser.add_argument("--embedder", default="none")
    parser.add_argument("--out", default=None)
    parser.add_argument("--limit", type=int, default=0, help="Questions per repository (0 = all).")
    parser.add_argument("--swebench", action="store_true",
                        help="Also rank the SWE-bench dev issues, each on a checkout of its base commit.")
    args = parser.parse_args()
    repos = {"pallets/flask": Path(args.flask), "psf/requests": Path(args.requests)}
    qa = _questions(EVAL / "dev" / "swe_qa_dev.jsonl")
    results: list[dict[str, Any]] = []
    confusion: collections.Counter[tuple[str, bool]] = collections.Counter()
    quality_confusion: collections.Counter[tuple[str, bool]] = collections.Counter()
    degraded_ms: list[float] = []
    degraded_cpu_ms: list[float] = []  # steadier than wall time on a shared machine
    overhead_ms: list[float] = []
    provider_ms: list[float] = []
    cache_ms: list[float] = []
    with tempfile.TemporaryDirectory(prefix="sb-answer-bench-") as tmp:
        for repo, root in repos.items():
            rows = [r for r in qa if r["repo"] == repo]
            if args.limit:
                rows = rows[: args.limit]
            name = repo.replace("/", "_")
            settings = {"out_dir": str(Path(tmp) / name), "embed": {"provider": args.embedder}}
            config = load_config(root, settings, env={})
            started = time.perf_counter()
            index_repository(config)
            print(f"indexed {repo} in {time.perf_counter() - started:.1f}s", file=sys.stderr)
            store = open_index(config)
            try:  # as serve and mcp warm up: full-text ranking in memory (absent before that existed)
                from answer.retrieval.tiers import FTS_TABLES, use_in_memory_ranking

                use_in_memory_ranking(store, FTS_TABLES)
            except ImportError:
                pass
            ctx = AnswerContext(config, store=store, chat=None)
            get_answer(ctx, "warm up the index", use_cache=False)
            for r in rows:
                t0 = time.perf_counter()
                ranked_files = [f.path for f in rank_files(store, r["question"], limit=10)]
                t1, c1 = time.perf_counter(), time.process_time()
                reply = get_answer(ctx, r["question"], include=["diagnostics"], use_cache=False)
                t2 = time.perf_counter()
                degraded_ms.append((t2 - t1) * 1000)
                degraded_cpu_ms.append((time.process_time() - c1) * 1000)
                ranked = reply.ranked_files()
                for system, order, secs in ((f"rank_files-{args.embedder}", ranked_files, t1 - t0),
                                            (f"get_answer-{args.embedder}", ranked, t2 - t1)):
                    results.append({"system": system, "id": r["id"], "repo": repo,
                                    "gold_files": r["gold_files"], "ranked": order, "seconds": secs})
                hit1 = bool(ranked) and ranked[0] in r["gold_files"]
                confusion[(reply.confidence, hit1)] += 1
                quality_confusion[(reply.retrieval_quality or "-", hit1)] += 1

            # the scripted provider: pipeline overhead and cache hits
            from sourcebook.provider import get_chat_model
            from tests.support.fake_llm import FakeLLM

            with FakeLLM(responder=_scripted_responder) as server:
                llm = LLMConfig(base_url=server.base_url, api_key="k", model="fake-model",
                                context_tokens=32000, max_retries=0, timeout_s=10)
                sctx = AnswerContext(replace(config, out_dir=Path(tmp) / f"{name}-llm"), store=store,
                                     chat=get_chat_model(llm))
                get_answer(sctx, "warm up the provider", use_cache=False)
                for r in rows[:20]:
                    reply = get_answer(sctx, r["question"])
                    timings = reply.meta.timings_ms
                    provider_ms.append(timings.get("synthesize", 0.0))
                    overhead_ms.append(timings["total"] - timings.get("synthesize", 0.0))
                    t0 = time.perf_counter()
                    hit = get_answer(sctx, r["question"])
                    cache_ms.append((time.perf_counter() - t0) * 1000)
                    assert hit.meta.cache_hit, "the second identical question must come from the cache"

        if args.swebench:
            results += _swebench(repos, Path(tmp), args.embedder)
        out = Path(args.out) if args.out else Path(tmp) / "results.jsonl"
        out.write_text("".join(json.dumps(row) + "\n" for row in results))
        subprocess.run([sys.executable, str(EVAL / "score.py"), str(out)], check=True)

    print("\ncalibration (no LLM: degraded replies are never high): confidence x hit@1")
    for level in ("high", "medium", "low"):
        yes, no = confusion[(level, True)], confusion[(level, False)]
        rate = f"{yes / (yes + no):.2f}" if yes + no else "-"
        print(f"  {level:7} hit@1={yes:3}  miss={no:3}  precision={rate}")
    print("retrieval_quality x hit@1 (what starts a synthesized answer's confidence)")
    for level in ("high", "partial", "weak"):
        yes, no = quality_confusion[(level, True)], quality_confusion[(level, False)]
        rate = f"{yes / (yes + no):.2f}" if yes + no else "-"
        print(f"  {level:7} hit@1={yes:3}  miss={no:3}  precision={rate}")
    print(f"\nwarm degraded get_answer: p50 {statistics.median(degraded_ms):.1f} ms, "
          f"p90 {_pct(degraded_ms, 0.9):.1f} ms over {len(degraded_ms)} questions "
          f"(CPU p50 {statistics.median(degraded_cpu_ms):.1f} ms)")
    print(f"scripted provider: pipeline overhead p50 {statistics.median(overhead_ms):.1f} ms "
          f"(p90 {_pct(overhead_ms, 0.9):.1f}); provider round trip p50 "
          f"{statistics.median(provider_ms):.1f} ms; n={len(overhead_ms)}")
    print(f"cache hit: p50 {statistics.median(cache_ms):.2f} ms (p90 {_pct(cache_ms, 0.9):.2f}); "
          f"n={len(cache_ms)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
