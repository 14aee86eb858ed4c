"""What the model is shown at a given context window: the development set's gold files among the files whose
text the evidence carries, for a default ask and for include=evidence.

    .venv/bin/python bench/evidence_budget.py [--flask PATH] [--requests PATH] [--context-tokens 8192 ...]

Per window and per kind of ask (the budget answer/answering/get_answer.py gives the model): the share of
questions with a
gold file shown (shown@any), the share of gold files shown (recall), and the median characters shown.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.answering.evidence import EVIDENCE_BUDGET, EVIDENCE_BUDGET_WIDE, retrieve
from answer.answering.synthesize import DEFAULT_ROOM_SHARE, evidence_budget_for
from bench.eval_dev import EVAL, _checkout, _head, _index, _questions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flask", default="/work/eval-repos/flask")
    parser.add_argument("--requests", default="/work/eval-repos/requests")
    parser.add_argument("--context-tokens", type=int, nargs="+", default=[8192, 32000])
    args = parser.parse_args()
    repos = {"pallets/flask": Path(args.flask), "psf/requests": Path(args.requests)}
    qa = _questions(EVAL / "dev" / "swe_qa_dev.jsonl")
    with tempfile.TemporaryDirectory(prefix="sb-evbudget-") as tmp:
        for window in args.context_tokens:
            chat = SimpleNamespace(context_tokens=window)
            budgets = {"default": evidence_budget_for(chat, EVIDENCE_BUDGET, DEFAULT_ROOM_SHARE),  # type: ignore[arg-type]
                       "evidence": evidence_budget_for(chat, EVIDENCE_BUDGET_WIDE)}  # type: ignore[arg-type]
            for repo, path in repos.items():
                rows = [r for r in qa if r["repo"] == repo]
                commit = rows[0]["commit"]
                root = path if _head(path) == commit else _checkout(
                    path, commit, Path(tmp) / f"{repo.replace('/', '_')}-qa")
                out = Path(tmp) / f"{repo.replace('/', '_')}-out"
                store, _ = _index(root, out, "none") if not out.exists() else (None, 0.0)
                if store is None:
                    from generator.index.store import open_index
                    from sourcebook.config import load_config

                    config = load_config(root, {"out_dir": str(out), "embed": {"provider": "none"}})
                    store = open_index(config)
                for kind, budget in budgets.items():
                    shown_any, recall, chars = [], [], []
                    for r in rows:
                        ev = retrieve(store, r["question"], None, budget)  # type: ignore[arg-type]
                        shown = {p for p, text in ev.texts.items() if text}
                        gold = set(r["gold_files"])
                        shown_any.append(float(bool(gold & shown)))
                        recall.append(len(gold & shown) / len(gold) if gold else 0.0)
                        chars.append(len(ev.text))
                    print(f"window {window:>6}  {repo:<14} {kind:<8} budget {budget:>6}  "
                          f"shown@any {statistics.mean(shown_any):.3f}  "
                          f"recall {statistics.mean(recall):.3f}  "
                          f"median chars {statistics.median(chars):.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
