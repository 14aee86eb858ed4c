"""Redaction benchmark: what the one outbound redaction costs, and what it hits on real repositories.

    python bench/redact_bench.py [--repo DIR ...] [--runs 5] [--show RULE] [--corpus]

For each repository (default: the eval checkouts), every scanned text file is decoded as the pipeline does
and passed through `sourcebook.redaction.redact_text`, the function the provider layer applies to every chat
message and remote embedding input. Prints the median throughput (MB/s over `--runs` runs), the median cost
of one 24,000-character prompt (the answer contract's evidence budget), and the redacted lines per rule:
on a repository without real secrets those are the false positives to read (`--show RULE` lists them).
`--corpus` prints the recall and false-positive rate over tests/support/redaction_corpus.py instead.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.analyze.scan import decode, read_source, scan  # noqa: E402
from sourcebook.config import load_config  # noqa: E402
from sourcebook.redaction import redact, redact_text  # noqa: E402

EVAL_REPOS = [Path("/work/eval-repos/flask"), Path("/work/eval-repos/requests")]
PROMPT_CHARS = 24_000


def repo_texts(repo: Path) -> dict[str, str]:
    config = load_config(repo)
    return {f.path: decode(read_source(repo, f.path)) for f in scan(config).files}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, action="append", help="repository (repeatable)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--show", default="", help="print the lines one rule redacted")
    parser.add_argument("--corpus", action="store_true", help="recall and false positives on the corpus")
    args = parser.parse_args()
    if args.corpus:
        corpus()
        return
    print(f"{'repository':<12} {'files':>6} {'MB':>6} {'MB/s':>6} {'ms/prompt':>9} {'lines hit':>9}  rules")
    for repo in args.repo or EVAL_REPOS:
        texts = repo_texts(repo)
        size = sum(len(t) for t in texts.values())
        seconds = []
        for _ in range(args.runs):
            started = time.perf_counter()
            for text in texts.values():
                redact_text(text)
            seconds.append(time.perf_counter() - started)
        joined = "\n".join(texts.values())
        prompts = [joined[i:i + PROMPT_CHARS] for i in range(0, len(joined), PROMPT_CHARS)][:20]
        per_prompt = []
        for _ in range(args.runs):
            started = time.perf_counter()
            for prompt in prompts:
                redact_text(prompt)
            per_prompt.append((time.perf_counter() - started) / max(1, len(prompts)))
        rules: Counter[str] = Counter()
        for path, text in texts.items():
            lines = text.split("\n")
            for hit in redact(text)[1]:
                rules[hit.rule] += 1
                if hit.rule == args.show:
                    print(f"  {path}:{hit.line}: {lines[hit.line - 1].strip()[:120]}")
        median = statistics.median(seconds)
        print(f"{repo.name:<12} {len(texts):>6} {size / 1e6:>6.2f} {size / 1e6 / median:>6.1f} "
              f"{statistics.median(per_prompt) * 1000:>9.1f} {sum(rules.values()):>9}  "
              f"{', '.join(f'{k} {v}' for k, v in rules.most_common())}")


def corpus() -> None:
    from tests.support.redaction_corpus import NEAR_MISSES, SECRETS

    caught = [form for form, text in SECRETS if redact(text)[1]]
    missed = [form for form, text in SECRETS if not redact(text)[1]]
    flagged = [text for text in NEAR_MISSES if redact(text)[1]]
    print(f"recall {len(caught)}/{len(SECRETS)} = {len(caught) / len(SECRETS):.1%}"
          + (f" (missed: {', '.join(missed)})" if missed else ""))
    print(f"false positives {len(flagged)}/{len(NEAR_MISSES)} = {len(flagged) / len(NEAR_MISSES):.1%}")
    for text in flagged:
        print(f"  {text[:100]!r}")


if __name__ == "__main__":
    main()
