"""The structured outputs the LLM writer asks for, and the validators that keep a model honest.

Each model extends a draft of `generator.pages.writer` (so the page templates render it unchanged) with
validators
that read the facts of the page from Instructor's validation context (`info.context`, a `Known`).

Required and optional parts are treated differently (partial acceptance). A REQUIRED field (the summary; the
one field of a single-section model) that names a symbol or path absent from the facts, is filler, echoes
the prompt, or carries Markdown/HTML that would break the page (headings, code fences, tags, tables, leaked
tool-call text) raises ValueError, and the provider re-asks with that reason. An invalid OPTIONAL entry (a
docstring for a symbol that already has one, a key symbol or key path the facts do not hold, a section with
an unknown name in it) is dropped and noted in the draft's `dropped` list, and the rest of the draft is kept:
one bad entry must not throw away a page a weak model otherwise got right.

Before any check, JSON and tool-call residue that local models leave in strings (`",`, `"}`, stray quotes,
`</tool_call>`, `<|im_end|>`) and a backtick left unclosed are cleaned deterministically, so they never reach
a page or a summary table, and never cost a re-ask.

Small models get one symbol per call (`SymbolExplanation`): its one field is checked like a summary, against
the symbol's own name (restating it is not an explanation); the writer attaches the qualified name itself.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, ValidationInfo, create_model, model_validator

from generator.pages.llm.echo import echoed
from generator.pages.writer import (
    FileDraft,
    ItemNote,
    ModuleDraft,
    OverviewDraft,
    SymbolNote,
    TopicDraft,
    TopicSection,
)
from sourcebook.claims import CodeFacts, check_claims

MAX_FIELD_CHARS = 3000
MAX_DOCSTRING_CHARS = 400
MIN_SUMMARY_WORDS = 3  # "a", "LLMFileDraft": what a weak model echoes is not a summary
MIN_SECTION_WORDS = 3

_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
_BREAKERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\s{0,3}#{1,6}\s", re.M), "a Markdown heading (sections are added by the page itself)"),
    (re.compile(r"^\s{0,3}(```|~~~)", re.M), "a code block"),
    (re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>"), "HTML tags"),
    (re.compile(r"<\|[a-z_]+\|>|</?tool_call>|</?function|\"(?:name|arguments|parameters)\"\s*:"),
     "tool-call or JSON text"),
    (re.compile(r"\{\{|\{%|%\}"), "template syntax ({{ or {%)"),
    (re.compile(r"^\s*\|.*\|\s*$", re.M), "a table"),
    (re.compile(r"^\s*(?:={3,}|-{3,})\s*$", re.M), "a horizontal rule or underline heading"),
)
_FILLER = re.compile(
    r"(?i)\s*(?:n/?a|none|nothing|tbd|todo|not applicable|no caveats|unknown|-+|\.{3}|…)\.?\s*")
# Phrases of our own prompts that a weak model copies into its answer instead of describing the code.
_ECHO = re.compile(
    r"(?i)\b(?:developer wiki|for a new colleague|senior engineer|documenting (?:one|the) (?:file|module)|"
    r"(?:qualified|file) name exactly as listed|the facts and code given|leave (?:it|the field) out|"
    r"plain markdown sentences|rules for every text field|"
    # re-ask reasons and prompt rules a weak model publishes as prose
    r"previous (?:reply|answer|response) was rejected|json structure|(?:is|was) (?:invalid|rejected) because|"
    r"(?:names|symbols|paths) are listed exactly|exactly as (?:provided|given|listed)|"
    r"as provided in backticks|validation error)\b"
    r"|(?:^|[.!?]\s+)I\s+(?:am|'m|will|can|have|would)\b")  # "i am a developer": the model on itself
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# Words that carry no information about what the code does: a summary made only of these and the file's
# own name ("A Requests session.", "The sessions module.") restates the name.
_STOP = frozenset("""a an the this that these those it its is are was be been being of for in on to and or
with by from as at which who what when where how into onto via per all any some each both one two file
files module modules package packages class classes function functions method methods code source python
defines define defined contains contain provides provide implements implement includes include holds hold
handles main core basic simple various several utility utilities helper helpers object objects type types
part parts here there used uses use""".split())  # noqa: SIM905 - a word list reads better as text
_IDENT_LIKE = re.compile(r"[\w./\-]+")
_SOURCE_EXT = re.compile(
    r"\.(?:py|pyi|js|jsx|mjs|ts|tsx|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|scala|md|rst|toml|ya?ml|"
    r"cfg|ini|txt|json|lock|sh|xml|html|css|csv|sql|in|mk)$|^(?:Makefile|Dockerfile|Procfile|Gemfile)$")

# -- residue -------------------------------------------------------------------------------------------------

# reST roles (`:func:`echo``, `:class:`~pkg.Ctx``) become code spans; field markers (`:param message:`)
# become the bare name; an overload's index (`prompt~2`, how symbols of one name are told apart) goes
_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|attr|mod|obj|data|exc|const|ref|doc|term|envvar|option):"
                   r"`~?([^`]+)`")
_FIELD = re.compile(r":(?:param|parameter|arg|argument|key|keyword|type|raises?|returns?|rtype|var|ivar|cvar)"
                    r"(?:\s+[\w.]+)?\s+([A-Za-z_]\w*):|:(returns?|rtype):")
_OVERLOAD = re.compile(r"(?<=[A-Za-z0-9_])~\d+\b")


def clean_markup(text: str) -> str:
    """`text` with reST roles rendered as code spans, field markers reduced to names, overload indexes cut."""
    out = _ROLE.sub(lambda m: f"`{m.group(1)}`", text)
    out = _FIELD.sub(lambda m: f"`{m.group(1)}`:" if m.group(1) else f"{m.group(2)}:", out)
    return _OVERLOAD.sub("", out)


_TOOL_TOKENS = re.compile(r"</?tool_call>|<\|[a-z_]+\|>|</?function(?:=[^>]*)?>|</?tool_response>")
_LEADING_KEY = re.compile(r'^\s*\{?\s*"[A-Za-z_]+"\s*:\s*"')  # '"summary": "The file…' copied into a value
_TRAILING = re.compile(r'(?:\s*(?:\\?"\s*)?[,}\]]+)+\s*$|\s*\\?"\s*$')
_RESIDUE_CHARS = ' \t\r\n\\",}]'  # every character _TRAILING can match
MAX_RESIDUE = 1000


def _trailing(text: str) -> re.Match[str] | None:
    """_TRAILING's match at the end of `text`, searched only in the run of residue characters that ends it
    (its last MAX_RESIDUE characters: longer debris loses that much a pass): a search from every position
    of a long text was quadratic (16,000 characters of `, , …` took 46 s), and a match can only lie in
    that run."""
    start = max(len(text.rstrip(_RESIDUE_CHARS)), len(text) - MAX_RESIDUE)
    return _TRAILING.search(text, start)


def clean_residue(text: str) -> str:
    """`text` without the JSON/tool-call debris small models leave in string values.

    Deterministic and conservative: only debris at the ends of the text (`",`, `"}`, `"]`, a lone quote)
    and tool-call markers anywhere are removed; quotes that pair up inside the text are kept.
    """
    out = clean_markup(_TOOL_TOKENS.sub("", text)).replace('\\"', '"').strip()
    out = _LEADING_KEY.sub("", out)
    for _ in range(3):  # '"}]' and similar stacks, one layer per pass
        tail = _trailing(out) if _trailing_is_residue(out) else None
        trimmed = out[:tail.start()] if tail is not None else out
        if trimmed.startswith('"') and trimmed.count('"') % 2:
            trimmed = trimmed[1:]
        if trimmed == out:
            break
        out = trimmed.strip()
    if len(out) >= 2 and out[0] == out[-1] == '"' and out.count('"') == 2:
        out = out[1:-1].strip()  # the whole value wrapped in quotes once more
    if out.count("`") % 2:
        # one backtick never closed ("the `CaseInsensitiveDict class"): spans pair from the left, so the
        # last one is the unmatched one; dropping it keeps the sentence instead of re-asking for it
        at = out.rfind("`")
        out = (out[:at] + out[at + 1:]).strip()
    return out


def _trailing_is_residue(text: str) -> bool:
    tail = _trailing(text)
    if tail is None:
        return False
    if '"' in tail.group(0):
        return text.count('"') % 2 == 1 or bool(re.search(r'"\s*[,}\]]', tail.group(0)))
    tail_text = tail.group(0)
    # prose never ends in `,`; a closing bracket is debris only when nothing in the text opens it
    return ("," in tail_text or ("}" in tail_text and text.count("{") < text.count("}"))
            or ("]" in tail_text and text.count("[") < text.count("]")))


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return clean_residue(value)
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


# -- facts ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Known:
    """The facts a draft may refer to; passed to Instructor as the validation context."""

    symbols: frozenset[str] = frozenset()  # qualified names that may be named
    top: frozenset[str] = frozenset()  # top-level names of the file: `Top.x` must be a known qualname
    paths: frozenset[str] = frozenset()  # repository paths (files and dirs) that may be named
    items: frozenset[str] = frozenset()  # paths allowed in key_items / key_modules
    undocumented: frozenset[str] = frozenset()  # qualnames that may receive a generated docstring
    basenames: frozenset[str] = field(default=frozenset())
    name_words: frozenset[str] = frozenset()  # words of the page's own name: restating them is not content
    code: tuple[CodeFacts, ...] = ()  # the named symbols' source: prose claims about them are checked

    @classmethod
    def build(cls, *, symbols: Iterable[str] = (), top: Iterable[str] = (), paths: Iterable[str] = (),
              items: Iterable[str] = (), undocumented: Iterable[str] = (), subject: str = "",
              code: Iterable[CodeFacts] = ()) -> Known:
        all_paths: set[str] = set()
        for raw in [*paths, *items]:
            p = norm_path(raw)
            while p:  # a path and every directory above it
                all_paths.add(p)
                p = posixpath.dirname(p)
        return cls(symbols=frozenset(symbols), top=frozenset(top), paths=frozenset(all_paths),
                   items=frozenset(norm_path(i) for i in items), undocumented=frozenset(undocumented),
                   basenames=frozenset(posixpath.basename(p) for p in all_paths),
                   name_words=frozenset(_name_words(subject)), code=tuple(code))

    def as_context(self) -> dict[str, Any]:
        return {"known": self}


def _name_words(subject: str) -> set[str]:
    words = set()
    for word in _WORD.findall(subject.replace("_", " ")):
        w = word.lower()
        words.update({w, w.removesuffix("s"), w.removesuffix("es")})
    return words - _SOURCE_EXTS


_SOURCE_EXTS = frozenset({"py", "pyi", "js", "ts", "go", "rs", "java", "rb", "md", "c", "h"})


def norm_path(path: str) -> str:
    path = path.strip().strip("`").strip()
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/")


def _known(info: ValidationInfo) -> Known:
    ctx = info.context or {}
    known = ctx.get("known") if isinstance(ctx, dict) else None
    return known if isinstance(known, Known) else Known()


# -- checks --------------------------------------------------------------------------------------------------


def check_text(name: str, text: str, known: Known, *, limit: int = MAX_FIELD_CHARS,
               min_words: int = 1) -> None:
    """Raise ValueError (the re-ask message) when `text` would break the page or names unknown things."""
    if not text.strip():
        raise ValueError(f"{name} is empty: write it, or leave the field out")
    if _FILLER.fullmatch(text):
        raise ValueError(f"{name} is filler ({text.strip()!r}): leave the field out instead")
    if len(text.split()) < min_words:
        raise ValueError(f"{name} is too short ({text.strip()!r}): write at least one full sentence")
    if len(text) > limit:
        raise ValueError(f"{name} is too long ({len(text)} characters, at most {limit}): shorten it")
    if text.count("`") % 2:
        raise ValueError(f"{name} has an unbalanced backtick")
    outside = _CODE_SPAN.sub(" ", text)
    for pattern, what in _BREAKERS:
        if pattern.search(outside if what != "a code block" else text):
            raise ValueError(f"{name} contains {what}; write plain sentences instead")
    if _ECHO.search(outside):
        raise ValueError(f"{name} repeats the instructions ({_ECHO.search(outside).group(0)!r}) instead of "  # type: ignore[union-attr]
                         "describing the code: say what the code does")
    copied = echoed(text, instruction_texts())
    if copied is not None:
        raise ValueError(f"{name} repeats the instructions ({_short_echo(copied)!r}) instead of describing "
                         "the code: say what the code does")
    for match in _CODE_SPAN.finditer(text):
        _check_mention(name, match.group(2).strip(), known)


def check_code_claims(name: str, text: str, known: Known) -> None:
    """Raise ValueError when `text` says of a named symbol what its code contradicts or does not bear out
    (sourcebook/claims.py, the checks answers are graded by); nothing to do without `known.code`."""
    if not known.code:
        return
    failed = check_claims(text, known.code, code_text="\n".join(f.body for f in known.code))
    if failed:
        raise ValueError(f"{name} states what the code does not: "
                         + "; ".join(c.describe() for c in failed[:2]) + ". Say only what the code shows")


def _short_echo(sentence: str) -> str:
    return sentence if len(sentence) <= 80 else sentence[:77] + "..."


def _descriptions(schema: Any) -> Iterable[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "description" and isinstance(value, str):
                yield value
            else:
                yield from _descriptions(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _descriptions(value)


@cache
def instruction_texts() -> tuple[str, ...]:
    """What the model is told besides the templates: the re-ask message, the section guidance, and every
    description Instructor sends in a reply model's schema (its docstring, its fields')."""
    from sourcebook.provider import REASK_INSTRUCTION

    texts = [REASK_INSTRUCTION.replace("{reason}", "\n"), *SECTION_HELP.values(), TOPIC_SUMMARY_HELP,
             TOPIC_SECTION_HELP]
    models = [m for m in globals().values() if isinstance(m, type) and issubclass(m, BaseModel)
              and m.__module__ == __name__ and not m.__name__.startswith("_")]
    models.extend(section_model(name) for name in SECTION_HELP)
    for model in models:
        texts.extend(_descriptions(model.model_json_schema()))
    return tuple(dict.fromkeys(texts))


def check_prose(name: str, text: str, known: Known, *, min_words: int = MIN_SUMMARY_WORDS,
                limit: int = MAX_FIELD_CHARS) -> None:
    """check_text, plus: the text must say something beyond the page's own name (not filler)."""
    check_text(name, text, known, min_words=min_words, limit=limit)
    content = [w for w in _WORD.findall(_CODE_SPAN.sub(" ", text).replace("_", " "))
               if w.lower() not in _STOP and w.lower() not in known.name_words]
    if not content and not _CODE_SPAN.search(text):
        raise ValueError(f"{name} only restates the name ({text.strip()!r}): say what the code does and "
                         "which symbols do it")


def _check_mention(name: str, span: str, known: Known) -> None:
    if not _IDENT_LIKE.fullmatch(span.removesuffix("()")):
        return  # an expression or a snippet: not a claim that a name exists
    span = span.removesuffix("()")
    if "/" in span and not span.startswith(("http:", "https:")):
        if known.paths and norm_path(span) not in known.paths:
            raise ValueError(f"{name} names the path `{span}`, which is not in the facts; name only listed "
                             "paths, exactly as written")
        return
    # a bare file name must be one of the facts' files (`requirements.txt` named for a file that has none);
    # a member spelled like one (`Response.json`) is a symbol, checked below
    member = span in known.symbols or span.split(".", 1)[0] in known.top
    if (_SOURCE_EXT.search(span) and not member and known.basenames
            and posixpath.basename(span) not in known.basenames):
        raise ValueError(f"{name} names the file `{span}`, which is not in the facts")
    head = span.split(".", 1)[0]
    if "." in span and head in known.top and span not in known.symbols:
        raise ValueError(f"{name} names `{span}`, but `{head}` in this file has no such member; "
                         f"use only listed symbols")


def resolve_paths(text: str, known: Known) -> str:
    """`text` with each backticked path that names exactly one known path by a shorter form written out in
    full: `requests/hooks.py` or `requests.sessions.py` (a module's dotted name with the extension) for
    `src/requests/hooks.py`. Small models shorten paths; a unique match is a repair, not a guess, so it
    costs no re-ask. Anything ambiguous or unknown is left for the validators to refuse."""
    if not known.paths or "`" not in text:
        return text

    def full(match: re.Match[str]) -> str:
        ticks, inner = match.group(1), match.group(2)
        span = inner.strip()
        ext = _SOURCE_EXT.search(span)
        if "/" not in span and not (ext and "." in span[:ext.start()]):
            return match.group(0)  # a symbol, or a bare file name (checked by its basename)
        forms = [norm_path(span)]
        if ext and "/" not in span:
            forms.append(span[:ext.start()].replace(".", "/") + ext.group(0))
        for form in forms:
            if form in known.paths:
                return match.group(0) if form == span else f"{ticks}{form}{ticks}"
            found = [p for p in known.paths if p.endswith("/" + form)]
            if len(found) == 1:
                return f"{ticks}{found[0]}{ticks}"
        return match.group(0)

    return _CODE_SPAN.sub(full, text)


def _resolve(value: Any, known: Known) -> Any:
    if isinstance(value, str):
        return resolve_paths(value, known)
    if isinstance(value, list):
        return [_resolve(v, known) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, known) for k, v in value.items()}
    return value


class _Cleaned(BaseModel):
    """A model of a model's reply: template residue (end-of-turn markers, echoed field names) is taken off
    every string before validation (`_clean`), and shortened paths that name one known path are written
    out in full (`resolve_paths`)."""

    @model_validator(mode="before")
    @classmethod
    def _residue(cls, data: Any, info: ValidationInfo) -> Any:
        return _resolve(_clean(data), _known(info))


class _Partial(_Cleaned):
    """A draft that keeps its valid parts: invalid optional entries are dropped and listed in `dropped`."""

    _dropped: list[str] = PrivateAttr(default_factory=list)
    _offered: int = PrivateAttr(default=0)

    @property
    def dropped(self) -> list[str]:
        """Why each dropped optional entry was refused (one line each), for the log and the ledger."""
        return list(self._dropped)

    @property
    def offered(self) -> int:
        """Optional claims the model offered (kept + dropped): the denominator of the rejected-claim rate."""
        return self._offered

    def _drop(self, reason: str) -> None:
        self._dropped.append(reason)

    def _optional(self, name: str, value: str | None, known: Known) -> str | None:
        if value is None or len(value.split()) < MIN_SECTION_WORDS:
            return None  # an empty (or one-word, e.g. an echoed field name) optional section is not rendered
        self._offered += 1
        try:
            check_prose(name, value, known)
        except ValueError as exc:
            self._drop(str(exc))
            return None
        return value.strip()

    def _caveats(self, values: list[str], known: Known) -> list[str]:
        out = []
        for i, value in enumerate(values):
            if value.strip() and not _FILLER.fullmatch(value):
                self._offered += 1
                try:
                    check_text(f"caveats[{i}]", value, known, limit=600)
                except ValueError as exc:
                    self._drop(str(exc))
                    continue
                out.append(value.strip())
        return out[:8]

    def _items(self, field_name: str, notes: list[ItemNote], known: Known, limit: int) -> list[ItemNote]:
        seen: set[str] = set()
        kept: list[ItemNote] = []
        for i, note in enumerate(notes):
            self._offered += 1
            note.path = norm_path(note.path)
            try:
                if known.items and note.path not in known.items:
                    raise ValueError(f"{field_name}[{i}].path {note.path!r} is not one of the listed paths")
                check_text(f"{field_name}[{i}].explanation", note.explanation, known)
            except ValueError as exc:
                self._drop(str(exc))
                continue
            if note.path not in seen:
                seen.add(note.path)
                kept.append(note)
        return kept[:limit]

    def _symbols(self, field_name: str, notes: list[SymbolNote], known: Known, allowed: frozenset[str], *,
                 limit: int = MAX_FIELD_CHARS) -> list[SymbolNote]:
        seen: set[str] = set()
        kept: list[SymbolNote] = []
        for i, note in enumerate(notes):
            self._offered += 1
            note.qualname = note.qualname.strip().strip("`").removesuffix("()")
            try:
                if note.qualname not in allowed:
                    what = ("already documented in the code" if field_name == "docstrings"
                            and note.qualname in known.symbols else "not a symbol of this file")
                    raise ValueError(f"{field_name}[{i}].qualname {note.qualname!r} is {what}")
                check_text(f"{field_name}[{i}].explanation", note.explanation, known, limit=limit)
            except ValueError as exc:
                self._drop(str(exc))
                continue
            if note.qualname not in seen:
                seen.add(note.qualname)
                kept.append(note)
        return kept


def dropped_of(draft: BaseModel) -> list[str]:
    """The optional entries a validated draft dropped ([] for drafts that do not track them)."""
    return draft.dropped if isinstance(draft, _Partial) else []


def offered_of(draft: BaseModel) -> int:
    return draft.offered if isinstance(draft, _Partial) else 0


class LLMFileDraft(FileDraft, _Partial):
    docstrings: list[SymbolNote] = Field(
        default_factory=list,
        description="One-sentence docstrings (in `explanation`) for the undocumented symbols named in the "
                    "instructions, by qualified name. Empty when none are named.")

    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> LLMFileDraft:
        known = _known(info)
        check_prose("summary", self.summary, known)
        self.summary = self.summary.strip()
        self.purpose = self._optional("purpose", self.purpose, known)
        self.how_it_works = self._optional("how_it_works", self.how_it_works, known)
        self.relationships = self._optional("relationships", self.relationships, known)
        self.caveats = self._caveats(self.caveats, known)
        self.key_symbols = self._symbols("key_symbols", self.key_symbols, known, known.symbols)[:12]
        self.docstrings = self._symbols("docstrings", self.docstrings, known, known.undocumented,
                                        limit=MAX_DOCSTRING_CHARS)
        for note in self.docstrings:
            note.explanation = " ".join(note.explanation.split())
        return self


class LLMModuleDraft(ModuleDraft, _Partial):
    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> LLMModuleDraft:
        known = _known(info)
        check_prose("summary", self.summary, known)
        self.summary = self.summary.strip()
        self.purpose = self._optional("purpose", self.purpose, known)
        self.structure = self._optional("structure", self.structure, known)
        self.key_items = self._items("key_items", self.key_items, known, 12)
        self.caveats = self._caveats(self.caveats, known)
        return self


class LLMOverviewDraft(OverviewDraft, _Partial):
    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> LLMOverviewDraft:
        known = _known(info)
        check_prose("summary", self.summary, known)
        self.summary = self.summary.strip()
        self.architecture = self._optional("architecture", self.architecture, known)
        self.getting_started = self._optional("getting_started", self.getting_started, known)
        self.key_modules = self._items("key_modules", self.key_modules, known, 12)
        return self


class PartNotes(_Partial):
    """Notes on one part of something too big for one prompt (a file's code, a module's children)."""

    summary: str = Field(description="What this part does, in 2-4 sentences.")
    key_symbols: list[SymbolNote] = Field(default_factory=list,
                                          description="Important symbols defined in this part, if any.")

    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> PartNotes:
        known = _known(info)
        check_prose("summary", self.summary, known, limit=1500)
        self.summary = " ".join(self.summary.split())
        # members are checked against the WHOLE file's symbols: a part may name a method defined elsewhere
        self.key_symbols = self._symbols("key_symbols", self.key_symbols, known, known.symbols, limit=400)[:8]
        return self


# -- one section at a time (the small-model strategy) --------------------------------------------------

SECTION_HELP = {
    "summary": "2-3 sentences: what it is for and what it does, naming its main symbols in backticks.",
    "purpose": "2-3 sentences: why it exists, the problem it solves for the code that uses it.",
    "how_it_works": "3-5 sentences: how its main pieces work together, step by step, naming them in "
                    "backticks.",
    "relationships": "2-3 sentences: how it relates to the files it depends on and the files using it.",
    "structure": "3-5 sentences: how its files work together: which one is the entry point, which do the "
                 "main work, which support them, naming them in backticks.",
    "architecture": "3-5 sentences: the main parts and how a request or data flows through them.",
    "getting_started": "2-3 sentences: where a new reader should start reading, naming paths in backticks.",
}
TOPIC_SUMMARY_HELP = ("2-3 sentences: what this page explains and why a reader cares, naming the main "
                      "symbols in backticks.")
TOPIC_SECTION_HELP = "2-4 sentences: what happens in this part and why, naming its symbols in backticks."
SECTION_FIELD = "explanation"  # the one field of every section_model, whatever the section


class KeySymbolsOnly(_Partial):
    """The most important symbols of one file, each with a short explanation."""

    key_symbols: list[SymbolNote] = Field(description="The 3-6 most important symbols, most important first.")

    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> KeySymbolsOnly:
        known = _known(info)
        self.key_symbols = self._symbols("key_symbols", self.key_symbols, known, known.symbols)[:12]
        if not self.key_symbols:
            raise ValueError("key_symbols has no valid entry: name symbols exactly as listed under Symbols, "
                             "each with one sentence saying what it does"
                             + (f" ({'; '.join(self.dropped[:3])})" if self.dropped else ""))
        return self


@cache
def section_model(name: str) -> type[BaseModel]:
    """A model for the section `name` asked alone: one required prose field, `explanation` (checked like a
    summary: grounded, not filler). The JSON field is the same for every section on purpose: a small model
    reads a field name as an instruction, and one named "structure" got a list of paths, not sentences.
    `section_text(reply, name)` reads it back."""

    def grounded(self: BaseModel, info: ValidationInfo) -> BaseModel:
        value = str(getattr(self, SECTION_FIELD)).strip()
        check_prose(SECTION_FIELD, value, _known(info))
        setattr(self, SECTION_FIELD, value)
        return self

    title = "".join(part.capitalize() for part in name.split("_")) + "Only"
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        title, __doc__=f"The {name.replace('_', ' ')} section of one wiki page.", __base__=_Cleaned,
        __validators__={"_grounded": model_validator(mode="after")(grounded)},
        **{SECTION_FIELD: (str, Field(description=f"Its {name.replace('_', ' ')}: {SECTION_HELP[name]}"))})
    return model


def section_text(reply: BaseModel, section: str) -> Any:
    """The value of `section` in a one-section reply (a section_model's explanation, or the list field of
    KeySymbolsOnly / DocstringsOnly)."""
    return getattr(reply, section) if section in type(reply).model_fields else getattr(reply, SECTION_FIELD)


class DocstringsOnly(_Partial):
    """One-sentence docstrings for the undocumented symbols of one file."""

    docstrings: list[SymbolNote] = Field(description="One entry per undocumented symbol named in the "
                                                     "instructions: its qualified name and one sentence.")

    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> DocstringsOnly:
        known = _known(info)
        self.docstrings = self._symbols("docstrings", self.docstrings, known, known.undocumented,
                                        limit=MAX_DOCSTRING_CHARS)
        for note in self.docstrings:
            note.explanation = " ".join(note.explanation.split())
        if not self.docstrings:
            raise ValueError("docstrings has no valid entry: use the undocumented symbols named, exactly as "
                             "written" + (f" ({'; '.join(self.dropped[:3])})" if self.dropped else ""))
        return self


# -- topic pages (generator/pages/topics.py, generator/pages/llm/topics.py)
# ------------------------------------------

MAX_TOPIC_SECTIONS = 6
MAX_TOPIC_SOURCES = 8  # per section
_CITE = re.compile(r"^(?P<path>[^\s:]+?)(?::(?P<start>\d+)(?:\s*[-\u2013]\s*(?P<end>\d+))?)?$")


@dataclass(frozen=True)
class Catalog:
    """What a topic page may cite: every analysed file with its line count, and the evidence by name."""

    lines: Mapping[str, int]  # path -> line count
    named: Mapping[str, str]  # evidence qualname -> its `path:start-end`

    def normalize(self, raw: str) -> str:
        """`raw` as a checked `path:start-end`; ValueError (the reason) when it names nothing real."""
        text = raw.strip().strip("`[]").strip()
        if text in self.named:  # a symbol cited by its name
            return self.named[text]
        m = _CITE.match(text.removeprefix("./"))
        if m is None:
            raise ValueError(f"source {raw!r} is not a path:start-end")
        path = m.group("path")
        if path not in self.lines:
            raise ValueError(f"source {raw!r} names a file that is not in the repository's facts")
        total = max(1, self.lines[path])
        start = int(m.group("start") or 1)
        end = int(m.group("end") or (start if m.group("start") else total))
        if not 1 <= start <= end <= total:
            raise ValueError(f"source {raw!r}: lines {start}-{end} are outside {path} (1-{total})")
        return f"{path}:{start}-{end}"


class LLMTopicDraft(TopicDraft, _Partial):
    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> LLMTopicDraft:
        ctx = info.context if isinstance(info.context, dict) else {}
        known = _known(info)
        catalog = ctx.get("catalog")
        if not isinstance(catalog, Catalog):
            raise ValueError("no catalog of citable sources")  # a programming error, not the model's
        check_prose("summary", self.summary, known)
        check_code_claims("summary", self.summary, known)
        self.summary = self.summary.strip()
        kept: list[TopicSection] = []
        for i, section in enumerate(self.sections):
            self._offered += 1
            try:
                heading = " ".join(section.heading.replace("`", "").split()).strip("# ")
                check_text(f"sections[{i}].heading", heading, known, limit=80)
                check_text(f"sections[{i}].body", section.body, known, min_words=5)
                check_code_claims(f"sections[{i}].body", section.body, known)
            except ValueError as exc:
                self._drop(str(exc))
                continue
            sources: list[str] = []
            for raw in section.sources:
                self._offered += 1
                try:
                    cite = catalog.normalize(raw)
                except ValueError as exc:
                    self._drop(f"sections[{i}]: {exc}")
                    continue
                if cite not in sources:
                    sources.append(cite)
            if not sources:
                self._drop(f"sections[{i}] ({heading!r}) has no valid source")
                continue
            kept.append(TopicSection(heading=heading, body=section.body.strip(),
                                     sources=sources[:MAX_TOPIC_SOURCES]))
        if not kept:
            why = f" ({'; '.join(self.dropped[:3])})" if self.dropped else ""
            raise ValueError("no section has a valid source: cite evidence exactly as the path:start-end "
                             "shown in square brackets" + why)
        self.sections = kept[:MAX_TOPIC_SECTIONS]
        return self


# -- one symbol at a time (key symbols and docstrings from small models) -----------------------------------

MIN_SYMBOL_WORDS = 4
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def whole_sentences(text: str, limit: int) -> str:
    """`text` cut after its last whole sentence within `limit` characters (unchanged when it fits, or when
    not even its first sentence does): a docstring a sentence too long is kept, not re-asked."""
    if len(text) <= limit:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, limit)]
    cut = text[:ends[-1]] if ends else text
    return cut if cut.count("`") % 2 == 0 else text


class SymbolExplanation(_Cleaned):
    """What one symbol does, in a sentence or two: asked one symbol at a time, with that symbol's code."""

    explanation: str = Field(description="1-2 plain sentences saying what this symbol does and what for.")

    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> SymbolExplanation:
        text = whole_sentences(" ".join(self.explanation.split()), MAX_DOCSTRING_CHARS)
        # `known.name_words` holds the symbol's own name: "The CaseInsensitiveDict class." is refused
        check_prose("explanation", text, _known(info), min_words=MIN_SYMBOL_WORDS, limit=MAX_DOCSTRING_CHARS)
        self.explanation = text
        return self


class TopicPartOnly(_Cleaned):
    """One part of a topic page asked alone (its summary, or one section's body): the writer attaches the
    heading and the sources, taken from the evidence, itself."""

    explanation: str = Field(description="2-4 plain sentences explaining it, naming symbols in backticks.")

    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> TopicPartOnly:
        text = " ".join(self.explanation.split())
        # `known.name_words` holds the part's heading and the page title: restating them is refused
        check_prose("explanation", text, _known(info), min_words=MIN_SECTION_BODY_WORDS, limit=1500)
        check_code_claims("explanation", text, _known(info))
        self.explanation = text
        return self


MIN_SECTION_BODY_WORDS = 5
