"""What an answer asserts about the symbols it names, checked against the code (never generated prose).

An answer is split into sentences; each sentence is about a subject symbol (the first known symbol it names,
else the previous sentence's subject, else the question's target). Its claims are checked against that
symbol's facts, read from the source: the signature (parameters and defaults, the return annotation) and the
body (`return` and `raise` statements, calls, where output goes, literals). A claim is

- contradicted: the code says otherwise (a parameter the signature lacks, another default, "writes to standard
  output" where the body writes to stderr, "never raises" over a `raise`);
- unsupported: the code shown does not bear it out (a call or exception the body never spells, a literal no
  code holds, a description of what is returned that leaves out the `raise` the body has).

Plain-language claims beyond these shapes are not judged here. Every function is pure. Shared by the answer
engine (answer/answering/get_answer.py grades answers) and the wiki writer (generator/pages/llm/topics.py
checks "How it
works" sections), so it lives in the core layer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Verdict = Literal["contradicted", "unsupported"]


@dataclass(frozen=True, slots=True)
class CodeFacts:
    """One symbol as the code states it: its signature line and its whole body (signature included)."""

    qualname: str
    name: str
    signature: str
    body: str

    @property
    def params(self) -> dict[str, str | None]:
        """Parameter -> default ({} when there are none or they cannot be read: see `params_known`)."""
        return self.read_params() or {}

    @property
    def params_known(self) -> bool:
        """False when the signature has parameters this module cannot read (a language it does not parse, a
        class without `__init__`): claims about them can be neither confirmed nor refuted."""
        return self.read_params() is not None

    def read_params(self) -> dict[str, str | None] | None:
        header = self.signature or _def_line(self.body)
        if re.match(r"\s*class\s", _def_line(self.body)) or header.lstrip().startswith("class "):
            # a class is called with its __init__'s parameters; without one they are not known here
            init = re.search(r"^\s*def\s+__init__\s*\((?:[^()]|\([^()]*\))*\)", self.body, re.M)
            if init is None:
                return None
            return {k: v for k, v in (signature_params(init.group(0)) or {}).items() if k != "self"}
        return signature_params(header)

    @property
    def own_body(self) -> str:
        """The body without nested functions and classes (their returns and raises are not this symbol's)."""
        return _own_lines(self.body)


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    verdict: Verdict
    claim: str  # the sentence, shortened
    why: str

    def describe(self) -> str:
        return f"{self.verdict} claim {self.claim!r} ({self.why})"


# ---------------------------------------------------------------- the code's side

def _def_line(body: str) -> str:
    """The definition header of a body (up to the colon closing its parameter list)."""
    match = re.search(r"^\s*(?:async\s+)?(?:def|class)\s+\w+\s*(\((?:[^()]|\([^()]*\))*\))?", body, re.M)
    return match.group(0) if match else ""


def _split_top(text: str, angles: bool = False) -> list[str]:
    """`text` split at commas outside brackets and quotes (and `<...>` generics when `angles`)."""
    parts: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{" or (angles and ch == "<"):
            depth += 1
        elif ch in ")]}" or (angles and ch == ">" and text[i - 1:i] not in ("-", "=")):
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


_GO_FUNC = re.compile(r"\s*func\s*(?:\((?:[^()]|\([^()]*\))*\)\s*)?\w*\s*(?:\[[^\]]*\]\s*)?(?=\()")
_RUST_FN = re.compile(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern(?:\s+\"[^\"]*\")?)\s+)*"
                      r"fn\s")
_TS_FUNC = re.compile(r"\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\b|.*\)\s*(?::[^=]+)?=>|"
                      r"\s*(?:(?:public|private|protected|static|readonly|abstract|async|get|set)\s+)*"
                      r"[A-Za-z_$][\w$]*\s*(?:<[^>]*>)?\s*\([^)]*\)\s*(?::|\{|$)")


def _param_list(signature: str, start: int) -> str:
    """What lies between the parenthesis at `start` and its match (to the end when it is unclosed)."""
    depth, end = 0, -1
    for i in range(start, len(signature)):
        if signature[i] == "(":
            depth += 1
        elif signature[i] == ")":
            depth -= 1
            if depth == 0:
                end = i
                break
    return signature[start + 1:end if end > 0 else len(signature)]


def signature_params(signature: str) -> dict[str, str | None] | None:
    """Parameter name -> default (source text) or None, from a signature as generator/analyze/facts.py
    records it: Python, Go (receiver skipped, `a, b int` grouped, no defaults), Rust (`self` skipped, no
    defaults), TypeScript and JavaScript (`x?: T = d`, destructured parameters skipped). {} when the
    signature has no parameters; None when it has some this function cannot read."""
    if _GO_FUNC.match(signature) and not signature.lstrip().startswith("function"):
        return _go_params(_param_list(signature, _GO_FUNC.match(signature).end()))  # type: ignore[union-attr]
    if _RUST_FN.match(signature):
        return _rust_params(_param_list(signature, signature.find("(")))
    if not re.match(r"\s*(?:async\s+)?def\s", signature) and _TS_FUNC.match(signature):
        return _ts_params(_param_list(signature, signature.find("(")))
    return _python_params(signature)


def _go_params(inner: str) -> dict[str, str | None] | None:
    parts = _split_top(inner)
    if not parts:
        return {}
    if all(re.fullmatch(r"[\w.*\[\]]+", p) for p in parts):
        return None  # unnamed parameters (`func(int, string)`): types only, no names to check a claim by
    params: dict[str, str | None] = {}
    for part in parts:
        match = re.match(r"([A-Za-z_]\w*)(?:\s+\S.*)?$", part, re.S)
        if match is None:
            return None
        params[match.group(1)] = None
    return params


def _rust_params(inner: str) -> dict[str, str | None] | None:
    params: dict[str, str | None] = {}
    for part in _split_top(inner, angles=True):
        if re.fullmatch(r"&?\s*(?:'\w+\s+)?(?:mut\s+)?self(?:\s*:.*)?", part, re.S):
            continue
        match = re.match(r"(?:mut\s+)?([A-Za-z_]\w*)\s*:", part)
        if match is None:
            return None  # a pattern parameter (`(a, b): (u8, u8)`): not read here
        params[match.group(1)] = None
    return params


def _ts_params(inner: str) -> dict[str, str | None] | None:
    params: dict[str, str | None] = {}
    for part in _split_top(inner, angles=True):
        if part[:1] in "{[":
            continue  # a destructured parameter binds the names inside it, not one name
        match = re.match(r"(?:(?:public|private|protected|readonly)\s+)*(?:\.\.\.)?([A-Za-z_$][\w$]*)\??\s*"
                         r"(?::(?:[^=]|=>)*)?(?:=\s*(.+))?$", part, re.S)
        if match is None:
            return None
        params[match.group(1)] = match.group(2).strip() if match.group(2) else None
    params.pop("this", None)
    return params


def _python_params(signature: str) -> dict[str, str | None] | None:
    start = signature.find("(")
    if start < 0:
        return {}
    inner = _param_list(signature, start)
    params: dict[str, str | None] = {}
    parts = _split_top(inner)
    for part in parts:
        if part in ("*", "/"):
            continue
        match = re.match(r"\*{0,2}([A-Za-z_]\w*)\s*(?::[^=]*)?(?:=\s*(.+))?$", part, re.S)
        if match:
            params[match.group(1)] = match.group(2).strip() if match.group(2) else None
    if parts and not params:
        return None  # parameters in a shape this module does not read (another language)
    return params


def _own_lines(body: str) -> str:
    lines = body.split("\n")
    # the symbol's own header (after its decorators) is not a nested definition
    head = next((i for i, line in enumerate(lines) if re.match(r"\s*(?:async\s+)?(?:def|class)\s", line)), 0)
    kept, skip_indent = lines[:head + 1], None
    for line in lines[head + 1:]:
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if skip_indent is not None:
            if not stripped or indent > skip_indent:
                continue
            skip_indent = None
        if re.match(r"(?:async\s+)?(?:def|class)\s", stripped):
            skip_indent = indent
            continue
        kept.append(line)
    return "\n".join(kept)


def _code_only(text: str) -> str:
    """Code without its docstrings and comments: what a claim must be borne out by."""
    text = re.sub(r'("""|\'\'\')(?:.|\n)*?\1', " ", text)
    return re.sub(r"#[^\n]*", " ", text)


def raised(facts: CodeFacts) -> list[str]:
    """Exceptions the symbol's own body raises (`raise X(...)`; a bare re-raise as "raise")."""
    found = []
    for match in re.finditer(r"^\s*raise\b\s*([A-Za-z_][\w.]*)?", _code_only(facts.own_body), re.M):
        found.append(match.group(1) or "raise")
    return found


def return_exprs(facts: CodeFacts) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^\s*return\b(.*)$", _code_only(facts.own_body), re.M)]


def return_annotation(facts: CodeFacts) -> str:
    header = facts.signature or _def_line(facts.body)
    match = re.search(r"\)\s*->\s*([^:]+)", header)
    if match:
        return match.group(1).strip()
    match = re.search(r"\)\s*->\s*(.+?):\s*$", facts.body.split("\n", 3)[0] if facts.body else "")
    return match.group(1).strip() if match else ""


_STDOUT = re.compile(r"(?i)\b(?:standard output|stdout)\b")
_STDERR = re.compile(r"(?i)\b(?:standard error|stderr)\b")


def output_streams(facts: CodeFacts) -> set[str]:
    """Where the body's code writes: "stderr" (sys.stderr, err=True), "stdout" (sys.stdout, a bare print)."""
    code = _code_only(facts.own_body)
    streams = set()
    # substrings, not words: helpers spell the stream inside their names (`_default_text_stderr()`)
    if re.search(r"stderr|\berr\s*=\s*True\b", code):
        streams.add("stderr")
    if re.search(r"stdout", code) or re.search(r"\bprint\((?![^)]*\bfile\s*=)", code):
        streams.add("stdout")
    return streams


# ---------------------------------------------------------------- the answer's side

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(\[])|\n+")
_SPAN = re.compile(r"`([^`\n]+)`")
_NAME = re.compile(r"[A-Za-z_][\w.]*")
_RAISE_WORDS = re.compile(r"(?i)\b(?:rais(?:e|es|ed|ing)|throws?|exceptions?|errors?)\b")
_NEG = re.compile(r"(?i)\b(?:never|not|no|doesn['’]t|without)\b")


def sentences(answer: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(answer) if s and s.strip()]


def _short(sentence: str) -> str:
    return sentence if len(sentence) <= 120 else sentence[:117].rstrip() + "…"


def _spans(sentence: str) -> list[str]:
    return [s.strip().removesuffix("()") for s in _SPAN.findall(sentence)]


def _resolve(name: str, facts: Sequence[CodeFacts]) -> CodeFacts | None:
    bare = name.removesuffix("()")
    for fact in facts:
        if bare in (fact.qualname, fact.name) or fact.qualname.endswith("." + bare):
            return fact
    return None


def _subject(sentence: str, facts: Sequence[CodeFacts], previous: CodeFacts | None) -> CodeFacts | None:
    # a parameter of the current subject names that parameter, not another symbol of the same name
    own = set(previous.params) if previous is not None else set()
    for span in _spans(sentence):
        if span in own:
            continue
        found = _resolve(span.split("(")[0], facts)
        if found is not None:
            return found
    for word in _NAME.findall(sentence):
        if word in own:
            continue
        code_like = "_" in word or "." in word or re.search(r"[a-z][A-Z]", word)
        if code_like and (found := _resolve(word, facts)):
            return found
    return previous


def _norm_literal(value: str) -> str:
    value = value.strip().strip("`").strip().rstrip(".,;")
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value.lower()


_DEFAULT = re.compile(
    r"`([A-Za-z_]\w*)`[^.;]*?\bdefaults?\s+(?:(?:value\s+)?(?:is|of|to)\s+)?`?([^\s`,;]+(?:\s*\([^)]*\))?)`?"
    r"|`([A-Za-z_]\w*)\s*=\s*([^`]+)`")
_PARAM = re.compile(
    r"(?i)(?:\b(?:parameters?|arguments?|args?|kwargs?|keyword|options?|flags?)\s+(?:(?:called|named)\s+)?"
    r"`([A-Za-z_]\w*)`"
    r"|`([A-Za-z_]\w*)`\s+(?:parameter|argument|keyword argument|option|flag)\b)")
_CALLS = re.compile(r"(?i)\b(?:calls|invokes|delegates\s+to|hands\s+off\s+to|passes\s+\w+\s+to)\s+`([^`]+)`")
_RAISES = re.compile(r"(?i)\b(?:raises|throws|raising|throwing)\s+(?:an?\s+|the\s+)?"
                     r"`?([A-Z]\w*(?:Error|Exception|Warning|Exit|Abort|Interrupt)?)`?")
_LITERAL = re.compile(r"`((?:\"[^\"`]{2,}\")|(?:'[^'`]{2,}'))`")


def _unreadable(sentence: str, fact: CodeFacts, pattern: re.Pattern[str]) -> Iterable[ClaimCheck]:
    """A parameter claim about a symbol whose parameters cannot be read is not borne out: not high."""
    for match in pattern.finditer(sentence):
        name = next((g for g in match.groups() if g), "")
        if name and name != fact.name:
            yield ClaimCheck("unsupported", _short(sentence),
                             f"the parameters of {fact.qualname} cannot be read from its signature "
                             f"({_short(fact.signature)!r}), so {name!r} is not checked")
            return


def _check_defaults(sentence: str, fact: CodeFacts) -> Iterable[ClaimCheck]:
    if not fact.params_known:
        yield from _unreadable(sentence, fact, _DEFAULT)
        return
    params = fact.params
    if not params and not _DEFAULT.search(sentence):
        return
    for match in _DEFAULT.finditer(sentence):
        name = match.group(1) or match.group(3)
        value = match.group(2) or match.group(4)
        if name not in params:
            if name == fact.name or ("_" not in name and name not in sentence.split("`")[1::2]):
                continue
            yield ClaimCheck("contradicted", _short(sentence), f"{fact.qualname} has no parameter {name!r}")
            continue
        actual = params[name]
        if actual is None:
            yield ClaimCheck("contradicted", _short(sentence),
                             f"{name!r} of {fact.qualname} has no default")
        elif _norm_literal(value) != _norm_literal(actual):
            yield ClaimCheck("contradicted", _short(sentence),
                             f"{name!r} of {fact.qualname} defaults to {actual}, not {value}")


def _check_params(sentence: str, fact: CodeFacts) -> Iterable[ClaimCheck]:
    if not fact.params_known:
        yield from _unreadable(sentence, fact, _PARAM)
        return
    params = fact.params
    for match in _PARAM.finditer(sentence):
        name = match.group(1) or match.group(2)
        if name and name not in params and name != fact.name:
            yield ClaimCheck("contradicted", _short(sentence), f"{fact.qualname} has no parameter {name!r}")


def _check_returns(sentence: str, fact: CodeFacts, answer: str,
                   targets: Sequence[str]) -> Iterable[ClaimCheck]:
    if not re.search(r"(?i)\breturn(?:s|ed|ing)?\b", sentence):
        return
    exprs = return_exprs(fact)
    shown = " ".join([*exprs, return_annotation(fact)])
    if not exprs and not return_annotation(fact) and fact.body.count("\n") < 2:
        return  # a one-line body (a stub, a declaration): nothing to check against
    claims_none = re.search(r"\bNone\b|\bnull\b|\bnothing\b", sentence) and not _NEG.search(sentence)
    if claims_none:
        falls_off = (not exprs or any(e in ("", "None") for e in exprs) or "None" in shown
                     or "Optional" in shown)
        if not falls_off and not _may_fall_through(fact):
            yield ClaimCheck("contradicted", _short(sentence), f"{fact.qualname} never returns None")
    for span in _spans(sentence):
        name = span.split("(")[0].rsplit(".", 1)[-1]
        if not re.fullmatch(r"[A-Z]\w+", name) or name in {"None", "True", "False"}:
            continue
        if name not in shown and name not in _code_only(fact.own_body):
            yield ClaimCheck("unsupported", _short(sentence),
                             f"{fact.qualname}'s code never returns or builds {name}")
    # an account of what a target returns that leaves out what it raises is the wrong account of its contract
    raises = [r for r in raised(fact) if r != "raise"]
    if raises and fact.qualname in targets and not _RAISE_WORDS.search(answer):
        yield ClaimCheck("unsupported", _short(sentence),
                         f"says what {fact.qualname} returns but not that it raises {raises[0]}")


def _may_fall_through(fact: CodeFacts) -> bool:
    """True when the body can end without a `return` (an `except` or `if` branch with none)."""
    code = _code_only(fact.own_body).rstrip().split("\n")
    last = next((line.strip() for line in reversed(code) if line.strip()), "")
    return not last.startswith(("return", "raise"))


def _check_raises(sentence: str, fact: CodeFacts) -> Iterable[ClaimCheck]:
    raises = raised(fact)
    if re.search(r"(?i)\b(?:never|does\s+not|doesn['’]t|won['’]t|will\s+not)\s+(?:raise|throw)", sentence):
        if raises:
            yield ClaimCheck("contradicted", _short(sentence), f"{fact.qualname} raises {raises[0]}")
        return
    code = _code_only(fact.own_body)
    for match in _RAISES.finditer(sentence):
        name = match.group(1)
        if not name or not re.search(r"(?:Error|Exception|Warning|Exit|Abort|Interrupt)$", name):
            continue
        if name not in code:
            yield ClaimCheck("unsupported", _short(sentence), f"{fact.qualname}'s code never names {name}")


def _check_output(sentence: str, fact: CodeFacts) -> Iterable[ClaimCheck]:
    says_out, says_err = bool(_STDOUT.search(sentence)), bool(_STDERR.search(sentence))
    if says_out == says_err or _NEG.search(sentence):
        return
    streams = output_streams(fact)
    if says_out and streams == {"stderr"}:
        yield ClaimCheck("contradicted", _short(sentence), f"{fact.qualname} writes to stderr")
    elif says_err and streams == {"stdout"}:
        yield ClaimCheck("contradicted", _short(sentence), f"{fact.qualname} writes to stdout")


def _check_calls(sentence: str, fact: CodeFacts) -> Iterable[ClaimCheck]:
    code = _code_only(fact.own_body)
    for match in _CALLS.finditer(sentence):
        called = match.group(1).strip().removesuffix("()").split("(")[0]
        last = called.rsplit(".", 1)[-1]
        if re.fullmatch(r"\w+", last) and not re.search(rf"\b{re.escape(last)}\b", code):
            yield ClaimCheck("unsupported", _short(sentence), f"{fact.qualname}'s body never calls {called}")


def check_literals(answer: str, code_text: str) -> list[ClaimCheck]:
    """Quoted string literals the answer attributes to the code that no code shown holds."""
    out = []
    for sentence in sentences(answer):
        for match in _LITERAL.finditer(sentence):
            inner = match.group(1)[1:-1]
            if inner not in code_text:
                out.append(ClaimCheck("unsupported", _short(sentence),
                                      f"no code shown holds the literal {inner!r}"))
    return out


def check_claims(answer: str, facts: Sequence[CodeFacts], targets: Sequence[str] = (),
                 code_text: str = "") -> list[ClaimCheck]:
    """Every contradicted or unsupported claim of `answer`, in order (duplicates of one reason dropped).

    `facts`: the symbols the question and the answer name, from the source. `targets`: the qualnames the
    question asks about (an account of a target's return must also say what it raises). `code_text`: the code
    the model was shown, for literals.
    """
    found: dict[str, ClaimCheck] = {}
    subject = _resolve(targets[0], facts) if targets else None
    for sentence in sentences(answer):
        subject = _subject(sentence, facts, subject)
        if subject is None:
            continue
        for check in (*_check_defaults(sentence, subject), *_check_params(sentence, subject),
                      *_check_returns(sentence, subject, answer, targets), *_check_raises(sentence, subject),
                      *_check_output(sentence, subject), *_check_calls(sentence, subject)):
            found.setdefault(check.why, check)
    for check in check_literals(answer, code_text):
        found.setdefault(check.why, check)
    return list(found.values())


# ---------------------------------------------------------------- the reply's shape

_CLOSERS = ".!?)]\"'’”:;`*…"


def is_truncated(answer: str) -> bool:
    """True when the reply stops mid-sentence: its last line is prose that ends without closing punctuation
    (a list item or a table row may end bare; a trailing comma or a dangling "and"/"the" may not)."""
    text = answer.rstrip()
    if not text:
        return False
    if text.endswith("```"):
        return False
    last = text.split("\n")[-1].strip()
    if re.search(r"(?i)(?:,|\b(?:and|or|the|a|an|to|of|with|for|that|which|is|are|by|in|on))$", last):
        return True
    if text.endswith(("...", "…")) and not text.endswith("etc..."):
        return True
    is_item = bool(re.match(r"(?:[-*+]|\d+[.)])\s", last)) or last.startswith("|")
    return not is_item and text[-1] not in _CLOSERS


# ---------------------------------------------------------------- copied prose

def _grams(text: str, n: int = 4) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9_]+", text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


COPY_SHARE = 0.5


def copied_share(answer: str, generated: Iterable[str]) -> float:
    """Share of the answer's word 4-grams found in LLM-written text (generated docstrings, page prose)."""
    mine = _grams(answer)
    if not mine:
        return 0.0
    theirs: set[tuple[str, ...]] = set()
    for text in generated:
        theirs |= _grams(text)
    return len(mine & theirs) / len(mine)
