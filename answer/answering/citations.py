"""Citations a model wrote inline: the paths its answer names, checked against the evidence it was shown.

Models often cite in the prose (`src/app.py:12`) and leave the `citations` list empty. Pure: the answer text
and the evidence paths in; out come the evidence paths the answer names (in order of first mention) and the
path-like names that are not evidence paths (an answer citing a file it was not shown: the grader lowers
confidence and says which).

Small models often cite nothing at all, not even inline, yet name the functions and classes they explain.
`defining_paths` attaches those citations deterministically: the evidence files that define the symbols the
answer names. The grader still counts such an answer as one the model did not cite itself.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# a path-like token: segments of word characters, dots and dashes joined by "/", ending in .ext, optionally
# followed by :line or :start-end; never preceded by a character that would make it part of a URL or a word
_PATH = re.compile(r"(?<![\w/.:@-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]{1,10})(?::\d+(?:-\d+)?)?(?![\w/])")


@dataclass(frozen=True)
class InlinePaths:
    cited: tuple[str, ...]  # evidence paths the answer names, first mention first
    outside: tuple[str, ...]  # repository-looking paths (with a folder) that are not in the evidence


def inline_paths(answer: str, evidence_paths: Sequence[str]) -> InlinePaths:
    """The evidence paths `answer` names inline, and the folder paths it names that the evidence lacks.

    A bare file name (`app.py`) counts when exactly one evidence path has that name; a name that could be a
    dotted identifier (`json.dumps`) is never flagged, only a token with a folder (`src/x.py`) is.
    """
    allowed = list(dict.fromkeys(evidence_paths))
    exact = set(allowed)
    by_name: dict[str, list[str]] = {}
    for path in allowed:
        by_name.setdefault(posixpath.basename(path), []).append(path)
    cited: dict[str, None] = {}
    outside: dict[str, None] = {}
    for match in _PATH.finditer(answer):
        token = match.group(1).removeprefix("./").rstrip(".")
        if token in exact:
            cited.setdefault(token, None)
        elif "/" not in token and len(by_name.get(token, ())) == 1:
            cited.setdefault(by_name[token][0], None)
        elif "/" in token:
            suffixed = [p for p in allowed if p.endswith("/" + token)]
            if len(suffixed) == 1:  # relative to a package folder: `flask/app.py` for src/flask/app.py
                cited.setdefault(suffixed[0], None)
            else:
                outside.setdefault(token, None)
    return InlinePaths(cited=tuple(cited), outside=tuple(outside))


def defining_paths(names: Sequence[str], definitions: Mapping[str, Sequence[str]],
                   texts: Mapping[str, str]) -> tuple[str, ...]:
    """Evidence paths that define the code names an answer uses, first name first.

    `definitions`: evidence path -> qualified names defined there. A name matches a definition by its full
    qualified name or by its last component (`Session.send` or `send`); a name defined nowhere in the
    evidence counts only when exactly one evidence text mentions it (a unique, unambiguous source).
    """
    cited: dict[str, None] = {}
    for name in names:
        last = name.rsplit(".", 1)[-1]
        found = [path for path, quals in definitions.items()
                 if any(q == name or q.rsplit(".", 1)[-1] == last for q in quals)]
        if not found:
            pattern = re.compile(rf"(?<![\w.]){re.escape(last)}(?!\w)")
            found = [path for path, text in texts.items() if pattern.search(text)]
            if len(found) != 1:
                continue
        for path in found:
            cited.setdefault(path, None)
    return tuple(cited)
