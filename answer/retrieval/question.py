"""A question parsed once into one typed value that every retrieval list, the evidence and the grader read.

Before this, each reader re-extracted what it needed from the raw text: the full-text terms once per table
(four times a question), the code names twice by two different rules, the quoted phrases, the words that ask
for tests or docs, the relational sides. `parse_query` does it once per distinct text (cached per process:
a question's tiers, its evidence and its grade share the value).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from answer.retrieval.query import (
    Identifiers,
    extract_identifiers,
    leading_scope,
    relational_parts,
    scopes_as_dots,
)
from generator.index.tokens import identifiers, query_terms

MAX_QUERY_TERMS = 128  # distinct full-text terms sent to BM25
MAX_CODE_NAMES = 64
# quoted text in a question: "…", '…', `…` (a bug report quoting an error message or a line of code)
_QUOTED = re.compile(r"\"([^\"\n]{6,200})\"|(?<!\w)'([^'\n]{6,200})'(?!\w)|`([^`\n]{6,200})`")
# the message of an exception line in a traceback: "ValueError: invalid literal for int()"
# (each line is tried once from its start, the message bounded: linear in the question's length)
_ERROR_LINE = re.compile(
    r"^[ \t]*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Warning|Panic)\b:[ \t]+([^\n]{6,200})$", re.M)
MAX_PHRASES = 8


def exact_phrases(question: str) -> list[str]:
    """Text a question quotes that code may hold verbatim: quoted strings with more than one word or with
    punctuation (an error message, a snippet), and the message of a traceback's exception line. A lone
    identifier is not a phrase (identifiers are matched as names)."""
    found: dict[str, None] = {}
    for match in _QUOTED.finditer(question):
        text = next(g for g in match.groups() if g is not None).strip()
        one_word = not re.search(r"\s", text)
        # a lone identifier is a name and a lone path a path: other lists match those
        if not re.fullmatch(r"[\w.]+(?:\(\))?", text) and not (one_word and re.search(r"[/\\]", text)):
            found.setdefault(text, None)
    for match in _ERROR_LINE.finditer(question):
        found.setdefault(match.group(1).strip(), None)
    return list(found)[:MAX_PHRASES]


# a question asking to understand the code (how, why, what …): its first line opens with a wh-word, or with
# an auxiliary verb and ends with a question mark ("Does the session retry on a timeout?"). Anything else is a
# task or a report: a bug report, a feature request, a commit message ("Fix …", "Allow …", a traceback)
_WH_WORD = re.compile(r"^\W*(?:how|what|why|where|which|when|who|whose)\b", re.I)
_AUXILIARY = re.compile(
    r"^\W*(?:is|are|was|were|do|does|did|can|could|should|would|will|has|have|may|must)\b", re.I)


def is_explanatory(question: str) -> bool:
    """Whether `question` asks how the code works rather than where to change it (see _WH_WORD)."""
    first = question.strip().split("\n", 1)[0].strip()
    return bool(_WH_WORD.match(first)) or (first.endswith("?") and bool(_AUXILIARY.match(first)))


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    text: str
    identifiers: Identifiers  # what the question names (backticks, files, dotted, CamelCase, snake_case)
    code_names: tuple[str, ...]  # identifiers by the index's own tokenizer rules: literal and name lookups
    # full-text terms (issue references and links left out), stop words dropped, distinct, at most
    # MAX_QUERY_TERMS
    terms: tuple[str, ...]
    words: frozenset[str]  # lower-cased alphabetic words: what asks for tests, docs, examples (not calls)
    phrases: tuple[str, ...]  # quoted text and exception messages, matched verbatim
    sides: tuple[str, str] | None  # the two sides of a relational question
    explanatory: bool = False  # asks how the code works, not where to change it (is_explanatory)
    scope: str = ""  # the component a commit message names first (`fix(parser): …`: query.leading_scope)

    @property
    def fts_text(self) -> str:
        return " ".join(self.terms)

    @property
    def semantic_text(self) -> str:
        return lead_paragraph(_ISSUE_NUMBERS.sub(" ", self.text))[:MAX_SEMANTIC_CHARS]


# a word written as a call, `test()` or `render()`: code, though a plain word has no case or separator to
# show it (a commit message's "Add more configuration to test()" names the function `test`); not a
# conventional commit's empty scope, `feat(): …`
_CALL_FORM = re.compile(r"(?<![\w.$])([A-Za-z_]\w*)\(\)(?!:)")


def _code_names(text: str) -> list[str]:
    """The identifiers as written (and a plain word written as a call, `test()`), then the dotted form of
    those written with another scope separator (`registry::get` -> `registry.get`: the index's qualified
    name of the member)."""
    names = dict.fromkeys(identifiers(text))
    names.update(dict.fromkeys(m.group(1) for m in _CALL_FORM.finditer(text) if len(m.group(1)) >= 2))
    dotted = scopes_as_dots(text)
    if dotted != text:
        names.update(dict.fromkeys(identifiers(dotted)))
    return list(names)


# what an issue or a commit message carries that no code holds: references to other issues and pull
# requests (#1234, GH-1234) and links; their numbers and host words only add noise to the full-text terms
_REFERENCES = re.compile(r"https?://\S+|(?<![\w&#])(?:#|GH-)\d+\b")
# the numbers alone: a link's words can say what it is about (an issue title in its path, `/digest-auth`)
_ISSUE_NUMBERS = re.compile(r"(?<![\w&#/])(?:#|GH-)\d+\b")


def without_references(text: str) -> str:
    """`text` without issue references and links (the whole text if nothing else is left)."""
    kept = _REFERENCES.sub(" ", text)
    return kept if kept.strip() else text


MAX_SEMANTIC_CHARS = 4000
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_WORD = re.compile(r"\w+")
LEAD_WORDS = 4  # a lead paragraph shorter than this ("Hi,", "Fixes:") is joined by the next


def lead_paragraph(text: str) -> str:
    """The question's first paragraph: what the semantic tier embeds. A static embedding is the mean of its
    word pieces, so every further paragraph (a commit's or a report's body: details, lists, sign-offs,
    '---------') dilutes the topic the first one states. History sets with the default embedder
    (bench/history_bench.py --embedder default), the split not tuned on: hit@5 0.799 -> 0.805, MRR 0.642 ->
    0.644, function hit@5 0.511 -> 0.529 (the tuning split: MRR 0.675 -> 0.673); taking 15 or more words
    instead of 4 before stopping lost the gain on the tuning split (docs/embeddings.md)."""
    kept: list[str] = []
    words = 0  # counted per paragraph: thousands of empty paragraphs stay linear
    for paragraph in _PARAGRAPH_BREAK.split(text.strip()):
        kept.append(paragraph)
        words += len(_WORD.findall(paragraph))
        if words >= LEAD_WORDS:
            break
    return "\n\n".join(kept)


@lru_cache(maxsize=256)
def parse_query(text: str) -> ParsedQuery:
    terms: dict[str, None] = {}
    for term in query_terms(without_references(text)):
        terms.setdefault(term, None)
        if len(terms) >= MAX_QUERY_TERMS:
            break
    return ParsedQuery(
        text=text,
        identifiers=extract_identifiers(text),
        code_names=tuple(_code_names(without_references(text))[:MAX_CODE_NAMES]),
        terms=tuple(terms),
        # a word named as a call (`test()`) is the name of a function, not a request for tests or docs
        words=frozenset(w.lower() for w in re.findall(r"[A-Za-z]+", _CALL_FORM.sub(" ", text))),
        phrases=tuple(exact_phrases(text)),
        sides=relational_parts(text),
        explanatory=is_explanatory(text),
        scope=leading_scope(text),
    )
