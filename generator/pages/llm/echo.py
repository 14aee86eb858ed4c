"""Sentences of model prose that echo the prompt's own instructions, measured by word overlap.

A weak model asked to document code often writes back what it was told ("The function names are listed
exactly as provided in backticks.", "Use only the facts given here."). Such a sentence is filler, whatever
its words: it describes the prompt, not the code. The instruction sentences are the prompts' fixed text
(every template of prompts/ with its variables, comments and quoted or bracketed examples taken out, the
re-ask message, and the texts Instructor sends as the tool schema: the reply models' docstrings and field
descriptions).

A model sentence echoes an instruction when most of its content words (stopwords out, a light stem, code
spans out: they are the page's own names) are words of ONE instruction sentence: `overlap` is that share,
taken over the best-matching instruction sentence. Content words, not n-grams, because small models
paraphrase ("listed exactly as provided" for "written exactly as listed"). A sentence with fewer than
MIN_WORDS content words is never judged (too little to tell). ECHO_SHARE was measured with
bench/echo_bench.py (real docstring prose kept, echoes rejected); see docs/llm.md.

Pure functions; the instruction corpus is read once per process.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

PROMPTS = Path(__file__).parent / "prompts"
ECHO_SHARE = 0.6
MIN_WORDS = 4

_JINJA_COMMENT = re.compile(r"\{#.*?#\}", re.S)
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
# ("Flask.route"): an example in an instruction, not its words
_EXAMPLE = re.compile(r'"[^"\n]*"|\([^()\n]*\)')
_CODE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
_SPLIT = re.compile(r"(?<=[.!?:])\s+|\n+|\s+-\s+|^\s*-\s+", re.M)
_WORDS = re.compile(r"[a-z]+")
_STOP = frozenset("""a an the this that these those it its is are was were be been being of for in on to and
or with by from as at which who what when where how into onto via per all any some each both one two if then
than not no do does did only here there them they their you your we our us so such rather else out up about
just also may must can will should would could has have had own""".split())  # noqa: SIM905 - reads better as text


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(sentence: str) -> frozenset[str]:
    """The stemmed content words of `sentence`, code spans left out."""
    text = _CODE.sub(" ", sentence).lower()
    return frozenset(_stem(w) for w in _WORDS.findall(text) if w not in _STOP and len(w) > 1)


def template_sentences(text: str) -> list[str]:
    """The fixed sentences of a Jinja template: comments dropped, each variable or tag a sentence break
    (what a variable holds is the page's facts, not an instruction)."""
    text = _JINJA.sub("\n", _JINJA_COMMENT.sub(" ", text))
    return split_sentences(_EXAMPLE.sub(" ", text))


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SPLIT.split(text) if s and s.strip()]


@cache
def _corpus(extra: tuple[str, ...]) -> tuple[frozenset[str], ...]:
    sentences: list[str] = []
    for path in sorted(PROMPTS.glob("*.j2")):
        sentences.extend(template_sentences(path.read_text(encoding="utf-8")))
    for text in extra:
        sentences.extend(template_sentences(text))
    bags = {content_words(s) for s in sentences}
    return tuple(b for b in bags if len(b) >= 2)


def overlap(sentence: str, instructions: Iterable[frozenset[str]]) -> float:
    """Share of `sentence`'s content words found in the one instruction sentence that holds most of them."""
    mine = content_words(sentence)
    if not mine:
        return 0.0
    return max((len(mine & bag) / len(mine) for bag in instructions), default=0.0)


def echoed(text: str, extra: tuple[str, ...] = ()) -> str | None:
    """The first sentence of `text` that echoes an instruction sentence (prompts plus `extra`), or None."""
    corpus = _corpus(extra)
    for sentence in split_sentences(text):
        if len(content_words(sentence)) >= MIN_WORDS and overlap(sentence, corpus) >= ECHO_SHARE:
            return sentence
    return None
