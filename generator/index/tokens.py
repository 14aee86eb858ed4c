"""Code-aware token text: what the full-text index sees instead of raw source.

Identifiers are split the way people talk about them (`parseConfig` -> `parse config`, `parse_config` ->
`parse config`) and kept whole as well so that an exact identifier still scores higher than its parts.
Dotted names (`flask.app.Flask`) are kept whole and split; paths contribute their segments and stems.
Everything is lower-cased. The index tokenises this text on whitespace only, so what is emitted here is
exactly the term list BM25 scores. The same function runs on queries, which keeps both sides aligned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

# a word, an identifier or a dotted name (letters, digits, underscores; dots between parts)
_WORD = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*|\d+(?:\.\d+)*", re.UNICODE)
# camelCase / PascalCase / ACRONYMWord boundaries
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+", re.UNICODE)

MAX_TOKEN_LEN = 40  # the index drops longer tokens anyway; cut them here so they cannot flood the text

# Words that carry no meaning in a question about code. They are dropped from queries only: the index
# keeps them so that a literal search still finds them.
_STOP_TEXT = """
a an and are as at be been being but by can could did do does doing done for from had has have having how
i if in into is it its itself me my of on or our over should so some such than that the their them then
there these they this those through to under up us was we were what when where which while who whom why will
with within without would you your yours
"""
QUERY_STOP_WORDS = frozenset(_STOP_TEXT.split())


def split_identifier(word: str) -> list[str]:
    """`HTTPServerError_code2` -> ["http", "server", "error", "code", "2"] (lower-cased parts)."""
    parts: list[str] = []
    for piece in word.split("_"):
        if piece:
            parts.extend(m.group(0).lower() for m in _CAMEL.finditer(piece))
    return parts


def _word_terms(word: str) -> Iterator[str]:
    lowered = word.lower()
    if "." in word:
        # a dotted name: keep it whole, then each component (which is itself split)
        if len(lowered) <= MAX_TOKEN_LEN:
            yield lowered
        for component in word.split("."):
            yield from _word_terms(component)
        return
    parts = split_identifier(word)
    if (len(parts) != 1 or parts[0] != lowered) and len(lowered) <= MAX_TOKEN_LEN:
        yield lowered
    for part in parts:
        if len(part) <= MAX_TOKEN_LEN:
            yield part


@lru_cache(maxsize=65536)
def _cached_terms(word: str) -> tuple[str, ...]:
    # identifiers repeat endlessly in code: splitting each distinct word once saves most of the tokenizing
    return tuple(_word_terms(word))


def terms(text: str) -> list[str]:
    """All index terms of `text`, in order, lower-cased; identifiers whole and split."""
    out: list[str] = []
    for word in _WORD.findall(text):
        out.extend(_cached_terms(word))
    return out


class _TermText(dict[str, str]):
    """word -> its terms joined by spaces ('' when it has none), filled on first sight. Bounded: emptied
    when full (identifiers repeat within a file and a package, so the next words refill it at once)."""

    limit = 1 << 17

    def __missing__(self, word: str) -> str:
        if len(self) >= self.limit:
            self.clear()
        text = self[word] = " ".join(_cached_terms(word))
        return text


_term_text = _TermText()


def term_text(text: str) -> str:
    """`" ".join(terms(text))`, without a list of every term: a C-level map over the words, each word's
    terms joined once (token_text made ~half of a cold monorepo index step's CPU this way)."""
    return " ".join(filter(None, map(_term_text.__getitem__, _WORD.findall(text))))


def path_terms(path: str) -> list[str]:
    """Terms of a repository path: the whole path, each segment, and the segments' stems and parts."""
    out = [path.lower()] if len(path) <= MAX_TOKEN_LEN else []
    for segment in path.split("/"):
        stem = segment.rsplit(".", 1)[0] if "." in segment.lstrip(".") else segment
        if not stem:
            continue
        out.append(stem.lower())
        out.extend(p for p in terms(stem) if p != stem.lower())
    return out


def token_text(text: str, path: str = "", extra: Iterable[str] = ()) -> str:
    """The code-aware token field for a document: path terms, extra terms (symbol names), then the text."""
    pieces: list[str] = []
    if path:
        pieces.extend(path_terms(path))
    for item in extra:
        pieces.append(term_text(item))
    pieces.append(term_text(text))
    return " ".join(filter(None, pieces))


def query_terms(query: str) -> list[str]:
    """Terms of a search query with question stop words removed (all of them if nothing else is left)."""
    found = terms(query)
    kept = [t for t in found if t not in QUERY_STOP_WORDS]
    return kept or found


def identifiers(query: str) -> list[str]:
    """Identifiers a query names explicitly: CamelCase, snake_case, dotted or backticked words."""
    seen: dict[str, None] = {}
    for tick in re.findall(r"`([^`]{1,200})`", query):
        for match in _WORD.finditer(tick):
            seen.setdefault(match.group(0), None)
    for match in _WORD.finditer(query):
        word = match.group(0)
        if "_" in word or "." in word or re.search(r"[a-z][A-Z]|[A-Z].*[A-Z]", word):
            seen.setdefault(word.strip("."), None)
    return [w for w in seen if w]
