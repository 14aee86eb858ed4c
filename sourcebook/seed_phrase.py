"""Find wallet recovery phrases (BIP-39 mnemonics) in text, for the redaction rules (sourcebook/redaction.py).

A recovery phrase is the whole wallet: twelve to twenty-four words from a fixed public list of 2048.
Two checks, either suffices:
- by the word list: twelve or more words in a row all from the BIP-39 English list, whatever surrounds
  them (`config_value = "legal winner thank …"`, a JSON array of the words, one numbered word a line).
  English prose breaks such a run within a few words ("the", "and", "for", "of", "is", "to" are not in
  the list). A run in alphabetical order is the list itself (a wordlist file), not a phrase:
  twelve random words come out sorted about once in 479 million.
- by what names it: a run of twelve short lower-case words with no function word, shortly after "mnemonic",
  "seed" or "recovery phrase" (other languages' lists, Electrum's).

The list ships as `bip39-english.txt` beside this module, byte for byte the standard's
(bitcoin/bips bip-0039/english.txt); tests/unit/test_redaction.py checks its SHA-256.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

WORDLIST_FILE = "bip39-english.txt"
WORDLIST_SHA256 = "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda"
PHRASE_WORDS = 12  # the shortest BIP-39 phrase


@cache
def wordlist() -> frozenset[str]:
    """The 2048 words of the BIP-39 English list."""
    words = resources.files("sourcebook").joinpath(WORDLIST_FILE).read_text(encoding="utf-8").split()
    if len(words) != 2048:
        raise RuntimeError(f"{WORDLIST_FILE} holds {len(words)} words, not 2048: the installation is damaged")
    return frozenset(words)


# Candidate runs: 12+ words of 3 to 8 letters (every list word's length; lower case, or capitalised) joined
# by what separates a phrase's words in code, config and prose: spaces, line breaks, quotes, commas, brackets,
# list numbering. `=`, `:`, `_`, `/` end a run (`name = "…"` leaves the name out). The pattern starts with
# the character before the first word, a small set, so that re skips ahead to it in C (a look-behind or a
# letter first made this rule cost as much as all the others together); each gap is bounded: linear.
_WORD_CHARS = r"[A-Za-z][a-z]{2,7}+(?![A-Za-z])"
_GAP = r"[\s,;\"'`\[\]().\-*#\d]{1,12}+"
_RUN = re.compile(rf"[\s\"'`\[(,]{_WORD_CHARS}(?:{_GAP}{_WORD_CHARS}){{{PHRASE_WORDS - 1},}}")
_WORD = re.compile(r"[A-Za-z]+")


def listed_phrases(text: str) -> list[tuple[int, int]]:
    """(start, end) of each run of 12+ BIP-39 words in a row that is not in alphabetical order."""
    words = wordlist()
    spans: list[tuple[int, int]] = []
    # the text's first word has no character before it: scan from a space put in front, then shift back
    for run in _RUN.finditer(" " + text[:200]) if text[:1].isalpha() else ():
        if run.start() == 0:
            spans.extend((start - 1, end - 1) for start, end in _streaks(run, words))
        break
    for run in _RUN.finditer(text):
        spans.extend(_streaks(run, words))
    return sorted(set(spans))


def _streaks(run: re.Match[str], words: frozenset[str]) -> list[tuple[int, int]]:
    """Spans of the list-word streaks of 12 or more in a candidate run, skipping alphabetical ones."""
    found: list[tuple[int, int]] = []
    streak: list[re.Match[str]] = []
    for word in [*_WORD.finditer(run.string, run.start(), run.end()), None]:
        if word is not None and word.group(0).lower() in words:
            streak.append(word)
            continue
        if len(streak) >= PHRASE_WORDS:
            spelled = [w.group(0).lower() for w in streak]
            if spelled != sorted(spelled):
                found.append((streak[0].start(), streak[-1].end()))
        streak = []
    return found


# Words no BIP-39 list holds and ordinary prose is full of: a run of words with none of these is a list
_STOPWORDS = frozenset({
    "the", "and", "for", "with", "that", "this", "from", "you", "your", "are", "was", "were", "have", "has",
    "had", "not", "but", "will", "would", "should", "its", "into", "then", "than", "when", "what", "which",
    "who", "how", "our", "they", "them", "their", "there", "these", "those", "his", "her", "she", "him",
    "been", "being", "does", "did", "may", "must", "each", "such", "can", "use", "used", "using", "via",
})
# What names a seed phrase near one (each a literal, so re skips ahead to it)
_CONTEXT = tuple(re.compile(word) for word in (
    "nemonic", "NEMONIC", "seed", "SEED", "hrase", "HRASE", "ecovery"))
_WINDOW = 600  # characters after the naming word in which the phrase may start
_NAMED_RUN = re.compile(r"\b[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,}")


def named_phrases(text: str) -> list[tuple[int, int]]:
    """(start, end) of runs of 12+ lower-case words holding 12 in a row with no function word, shortly after
    a word that names a seed phrase (mnemonic, seed, recovery phrase)."""
    hits = sorted(hit.start() for context in _CONTEXT for hit in context.finditer(text))
    windows: list[list[int]] = []  # the text after each naming word, overlapping windows merged
    for start in hits:
        if windows and start <= windows[-1][1]:
            windows[-1][1] = start + _WINDOW
        else:
            windows.append([start, start + _WINDOW])
    found: list[tuple[int, int]] = []
    for start, end in windows:
        for run in _NAMED_RUN.finditer(text, start, min(len(text), end)):
            words = run.group(0).split()
            if any(not _STOPWORDS.intersection(words[i:i + PHRASE_WORDS])
                   and len(set(words[i:i + PHRASE_WORDS])) >= PHRASE_WORDS - 1
                   for i in range(len(words) - PHRASE_WORDS + 1)):
                found.append(run.span())
    return found
