"""Citations a model wrote inline: the paths its answer names, checked against the evidence it was shown.

Models often cite in the prose (`src/app.py:12`) and leave the `citations` list empty. Pure: the answer text
and the evidence paths in; out come the evidence paths the answer names (in order of first mention) and the
path-like names that are not evidence paths (an answer citing a file it was not shown: the grader lowers
confidence and says which).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
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
