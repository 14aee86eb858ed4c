"""Calibration of get_answer's confidence: per label, how many answers and the share right.

    .venv/bin/python bench/confidence_bench.py [--flask PATH] [--requests PATH] [--limit N]
        [--modes good,imperfect,false] [--llm-base-url URL --llm-model NAME]

The development questions (/work/shared/eval/dev/swe_qa_dev.jsonl) are asked through get_answer with a
provider: the scripted OpenAI-compatible server (tests/support/fake_llm.py, a real HTTP server on 127.0.0.1)
in each mode, and, with --llm-base-url, a real model.

Scripted modes, each reply built from the evidence in the request (the first symbol the evidence shows in
code: its signature, its own `raise` statements):
- good: true claims about that symbol (its parameters and defaults, what it raises), citing its file;
- imperfect: in turn a reply cut mid-sentence, a hedge, a citation of the runner-up file only, a bare name
  (all but the runner-up citation count as wrong answers);
- false: confident claims the code contradicts (a flipped default, another function's parameter, "never
  raises" over a `raise`, output to standard output where the code writes to stderr).

An answer is judged right when it cites a gold file, names a code identifier the reference answer names,
and (scripted modes) the responder put no false claim or flaw in it. Run with PYTHONPATH pointing at another
checkout to measure that checkout's engine with the same script (this file appends its root to sys.path).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))

from answer.answering.get_answer import AnswerContext, get_answer
from answer.retrieval.query import extract_identifiers
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.config import LLMConfig, load_config

EVAL = Path("/work/shared/eval")
LEVELS = ("high", "medium", "low")
_PROMOTED = re.compile(r"^### (\S+?):(\d+)-(\d+) (?:function|method|class) (\S+)\n(?:(?!```).*\n)*?```\n"
                       r"((?:(?!```).*\n)*?)```", re.M)
_FILE = re.compile(r"^## \[\d+\] (\S+)", re.M)
_SYMBOL = re.compile(r"^- (?:function|method) (\S+) \(lines \d+-\d+\): (.+)$", re.M)


def _questions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _params(signature: str) -> list[tuple[str, str | None]]:
    """(name, default) of a one-line `def` header's simple parameters (the script's own parse, so that the
    same script measures an engine without sourcebook/claims.py)."""
    inner = signature[signature.find("(") + 1: signature.rfind(")")]
    out = []
    for part in re.split(r",\s*(?![^()\[\]]*[)\]])", inner):
        match = re.match(r"\s*([A-Za-z_]\w*)\s*(?::[^=]+)?(?:=\s*(\S.*?))?\s*$", part)
        if match and match.group(1) not in {"self", "cls"}:
            out.append((match.group(1), match.group(2)))
    return out


def _subject(text: str) -> tuple[str, str, str, str] | None:
    """(path, qualname, signature, code) of the first function the evidence shows, or None."""
    for match in _PROMOTED.finditer(text):
        code = match.group(5)
        header = next((line for line in code.split("\n") if re.match(r"\s*(?:async\s+)?def\s", line)), "")
        if header:
            return match.group(1), match.group(4), header.strip(), code
    files = _FILE.findall(text)
    for match in _SYMBOL.finditer(text):
        if files:
            start = text.rfind("## [", 0, match.start())
            path = _FILE.match(text, start)
            if path:
                return path.group(1), match.group(1), match.group(2), ""
    return None


class Script:
    """The scripted replies of one mode; `lied` records per question whether a false claim was planted."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.lied: dict[str, bool] = {}
        self.turn = 0
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        from tests.support.fake_llm import Reply

        messages = body.get("messages", [])
        text = "\n".join(str(m.get("content") or "") for m in messages)
        question = re.search(r"Question: (.*)", text)
        key = question.group(1).strip() if question else ""
        files = _FILE.findall(text)
        found = _subject(text)
        if found is None:
            top = files[0] if files else ""
            self.lied[key] = False
            return Reply.ok({"answer": f"The code in `{top}` handles this.",
                             "citations": [top] if top else []})
        path, qualname, signature, code = found
        name = qualname.rsplit(".", 1)[-1]
        params = _params(signature)
        raises = re.findall(r"^\s*raise\s+([A-Z]\w*)", code, re.M)
        with self.lock:
            self.turn += 1
            turn = self.turn
        lie = False
        base = f"`{qualname}` in `{path}` is defined as `{signature.rstrip(':')}`."
        if self.mode == "good":
            extra = [f"The `{p}` parameter defaults to `{d}`." for p, d in params if d is not None][:1]
            if raises:
                extra.append(f"It raises `{raises[0]}` when its checks fail.")
            answer, cites = " ".join([base, *extra]), [path]
        elif self.mode == "imperfect":
            kind = turn % 4
            if kind == 0:
                answer = f"{base} It takes the arguments and then"
            elif kind == 1:
                answer = f"{base} It probably handles the rest, but the evidence does not show how."
            elif kind == 2:
                others = [f for f in files if f != path]
                answer, path = f"{base} See the caller for details.", (others[0] if others else path)
            else:
                answer = f"`{name}`"
            cites = [path]
            lie = kind != 2  # cut, hedged or a bare name: not an answer; a wrong citation is judged by gold
        else:
            lie = True
            defaults = [(p, d) for p, d in params if d is not None]
            if defaults:
                p, d = defaults[0]
                flipped = {"True": "False", "False": "True", "None": "True"}.get(d, "None")
                claim = f"The `{p}` parameter defaults to `{flipped}`."
            elif raises:
                claim = f"`{name}` never raises an exception."
            elif "stderr" in code:
                claim = f"`{name}` writes its output to the standard output."
            else:
                claim = f"`{name}` takes a `hide_input` parameter."
            answer, cites = f"{base} {claim}", [path]
        if key not in self.lied or not lie:
            self.lied[key] = lie
        return Reply.ok({"answer": answer, "citations": cites})


def _right(reply: Any, row: dict[str, Any], lied: bool) -> bool:
    if lied or not reply.citations or not set(reply.citations) & set(row["gold_files"]):
        return False
    names = {n.rsplit(".", 1)[-1].lower() for n in extract_identifiers(reply.answer).names}
    reference = row.get("answer", "").lower()
    return any(n and n in reference for n in names)


def _table(title: str, counts: collections.Counter[tuple[str, bool]]) -> None:
    total = sum(counts.values())
    print(f"\n{title} (n={total})")
    for level in LEVELS:
        yes, no = counts[(level, True)], counts[(level, False)]
        share = f"{(yes + no) / total:.2f}" if total else "-"
        rate = f"{yes / (yes + no):.2f}" if yes + no else "-"
        print(f"  {level:7} answers={yes + no:3} (share {share})  right={yes:3}  precision={rate}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flask", default="/work/eval-repos/flask")
    parser.add_argument("--requests", default="/work/eval-repos/requests")
    parser.add_argument("--limit", type=int, default=0, help="Questions per repository (0 = all).")
    parser.add_argument("--modes", default="good,imperfect,false")
    parser.add_argument("--llm-base-url", default="")
    parser.add_argument("--llm-model", default="")
    parser.add_argument("--show", default="",
                        help="MODE or MODE:LEVEL (e.g. false:high): print those answers and notes.")
    args = parser.parse_args()
    from sourcebook.provider import get_chat_model
    from tests.support.fake_llm import FakeLLM

    repos = {"pallets/flask": Path(args.flask), "psf/requests": Path(args.requests)}
    qa = _questions(EVAL / "dev" / "swe_qa_dev.jsonl")
    modes = [m for m in args.modes.split(",") if m] + (["real"] if args.llm_base_url else [])
    counts: dict[str, collections.Counter[tuple[str, bool]]] = {m: collections.Counter() for m in modes}
    with tempfile.TemporaryDirectory(prefix="sb-confidence-") as tmp:
        for repo, root in repos.items():
            rows = [r for r in qa if r["repo"] == repo][: args.limit or None]
            name = repo.replace("/", "_")
            config = load_config(root, {"out_dir": str(Path(tmp) / name), "embed": {"provider": "none"}},
                                 env={})
            index_repository(config)
            store = open_index(config)
            for mode in modes:
                script = Script(mode)
                server = FakeLLM(responder=script).start() if mode != "real" else None
                try:
                    llm = (LLMConfig(base_url=server.base_url, api_key="k", model="fake-model",
                                     context_tokens=32000, max_retries=0, timeout_s=10) if server else
                           LLMConfig(base_url=args.llm_base_url, api_key="k", model=args.llm_model,
                                     timeout_s=600))
                    ctx = AnswerContext(replace(config, out_dir=Path(tmp) / f"{name}-{mode}"), store=store,
                                        chat=get_chat_model(llm))
                    for r in rows:
                        reply = get_answer(ctx, r["question"], use_cache=False)
                        lied = script.lied.get(r["question"].strip(), False)
                        counts[mode][(reply.confidence, _right(reply, r, lied))] += 1
                        if args.show in (f"{mode}:{reply.confidence}", mode):
                            print(f"--- {mode} {reply.confidence} right={_right(reply, r, lied)} {r['id']}\n"
                                  f"Q: {r['question']}\nA: {reply.answer}\ncited: {reply.citations}\n"
                                  f"note: {reply.note}", file=sys.stderr)
                finally:
                    if server is not None:
                        server.stop()
    for mode in modes:
        _table(f"mode {mode}: confidence x right", counts[mode])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
