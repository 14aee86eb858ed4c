"""How big a regular expression becomes once compiled, read from its text before compiling it.

The `regex` module expands a counted repeat into copies of what it repeats: `(?:(?:x{1000}){1000}){30}`
compiles to thirty million nodes, 18-24 s of CPU holding the GIL, before any time budget on matching can
start. `expanded_size` is a linear scan of the pattern that multiplies nested repeat counts, so a pattern
whose compiled form would be that large is refused before `regex.compile` ever sees it. Pure.

The scan over-counts rather than under-counts: alternatives are added (as if every branch were taken), a
group's size is at least 1, `{m,}` counts m copies. Character classes, escapes and `(?#...)` comments are
skipped as single atoms.
"""

from __future__ import annotations

import re

# On this machine regex.compile takes ~1 s per million expanded nodes; 200,000 is ~0.2 s and admits any
# single repeat up to the module's own {65535} limit.
MAX_EXPANDED_SIZE = 200_000

_COUNT = re.compile(r"\{(\d*)(?:,(\d*))?\}")


def expanded_size(pattern: str, cap: int = MAX_EXPANDED_SIZE) -> int:
    """The number of nodes `pattern` expands to, counted up to just past `cap` (the count stops growing
    there, so a pattern of nested huge repeats costs no big-number arithmetic)."""
    stack: list[int] = [0]  # the running size of each open group, outermost first
    last = 0  # the size of the atom a quantifier would apply to
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            last, i = 1, i + 2
        elif char == "[":
            last, i = 1, _class_end(pattern, i)
        elif char == "(" and pattern.startswith("(?#", i):
            end = pattern.find(")", i)
            i = n if end < 0 else end + 1
            continue
        elif char == "(":
            stack.append(0)
            last, i = 0, i + 1
            continue
        elif char == ")" and len(stack) > 1:
            last, i = max(1, stack.pop()), i + 1
        elif char == "{" and last and (count := _COUNT.match(pattern, i)) and (count[1] or count[2]):
            low, high = count[1], count[2]
            times = int(high) if high else int(low or 0)
            grown = min(last * max(times, 1), cap + 1)
            stack[-1] = min(stack[-1] + grown - last, cap + 1)
            last, i = grown, count.end()
            continue
        elif char in "*+?|":
            i += 1
            continue
        else:
            last, i = 1, i + 1
        stack[-1] = min(stack[-1] + last, cap + 1)
    return min(sum(stack), cap + 1)


def _class_end(pattern: str, start: int) -> int:
    """The index just past the character class opening at `start` (the pattern's end if never closed)."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":  # a leading ']' is a literal
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
        elif pattern.startswith("[:", i):  # a POSIX class [:alpha:]
            end = pattern.find(":]", i + 2)
            i = i + 1 if end < 0 else end + 2
        elif pattern[i] == "]":
            return i + 1
        else:
            i += 1
    return len(pattern)
