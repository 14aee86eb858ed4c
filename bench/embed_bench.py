"""Embedder benchmarks: throughput (chunks/s, import and load time, medians) and a vector-only retrieval
check.

    python bench/embed_bench.py throughput [--embedder static|minilm|openai] [--repo DIR] [--runs 3]
    python bench/embed_bench.py retrieval  [--embedder ...] [--questions FILE ...]
    python bench/embed_bench.py index      [--embedder ...] [--repo DIR] [--runs 3]

Chunks are the ones the index embeds: scan -> parse -> chunk_file -> index.chunk_embed_text, over the eval
checkouts (default /work/eval-repos/flask). `retrieval` ranks each repository's files by the best cosine
between a question and any of the file's chunks (vectors alone, no full-text, no graph) and prints hit@1/5
and MRR per repository: the quality of the embedder by itself, before hybrid fusion.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.analyze.parse import extract  # noqa: E402
from generator.analyze.scan import decode, read_source, scan  # noqa: E402
from generator.index.chunks import chunk_file  # noqa: E402
from generator.index.embed import Embedder, get_embedder  # noqa: E402
from generator.index.rows import chunk_embed_text  # noqa: E402
from sourcebook.config import EmbedConfig, load_config  # noqa: E402

EVAL_REPOS = Path("/work/eval-repos")
DEV_QUESTIONS = Path("/work/shared/eval/dev/swe_qa_dev.jsonl")
REPO_DIRS = {"pallets/flask": EVAL_REPOS / "flask", "psf/requests": EVAL_REPOS / "requests"}


def repo_chunks(repo: Path) -> list[tuple[str, str]]:
    """(path, text as the index embeds it) for every chunk of every scanned file."""
    config = load_config(repo)
    out: list[tuple[str, str]] = []
    for file in scan(config).files:
        source = read_source(config.root, file.path)
        facts = extract(file, source)
        for chunk in chunk_file(facts, decode(source)):
            out.append((chunk.path, chunk_embed_text(chunk)))
    return out


def make_embedder(name: str, args: argparse.Namespace) -> Embedder:
    if name == "static-dims":
        from generator.index.embed import StaticEmbedder

        return StaticEmbedder(args.dims)
    cfg = EmbedConfig(provider=name, base_url=args.base_url, api_key=args.api_key, model=args.model)
    embedder = get_embedder(cfg)
    if embedder is None:
        raise SystemExit("provider 'none' has nothing to measure")
    return embedder


def throughput(args: argparse.Namespace) -> None:
    code = (f"import time; t=time.perf_counter(); from generator.index.embed import get_embedder; "
            f"from sourcebook.config import EmbedConfig; "
            f"e=get_embedder(EmbedConfig(provider={args.embedder!r})); "
            f"i=time.perf_counter(); e.embed(['warm up']); print(i-t, time.perf_counter()-i)")
    imports, loads = [], []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                             check=True)
        imp, load = (float(x) for x in out.stdout.split()[-2:])
        imports.append(imp)
        loads.append(load)
    chunks = [text for _, text in repo_chunks(Path(args.repo))]
    if args.limit:
        chunks = chunks[:args.limit]
    embedder = make_embedder(args.embedder, args)
    embedder.embed(["warm up"])
    rates = []
    for _ in range(args.runs):
        started = time.perf_counter()
        vectors = embedder.embed(chunks)
        rates.append(len(chunks) / (time.perf_counter() - started))
    chars = statistics.median(len(c) for c in chunks)
    print(f"embedder {embedder.id} dim {embedder.dim} vectors {vectors.shape} {vectors.dtype}")
    print(f"chunks {len(chunks)} from {args.repo} (median {chars:.0f} chars)")
    print(f"import median {statistics.median(imports):.3f} s  first-embed (load) median "
          f"{statistics.median(loads):.3f} s  over {args.runs} cold processes")
    print(f"throughput median {statistics.median(rates):.1f} chunks/s over {args.runs} runs "
          f"({', '.join(f'{r:.1f}' for r in rates)})")


def retrieval(args: argparse.Namespace) -> None:
    import numpy as np

    embedder = make_embedder(args.embedder, args)
    questions = [json.loads(line) for q in args.questions for line in Path(q).read_text().splitlines()
                 if line.strip()]
    summary = []
    for repo_name, repo_dir in REPO_DIRS.items():
        rows = [q for q in questions if q["repo"] == repo_name and q["gold_files"]]
        if not rows:
            continue
        chunks = repo_chunks(repo_dir)
        started = time.perf_counter()
        vectors = embedder.embed([text for _, text in chunks])
        seconds = time.perf_counter() - started
        paths = [p for p, _ in chunks]
        files = sorted(set(paths))
        file_index = np.array([files.index(p) for p in paths])
        qvec = embedder.embed([q["question"] for q in rows])
        sims = qvec @ vectors.T
        hits1 = hits5 = 0
        rr = []
        for qi, q in enumerate(rows):
            best = np.full(len(files), -np.inf)
            np.maximum.at(best, file_index, sims[qi])
            ranked = [files[i] for i in np.argsort(-best, kind="stable")]
            gold = set(q["gold_files"])
            first = next((i for i, p in enumerate(ranked) if p in gold), None)
            hits1 += first == 0
            hits5 += first is not None and first < 5
            rr.append(0.0 if first is None else 1.0 / (first + 1))
        n = len(rows)
        line = (f"{embedder.id:34} {repo_name:14} n={n:3} chunks={len(chunks):5} embed={seconds:6.2f}s "
                f"hit@1={hits1 / n:.3f} hit@5={hits5 / n:.3f} mrr={statistics.mean(rr):.3f}")
        summary.append(line)
        print(line, flush=True)


def index_time(args: argparse.Namespace) -> None:
    """Cold index builds of --repo into temp dirs: the embedder's share of `sourcebook index` time."""
    import tempfile

    from generator.index.command import index_repository

    seconds, embedded = [], 0
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="sb-embed-bench-") as tmp:
            overrides = {"out_dir": tmp, "embed": {"provider": args.embedder}}
            config = load_config(Path(args.repo), overrides)
            started = time.perf_counter()
            report = index_repository(config)
            seconds.append(time.perf_counter() - started)
            embedded = report.embedded
    runs = ", ".join(f"{s:.2f}" for s in seconds)
    print(f"index {args.repo} embedder={args.embedder} embedded={embedded} cold build median "
          f"{statistics.median(seconds):.2f} s over {args.runs} runs ({runs})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["throughput", "retrieval", "index"])
    parser.add_argument("--embedder", default="default",
                        help="default|static|minilm|openai|static-dims (with --dims)")
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--repo", default=str(EVAL_REPOS / "flask"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="embed only the first N chunks (slow embedders)")
    parser.add_argument("--questions", nargs="+", default=[str(DEV_QUESTIONS)])
    parser.add_argument("--base-url")
    parser.add_argument("--api-key")
    parser.add_argument("--model")
    args = parser.parse_args()
    {"throughput": throughput, "retrieval": retrieval, "index": index_time}[args.mode](args)


if __name__ == "__main__":
    main()
