"""Confidence, graded by checks over question, answer, evidence and retrieval scores, not the model.

Retrieval sets the start: how much the top file dominates the ranking and how much of what was asked it
covers. Each failed check on the answer then lowers confidence one step. Every function here is pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from answer.answering.response import CONFIDENCE_ORDER, Confidence, RetrievalQuality
from answer.retrieval.query import extract_identifiers, is_file_name
from answer.retrieval.question import parse_query
from sourcebook.claims import COPY_SHARE, ClaimCheck

# Retrieval thresholds. Dominance is scale-free (top score / runner-up) so it holds for any fused score.
# Derived by bench/calibrate.py --derive from measurements of "was the top file right?" per label: the
# thresholds that give "high" to the most questions of the TUNE split of the history sets (bench/
# history_bench.py: 28 repositories in 13 languages, the first per language) at a precision of at least
# 0.85, checked on the REPORT split. Before (lead 1.5, coverage 0.75, an exact symbol match standing in
# for the lead, a lone file counted as leading): "high" right for 0.74 (tune) and 0.84 (report); after:
# 0.88 and 0.94. An exact symbol match did not make the top file more often right at any lead (tune: 0.72
# of 79), nor did a lone hit (1 of 8): neither stands in for the lead any more.
# Re-derived after the ranking of issue 33's second round (test subjects, the length prior, two functions in
# the top file), on history sets mined by the new rules (renames followed, housekeeping left out): a lead of
# 1.5 and coverage 0.5 gave "high" to 65 TUNE questions (right 0.91) and 95 REPORT (0.94); 1.35 and 0.6 give
# it to 90 (0.87) and 138 (0.93); with the default embedder 84 (0.87) and 131 (0.94); on the development set
# (bench/eval_dev.py --labels, 112 questions) 20 (0.85) instead of 8 (0.88).
DOMINANCE_HIGH = 1.35
COVERAGE_HIGH = 0.5
# When the learned re-ranker (answer/retrieval/ranker.py) ranked the files, the k-th file takes the k-th fused
# score, so the lead above is the fusion's, not the ranking's: there the top file leads when the model's own
# probability of it (ranker.top_share, a softmax over the files it ranks, the quantity it was fitted on)
# reaches SHARE_HIGH. On the TUNE split's tasks the ranker ranked (630 pinned, 628 asked at their commit) the
# share tells a right top file from a wrong one better than the lead did (AUC 0.72 / 0.78 against 0.59 /
# 0.64), and it is near calibrated (shares 0.8-0.9: right 0.80 / 0.95). SHARE_HIGH and COVERAGE_HIGH (0.6
# before) by bench/calibrate.py --derive --target 0.9 on TUNE, both modes pooled, the hand fusion's lead and
# exact lead kept: "high" for 258 of 1,482 questions, right 0.91 (before: 217, 0.88). The target rose from
# 0.85, where the choice (share 0.6, coverage 0.5) called 37% of TUNE "high" and its languages ranged
# 0.60-0.96. REPORT, "high" n:right (min-max over languages with >= 5): pinned 222:0.90 (0.62-1.00) ->
# 255:0.92 (0.60-1.00), at each question's commit 227:0.90 (0.58-1.00) -> 256:0.94 (0.73-1.00);
# docs/performance.md has the figures per repository and the development set's.
SHARE_HIGH = 0.8
# the lead a top file defining a symbol the question names needs for "high": inf, only when it is the one
# file found (an exact match with a runner-up was right no more often than without one)
EXACT_LEAD = math.inf
COVERAGE_PARTIAL = 0.34


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The retrieval thresholds a label is computed with: the global ones above, or a repository's own
    (answer/answering/calibration.py derives them from its history set)."""

    dominance_high: float = DOMINANCE_HIGH
    coverage_high: float = COVERAGE_HIGH
    coverage_partial: float = COVERAGE_PARTIAL
    exact_lead: float = EXACT_LEAD
    share_high: float = SHARE_HIGH


GLOBAL_THRESHOLDS = Thresholds()

_STOPWORDS = frozenset(
    re.findall(r"\S+", """a an the and or of to in on at by for with from as is are was were be been being
    it its this that these
    those what which who whom whose when where why how does do did done can could should would will shall may
    might must there their them they then than into onto out over under about after before between through
    during without within also just only not no yes any all each every some such other same more most less
    least very much many few one two get gets set sets use used uses using make makes made happen happens
    work works way ways like need needs want wants please explain describe tell show shows file files code
    function functions method methods class classes implementation implemented handle handles
    handled"""))

_HEDGES = re.compile(
    r"\b(?:"
    r"(?:does|do|did)\s*(?:n['’]t|\s+not)\s+(?:show|contain|include|mention|specify|say|reveal|cover|appear)"
    r"|not\s+(?:shown|visible|present|included|covered|mentioned|specified)\s+in\s+the\s+(?:evidence|code|context|excerpts?)"
    r"|(?:is|remains)\s+unclear|not\s+clear|cannot\s+(?:determine|tell|confirm|verify|be\s+determined)"
    r"|can['’]t\s+(?:determine|tell|confirm|verify)|unable\s+to\s+(?:determine|find|confirm|tell|verify)"
    r"|(?:not|insufficient)\s+enough\s+(?:information|context|evidence)|insufficient\s+(?:information|evidence|context)"
    r"|no\s+(?:direct\s+)?evidence|i\s+(?:do\s+not|don['’]t)\s+know|not\s+sure|presumably|probably|likely"
    r"|appears?\s+to|seems?\s+to|it\s+is\s+possible\s+that|i\s+would\s+guess|without\s+seeing"
    r")\b",
    re.IGNORECASE,
)
# locations that carry line numbers: src/app.py:120, app.py#L12, "lines 10-20", "line 7", L42. A path starts
# only where none goes on (the lookbehind): from every position of a long run the class rescanned the rest.
_LOCATION = re.compile(
    r"(?:(?<![\w./-])[\w./-]+\.\w+(?::\d+(?:[-–]\d+)?|#L\d+(?:-L?\d+)?))|\blines?\s+\d+(?:\s*(?:[-–]|to|and)\s*\d+)?|\bL\d+\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)*)(?![\w]|\.\d)")
# Below this many words a reply is a bare name or fragment ("dispatch_hook"): small models give such replies,
# and naming the right identifier must not pass for an explanation.
MIN_ANSWER_WORDS = 5


@dataclass(frozen=True, slots=True)
class Grade:
    confidence: Confidence
    reasons: tuple[str, ...] = field(default=())  # why confidence was lowered, for `note` and diagnostics


def content_terms(question: str) -> list[str]:
    """Words of a question worth finding in evidence: identifiers first, then non-stopword words."""
    idents = parse_query(question).identifiers.names
    if idents:
        return list(idents)
    words = re.findall(r"[A-Za-z][A-Za-z0-9_-]{2,}", question)
    seen: dict[str, None] = {}
    for word in words:
        low = word.lower()
        if low not in _STOPWORDS:
            seen.setdefault(low, None)
    return list(seen)


def _term_in(term: str, text_lower: str) -> bool:
    # a dotted or path identifier counts when its last component is present ("Flask.route" -> "route")
    last = re.split(r"[./]", term)[-1].lower() or term.lower()
    if term.lower() in text_lower:
        return True
    if "." in term and not is_file_name(term):
        return last in text_lower
    if "/" in term:
        return term.rsplit("/", 1)[-1].lower() in text_lower
    return False


def coverage(terms: Sequence[str], text: str) -> float:
    """Share of the question's terms found in `text` (the top hit's evidence). 0.0 when nothing was asked."""
    if not terms:
        return 0.0
    low = text.lower()
    return sum(1 for term in terms if _term_in(term, low)) / len(terms)


def dominance(scores: Sequence[float]) -> float:
    """How far the top file is ahead of the runner-up; inf when it stands alone, 0.0 with no hits."""
    if not scores or scores[0] <= 0:
        return 0.0
    if len(scores) == 1 or scores[1] <= 0:
        return float("inf")
    return scores[0] / scores[1]


def retrieval_quality(scores: Sequence[float], cover: float, exact_symbol: bool = False,
                      thresholds: Thresholds = GLOBAL_THRESHOLDS, share: float | None = None
                      ) -> RetrievalQuality:
    """high: the top hit covers what was asked and leads (or is an exact symbol match); weak: little found.
    `share`: the learned ranker's probability of the top file, None when the hand fusion ranked."""
    if not scores or scores[0] <= 0:
        return "weak"
    t = thresholds
    return quality_label(dominance(scores), cover, exact_symbol, share=share, dominance_high=t.dominance_high,
                         coverage_high=t.coverage_high, coverage_partial=t.coverage_partial,
                         exact_lead=t.exact_lead, share_high=t.share_high)


def quality_label(lead: float, cover: float, exact_symbol: bool = False, *, share: float | None = None,
                  dominance_high: float = DOMINANCE_HIGH, coverage_high: float = COVERAGE_HIGH,
                  coverage_partial: float = COVERAGE_PARTIAL, exact_lead: float = EXACT_LEAD,
                  share_high: float = SHARE_HIGH) -> RetrievalQuality:
    """The label of a ranking whose top file leads the runner-up by `lead` (inf: the only file found) and
    covers `cover` of the question's terms (bench/calibrate.py tries other thresholds through the
    keywords). When the learned ranker ranked (`share` not None: its probability of the top file), the
    top file leads when `share` reaches `share_high`, whatever the fused lead. A lone file does not lead:
    one hit for a whole question is what search finds when it finds little (a README for a commit
    message), unless it defines a symbol the question names (no history question had such a lone hit: the
    rule before the measurements holds there); the ranker leaves a lone file to the fusion (share None)."""
    leads = share >= share_high if share is not None else dominance_high <= lead < math.inf
    if cover >= coverage_high and (leads or (exact_symbol and exact_lead <= lead)):
        return "high"
    if cover >= coverage_partial or leads or exact_symbol:
        return "partial"
    return "weak"


def start_confidence(quality: RetrievalQuality) -> Confidence:
    return {"high": "high", "partial": "medium", "weak": "low"}[quality]  # type: ignore[return-value]


def lower(confidence: Confidence, steps: int = 1) -> Confidence:
    index = max(0, CONFIDENCE_ORDER.index(confidence) - steps)
    return CONFIDENCE_ORDER[index]


def cap_degraded(confidence: Confidence) -> Confidence:
    """A degraded reply (no synthesized answer) is never high."""
    return "medium" if confidence == "high" else confidence


def find_hedge(answer: str) -> str | None:
    """The hedge phrase in an answer ("the evidence does not show…"), if any."""
    match = _HEDGES.search(answer)
    return match.group(0) if match else None


def names_question_identifier(question_identifiers: Sequence[str], answer: str) -> bool:
    """True when the question named no identifiers, or the answer names at least one of them."""
    if not question_identifiers:
        return True
    low = answer.lower()
    return any(_term_in(ident, low) for ident in question_identifiers)


def invented_numbers(answer: str, evidence_text: str) -> list[str]:
    """Numbers the answer states that appear nowhere in the evidence (line locations and 0/1 excepted)."""
    prose = _LOCATION.sub(" ", answer)
    missing: dict[str, None] = {}
    for match in _NUMBER.finditer(prose):
        number = match.group(1)
        if number in {"0", "1"}:
            continue
        if not re.search(rf"(?<![\d.]){re.escape(number)}(?![\d]|\.\d)", evidence_text):
            missing.setdefault(number, None)
    return list(missing)


def answer_mechanisms(answer: str) -> list[str]:
    """Code names an answer relies on (functions, methods, classes), file names excluded."""
    idents = extract_identifiers(answer)
    files = set(idents.files)
    return [name for name in idents.names if name not in files and "/" not in name]


def absent_mechanisms(answer: str, cited_text: str) -> list[str]:
    """Mechanisms the answer names that the cited code does not show."""
    low = cited_text.lower()
    return [name for name in answer_mechanisms(answer) if not _term_in(name, low)]


def is_fragment(answer: str) -> bool:
    """True when the answer is too short to explain anything (a bare identifier, a word or two)."""
    return len(answer.split()) < MIN_ANSWER_WORDS


def grade_answer(
    question: str,
    answer: str,
    citations: Sequence[str],
    evidence: Mapping[str, str],
    quality: RetrievalQuality,
    *,
    outside: Sequence[str] = (),
    attached: bool = False,
    claims: Sequence[ClaimCheck] = (),
    truncated: bool = False,
    copied: float = 0.0,
    targets_known: bool = False,
) -> Grade:
    """Start from retrieval quality, lower one step per failed check on the answer.

    `outside`: paths the answer names that are not in the evidence (see citations.py). `attached`: the model
    cited nothing itself; `citations` were attached from the symbols it names (citations.defining_paths).
    That is the same failed check as no citation at all: an answer the model did not cite is never high.
    `evidence` must hold code and the code's own text only: generated (LLM-written) prose never supports.

    Then the caps, which no retrieval can outweigh: a claim the code contradicts (`claims`, claims.py)
    makes the answer low; an unsupported claim, a reply cut mid-sentence (`truncated`) or one copied from
    LLM-written text (`copied`, the share of its word 4-grams found there) is never high. An answer that
    names none of the question's identifiers when they are symbols of the index (`targets_known`) is
    about something else: low.
    """
    confidence = start_confidence(quality)
    reasons: list[str] = []
    all_text = "\n".join(evidence.values())
    cited_text = "\n".join(evidence.get(path, "") for path in citations)
    hedge = find_hedge(answer)
    numbers = invented_numbers(answer, all_text)
    absent = absent_mechanisms(answer, cited_text) if citations else []
    # a path outside the evidence is one failed check, not two: its file name is not also an unshown name
    named_files = {part for path in outside for part in re.split(r"[/.]", path)}
    absent = [name for name in absent if name not in named_files]
    checks: Iterable[tuple[bool, str]] = (
        (not citations or attached,
         "the answer cites no file" if not citations else
         "the model cited no file (citations attached from the symbols the answer names)"),
        (is_fragment(answer), "the answer is a fragment, not an explanation"),
        (hedge is not None, f"the answer hedges ({hedge!r})"),
        (
            not names_question_identifier(parse_query(question).identifiers.names, answer),
            "the answer names none of the question's identifiers",
        ),
        (bool(numbers), f"numbers not in the evidence: {', '.join(numbers[:3])}"),
        (bool(absent), f"names not shown by the cited code: {', '.join(absent[:3])}"),
        (bool(outside), f"files named that were not in the evidence: {', '.join(outside[:3])}"),
    )
    off_subject = False
    for failed, reason in checks:
        if failed:
            confidence = lower(confidence)
            reasons.append(reason)
            off_subject = off_subject or reason == "the answer names none of the question's identifiers"
    contradicted = [c for c in claims if c.verdict == "contradicted"]
    unsupported = [c for c in claims if c.verdict == "unsupported"]
    caps: Iterable[tuple[bool, Confidence, str]] = (
        (bool(contradicted), "low",
         "the code contradicts the answer: " + "; ".join(c.describe() for c in contradicted[:2])),
        (off_subject and targets_known, "low", "the answer is about another subject than the question's"),
        (bool(unsupported), "medium",
         "the code does not bear out the answer: " + "; ".join(c.describe() for c in unsupported[:2])),
        (truncated, "medium", "the reply stops mid-sentence"),
        (copied >= COPY_SHARE, "medium",
         f"the answer repeats LLM-written prose ({copied:.0%} of its phrases), not the code"),
    )
    for failed, cap, reason in caps:
        if failed:
            if CONFIDENCE_ORDER.index(confidence) > CONFIDENCE_ORDER.index(cap):
                confidence = cap
            reasons.append(reason)
    return Grade(confidence=confidence, reasons=tuple(reasons))
