"""What a question names: code identifiers, file names, and the two sides of a relational question.

Pure functions over strings. Identifiers promote matching symbols in retrieval and feed confidence grading
("does the answer name anything the question asked about?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BACKTICKED = re.compile(r"`([^`\n]{1,120})`")
# a path-like token with an extension: src/flask/app.py, app.py, ./util.ts
_FILE_NAME = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,5})(?![\w/])")
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?(?![\w])")
_CAMEL = re.compile(
    r"(?<![\w.])([A-Z]+[a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z]+[0-9]*(?:[A-Z][a-z0-9]*)+|[A-Z]{2,}[a-z]\w*)\b"
)
_SNAKE = re.compile(r"(?<![\w.])(_{0,2}[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_{0,2})\b")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\(\)")
_DUNDER = re.compile(r"(?<![\w.])(__[A-Za-z]\w*?__)(?!\w)")

# extensions that mark a token as a file name rather than a dotted path (flask.app is a module, app.py a file)
_FILE_EXTENSIONS = frozenset(re.findall(r"\S+", """py pyi js mjs cjs jsx ts tsx go rs java c h
    cc cpp hpp cs rb php kt md rst txt toml cfg ini yaml yml json sh html css sql lock xml scm"""))
# dotted tokens in prose that are not code
_NOT_DOTTED = frozenset({"e.g", "i.e", "etc.", "vs.", "a.k.a"})


@dataclass(frozen=True, slots=True)
class Identifiers:
    names: tuple[str, ...]  # every identifier, in order of first appearance
    files: tuple[str, ...]  # the subset that are file names or paths

    def __bool__(self) -> bool:
        return bool(self.names)


# Scope separators other than the dot, between two identifiers: C++, Rust, PHP and Ruby `::`, PHP and C++
# `->` (`$this->fooBar`), PHP namespaces `Foo\Bar` (capitalised by convention: a lower-case letter after a
# backslash is more often an escape, `\n`), Ruby's `Class#method` of its docs. The index names a member
# `Class.member` in every language, so a question naming `registry::get` names the symbol `registry.get`.
_SCOPE = re.compile(r"(?<=\w)(?:::|->)\$?(?=[A-Za-z_])|(?<=\w)\\(?=[A-Z])|(?<=[a-z0-9])#(?=[a-z_]\w*\b)")


def scopes_as_dots(text: str) -> str:
    """`text` with the scope separators between identifiers written as dots (`Foo::bar` -> `Foo.bar`)."""
    return _SCOPE.sub(".", text)


def is_file_name(token: str) -> bool:
    ext = token.rsplit(".", 1)[-1].lower() if "." in token else ""
    return ext in _FILE_EXTENSIONS


def extract_identifiers(question: str) -> Identifiers:
    """Identifiers a question names: backticked text, file names, dotted paths, CamelCase and snake_case;
    a name written with another language's scope separator (`registry::get`, `$this->run`) also
    in its dotted form."""
    found: dict[str, None] = {}
    files: dict[str, None] = {}

    def add(token: str) -> None:
        token = token.strip().strip(".,;:!?'\"()[]{}")
        if token.endswith("()"):
            token = token[:-2]
        if len(token) < 2 or token.lower() in _NOT_DOTTED:
            return
        found.setdefault(token, None)
        if is_file_name(token) and ("." in token):
            files.setdefault(token, None)

    for match in _BACKTICKED.finditer(question):
        inner = scopes_as_dots(match.group(1).strip())
        # `app.route("/")` -> app.route ; `foo bar` (prose in backticks) -> each code-like word
        head = re.match(r"[\w./-]+", inner)
        if head and head.group(0) == inner.split("(")[0]:
            add(head.group(0))
        else:
            for word in re.findall(r"[A-Za-z_][\w.]*", inner):
                add(word)
    prose = _BACKTICKED.sub(" ", question)
    for match in _FILE_NAME.finditer(prose):
        if is_file_name(match.group(1)):
            add(match.group(1))
    dotted = scopes_as_dots(prose)
    for text in (prose, dotted) if dotted != prose else (prose,):
        for match in _DOTTED.finditer(text):
            token = match.group(1)
            if token.lower() in _NOT_DOTTED or is_file_name(token):
                continue
            add(token)
    for pattern in (_CAMEL, _SNAKE, _DUNDER, _CALL):
        for match in pattern.finditer(prose):
            add(match.group(1))
    # a dotted path also names its parts: "Flask.route" promotes symbol "route" of class "Flask"
    return Identifiers(names=tuple(found), files=tuple(files))


def identifier_parts(identifier: str) -> list[str]:
    """The pieces a symbol index can match: `flask.app.Flask.route` -> [..., "Flask.route", "route"]."""
    base = identifier.rsplit("/", 1)[-1]
    if is_file_name(base):
        return [base.rsplit(".", 1)[0]]
    parts = base.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


# A side longer than this is a clause, not a component: splitting on it searches for noise.
MAX_SIDE_WORDS = 5
# One side: 1 to MAX_SIDE_WORDS + 1 words (a leading "the" is dropped afterwards). Bounded, and lazy where
# the shortest side is wanted: with `.+?` and a `$` anchor, each "and" or "talk to" made the engine rescan
# the rest of the question, so time grew with the square of its length (128 KB: 20 s).
_SIDE = rf"\S+(?:\s\S+){{0,{MAX_SIDE_WORDS}}}"
_SHORT_SIDE = rf"\S+(?:\s\S+){{0,{MAX_SIDE_WORDS}}}?"
_RELATIONAL = (
    re.compile(
        rf"\bhow\s+(?:does|do|is|are|can)\s+(?P<a>{_SHORT_SIDE})\s+"
        r"(?:talk|talks|communicate|communicates|interact|interacts|connect|connects|integrate|integrates)"
        rf"\s+(?:to|with)\s+(?P<b>{_SIDE})$",
        re.IGNORECASE,
    ),
    re.compile(rf"\bbetween\s+(?P<a>{_SHORT_SIDE})\s+and\s+(?P<b>{_SIDE})$", re.IGNORECASE),
    re.compile(
        rf"\bhow\s+(?:does|do)\s+(?P<a>{_SHORT_SIDE})\s+(?:call|calls|use|uses|reach|reaches|invoke|invokes)"
        rf"\s+(?P<b>{_SIDE})$",
        re.IGNORECASE,
    ),
    re.compile(
        rf"^(?:how\s+(?:do|does)\s+)?(?P<a>{_SHORT_SIDE})\s+and\s+(?P<b>{_SHORT_SIDE})\s+"
        r"(?:talk|communicate|interact|connect|relate)\b",
        re.IGNORECASE,
    ),
)
_LEADING_NOISE = re.compile(r"^(?:the|a|an|this|that)\s+", re.IGNORECASE)
_PRONOUNS = frozenset({"it", "they", "them", "this", "that", "these", "those", "he", "she", "we", "you"})


def relational_parts(question: str) -> tuple[str, str] | None:
    """The two sides of a relational question ("how does X talk to Y", "between X and Y"), else None."""
    # trailing punctuation off here rather than by `[?.!]*$` in the patterns, which rescanned a run of it
    text = " ".join(question.split()).rstrip("?.! ")
    for pattern in _RELATIONAL:
        match = pattern.search(text)
        if not match:
            continue
        a = _LEADING_NOISE.sub("", match.group("a").strip(" ,"))
        b = _LEADING_NOISE.sub("", match.group("b").strip(" ,"))
        if not a or not b or a.lower() == b.lower():
            continue
        if any(len(side.split()) > MAX_SIDE_WORDS or side.lower() in _PRONOUNS for side in (a, b)):
            continue
        return a, b
    return None


# The component a commit message or a report title names before its text, by the conventions of each
# ecosystem: `scope: …` (Go, Rust, git itself: "middleware: fix …"), a conventional commit's
# `type(scope): …`, or a bracketed `[Scope] …` (Symfony's "[Console] …"). The type alone
# (`fix: …`, `chore: …`) names no component; the caller checks the scope against the repository's folders.
_LEADING_SCOPE = re.compile(r"^\s*(?:\[([\w./-]{2,60})\]|[A-Za-z]+\(([\w./-]{2,60})\)!?:|([\w./-]{2,60}):)\s")


def leading_scope(question: str) -> str:
    """The component a question names before its text (`middleware: fix …`, `fix(parser): …`,
    `[Console] …`), lower-cased; "" when it names none."""
    match = _LEADING_SCOPE.match(question)
    return next((g for g in match.groups() if g), "").lower() if match else ""


def normalize_question(question: str) -> str:
    """The cache form of a question: case-folded, whitespace collapsed, trailing punctuation dropped.

    Identifiers keep their spelling apart from case: `Flask.route` and `flask.route` ask the same thing.
    """
    return " ".join(question.casefold().split()).rstrip(" ?.!")
