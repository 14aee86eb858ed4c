"""Redaction benchmark: what the one outbound redaction costs, and what it hits on real repositories.

    python bench/redact_bench.py [--repo DIR ...] [--runs 5] [--show RULE] [--corpus]

For each repository (default: the eval checkouts), every scanned text file is decoded as the pipeline does
and passed through `sourcebook.redaction.redact_text`, the function the provider layer applies to every chat
message and remote embedding input. Prints the median throughput (MB/s over `--runs` runs), the median cost
of one 24,000-character prompt (the answer contract's evidence budget), and the redacted lines per rule:
on a repository without real secrets those are the false positives to read (`--show RULE` lists them).
`--corpus` prints the recall and false-positive rate over tests/support/redaction_corpus.py instead; with
`--detect-secrets` it also prints them for Yelp's detect-secrets (its default plugins and filters, each corpus
text scanned as a file) alone and for the union of both, to judge whether the maintained detectors add recall
(detect-secrets is not a dependency: install it beside the bench, e.g. `pip install --target DIR
detect-secrets` and PYTHONPATH=DIR).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
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
    parser.add_argument("--detect-secrets", action="store_true",
                        help="with --corpus: detect-secrets alone and the union with our rules too")
    args = parser.parse_args()
    if args.corpus:
        corpus(args.detect_secrets)
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


def corpus(compare: bool) -> None:
    from tests.support.redaction_corpus import NEAR_MISSES, SECRETS

    detectors: dict[str, Callable[[str], str]] = {"sourcebook": redact_text}
    if compare:
        detectors["detect-secrets"] = lambda text: _mark_lines(text, _detect_secrets_lines(text))
        detectors["union"] = lambda text: _mark_lines(redact_text(text), _detect_secrets_lines(text))
    for name, clean in detectors.items():
        report(name, clean, SECRETS, NEAR_MISSES)


def report(name: str, clean: Callable[[str], str], secrets: list[tuple[str, str]], near: list[str]) -> None:
    from tests.support.redaction_corpus import fully_redacted

    # caught: a line was replaced and nothing of the secret is left (the test's criterion, not just "a hit")
    missed = [form for form, text in secrets
              if (cleaned := clean(text)) == text or not fully_redacted(cleaned)]
    flagged = [text for text in near if clean(text) != text]
    caught = len(secrets) - len(missed)
    print(f"{name}: recall {caught}/{len(secrets)} = {caught / len(secrets):.1%}"
          + (f" (missed: {', '.join(missed)})" if missed else ""))
    print(f"{name}: false positives {len(flagged)}/{len(near)} = {len(flagged) / len(near):.1%}")
    for text in flagged:
        print(f"  {text[:100]!r}")


def _mark_lines(text: str, numbers: set[int]) -> str:
    """`text` with the given 1-based lines replaced by the redaction marker."""
    return "\n".join("[REDACTED] (detect-secrets)" if i in numbers else line
                     for i, line in enumerate(text.split("\n"), 1))


def _detect_secrets_lines(text: str) -> set[int]:
    """1-based lines detect-secrets flags in `text`, scanned as a file with its default settings."""
    import tempfile

    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "snippet.txt"
        path.write_text(text, encoding="utf-8")
        with default_settings():
            found = SecretsCollection()
            found.scan_file(str(path))
    return {secret.line_number for _, secret in found}


if __name__ == "__main__":
    main()
