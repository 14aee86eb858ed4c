"""How the prompt-echo check (generator/pages/llm/echo.py) separates echoes from real prose.

    .venv/bin/python bench/echo_bench.py [REPO ...]

Real prose: every docstring sentence of the Python files under each REPO (people describing code, what a
good page says), and the scripted page writer's prose (tests/support/fake_llm.py, what the build tests
publish). Echoes: sentences small models were seen to publish (issue 27) and paraphrases of the prompts'
rules. For each threshold, prints the share of real prose that would be rejected and the share of echoes
caught.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))

from generator.pages.llm.drafts import instruction_texts
from generator.pages.llm.echo import MIN_WORDS, _corpus, content_words, overlap, split_sentences

ECHOES = (
    "The function names are listed exactly as provided in backticks.",
    "Only the facts and code given here are used.",
    "Symbols and paths are named only if they are listed, written exactly as listed.",
    "This section uses plain Markdown sentences without headings, HTML, code blocks or tables.",
    "If a field does not apply, it is left out rather than filled with filler.",
    "Write only the field explanation in plain sentences about what the code does.",
    "The reply keeps the same structure, fixing exactly these problems and keeping everything else.",
    "Be concrete and brief.",
    "No headings, no HTML, no code blocks, no lists.",
    "It names symbols in backticks and says what happens in this part and why.",
)
SCRIPTED = (
    "Scripted summary 412: this part of src/app.py does its job.", "It exists to be documented by a test.",
    "Its pieces call each other in a scripted order.", "An important symbol.",
    "It groups scripted files for a test.", "Its files call each other in a scripted order.",
    "Scripted modules pass scripted data along.", "Scripted step 1 of this code hands its data on.",
    "Scripted explanation of Flask.route and what it is for.", "Scripted how it works of src, said plainly.",
)


def docstring_sentences(root: Path) -> list[str]:
    out: list[str] = []
    for path in sorted(root.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    paragraph = doc.split("\n\n")[0]  # the prose head, not parameter lists or examples
                    out.extend(split_sentences(" ".join(paragraph.split())))
    return out


def main() -> int:
    roots = [Path(a) for a in sys.argv[1:]] or [Path("/tmp/h27b/flask"), Path("/tmp/h27b/requests")]
    corpus = _corpus(instruction_texts())
    prose = [s for root in roots for s in docstring_sentences(root)] + list(SCRIPTED)
    judged = [s for s in prose if len(content_words(s)) >= MIN_WORDS]
    echo_judged = [s for s in ECHOES if len(content_words(s)) >= MIN_WORDS]
    prose_scores = sorted(((overlap(s, corpus), s) for s in judged), reverse=True)
    echo_scores = [overlap(s, corpus) for s in echo_judged]
    print(f"real prose sentences: {len(prose)} ({len(judged)} with >= {MIN_WORDS} content words); "
          f"echoes: {len(ECHOES)} ({len(echo_judged)} judged)")
    for threshold in (0.5, 0.6, 0.67, 0.7, 0.75, 0.8, 0.9):
        rejected = sum(1 for score, _ in prose_scores if score >= threshold)
        caught = sum(1 for score in echo_scores if score >= threshold)
        print(f"  threshold {threshold:.2f}: real prose rejected {rejected}/{len(judged)} "
              f"({rejected / max(1, len(judged)):.2%}), echoes caught {caught}/{len(echo_judged)}")
    print("highest-scoring real prose:")
    for score, sentence in prose_scores[:8]:
        print(f"  {score:.2f} {sentence[:110]}")
    print("echo scores:", ", ".join(f"{s:.2f}" for s in echo_scores))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
