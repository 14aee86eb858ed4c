from __future__ import annotations

from answer.answering.grade import (
    COVERAGE_HIGH,
    SHARE_HIGH,
    Thresholds,
    absent_mechanisms,
    cap_degraded,
    content_terms,
    coverage,
    dominance,
    find_hedge,
    grade_answer,
    invented_numbers,
    lower,
    names_question_identifier,
    retrieval_quality,
    start_confidence,
)

EVIDENCE = {
    "src/flask/json/provider.py": (
        "class DefaultJSONProvider(JSONProvider):\n    ensure_ascii = True\n"
        "    def dumps(self, obj, **kwargs):\n        kwargs.setdefault('ensure_ascii', self.ensure_ascii)\n"
        "        return json.dumps(obj, **kwargs)\n"
    ),
    "tests/test_json.py": "def test_ascii(app):\n    app.json.ensure_ascii = True\n    assert rv == 2603\n",
}
QUESTION = "What does `ensure_ascii` do in DefaultJSONProvider?"
GOOD = ("`DefaultJSONProvider.dumps` passes `ensure_ascii` to `json.dumps` via kwargs.setdefault "
        "(src/flask/json/provider.py).")


def test_dominance() -> None:
    assert dominance([]) == 0.0
    assert dominance([2.0]) == float("inf")
    assert dominance([3.0, 1.5]) == 2.0
    assert dominance([1.0, 1.0]) == 1.0


def test_coverage_counts_question_terms_in_top_hit() -> None:
    terms = content_terms(QUESTION)
    assert terms == ["ensure_ascii", "DefaultJSONProvider"]
    assert coverage(terms, EVIDENCE["src/flask/json/provider.py"]) == 1.0
    assert coverage(terms, EVIDENCE["tests/test_json.py"]) == 0.5
    assert coverage([], "anything") == 0.0


def test_content_terms_without_identifiers_drop_stopwords() -> None:
    assert content_terms("How are cookies signed for the session?") == ["cookies", "signed", "session"]


def test_dotted_identifier_covered_by_its_last_part() -> None:
    assert coverage(["Flask.route"], "def route(self, rule):") == 1.0


def test_retrieval_quality_levels() -> None:
    assert retrieval_quality([], 1.0) == "weak"
    assert retrieval_quality([3.0, 1.0], 1.0) == "high"
    # covered but not leading: only partial, an exact symbol match too (measured no more often right)
    assert retrieval_quality([1.0, 0.95], 1.0) == "partial"
    assert retrieval_quality([1.0, 0.95], 1.0, exact_symbol=True) == "partial"
    assert retrieval_quality([1.0, 0.95], 0.0) == "weak"
    assert retrieval_quality([3.0, 1.0], 0.0) == "partial"
    # enough of the terms covered (the calibrated share) with a clear lead; a little less is only partial
    assert retrieval_quality([3.0, 1.0], COVERAGE_HIGH) == "high"
    assert retrieval_quality([3.0, 1.0], COVERAGE_HIGH - 0.05) == "partial"
    # a lone file does not lead: one hit for a whole question is what a search that found little returns
    assert retrieval_quality([3.0], 1.0) == "partial"
    assert retrieval_quality([3.0], 1.0, exact_symbol=True) == "high"  # ...unless it defines what was named
    assert retrieval_quality([3.0, 0.0], 0.0) == "weak"


def test_when_the_ranker_ranked_its_share_of_the_top_file_is_the_lead() -> None:
    # the k-th re-ranked file takes the k-th fused score: a fused lead of 1.05 says nothing of the model's
    # margin, its probability of the top file does
    assert retrieval_quality([1.0, 0.95], 1.0, share=SHARE_HIGH) == "high"
    assert retrieval_quality([1.0, 0.95], 1.0) == "partial"
    # and a large fused lead does not make "high" when the model was unsure of its first file
    assert retrieval_quality([3.0, 1.0], 1.0, share=SHARE_HIGH - 0.05) == "partial"
    # coverage still gates "high"; a confident model lifts an uncovered question to partial, not weak
    assert retrieval_quality([1.0, 0.95], COVERAGE_HIGH - 0.05, share=0.99) == "partial"
    assert retrieval_quality([1.0, 0.95], 0.0, share=0.99) == "partial"
    assert retrieval_quality([1.0, 0.95], 0.0, share=0.3) == "weak"
    assert retrieval_quality([], 1.0, share=0.99) == "weak"
    # a calibrated share threshold applies
    strict = Thresholds(share_high=0.95)
    assert retrieval_quality([1.0, 0.95], 1.0, thresholds=strict, share=0.9) == "partial"
    assert retrieval_quality([1.0, 0.95], 1.0, thresholds=strict, share=0.96) == "high"


def test_start_and_lower() -> None:
    assert start_confidence("high") == "high"
    assert start_confidence("partial") == "medium"
    assert start_confidence("weak") == "low"
    assert lower("high") == "medium"
    assert lower("high", 2) == "low"
    assert lower("low") == "low"


def test_degraded_is_never_high() -> None:
    assert cap_degraded("high") == "medium"
    assert cap_degraded("medium") == "medium"
    assert cap_degraded("low") == "low"


def test_hedge_detection() -> None:
    assert find_hedge("The evidence does not show where the timeout is set.")
    assert find_hedge("It is unclear which adapter is used.")
    assert find_hedge("This probably happens in sessions.py.")
    assert find_hedge("`dumps` passes ensure_ascii to json.dumps.") is None


def test_names_question_identifier() -> None:
    assert names_question_identifier(["ensure_ascii"], "It sets ensure_ascii.")
    assert not names_question_identifier(["ensure_ascii"], "It escapes non-ASCII characters.")
    assert names_question_identifier([], "Anything goes when nothing was named.")


def test_invented_numbers() -> None:
    text = "\n".join(EVIDENCE.values())
    assert invented_numbers("It escapes U+2603 as shown in tests.", text) == []
    assert invented_numbers("It retries 5 times with a 30 second timeout.", text) == ["5", "30"]
    # line locations and 0/1 are not claims about the code
    assert invented_numbers("See src/flask/json/provider.py:166-179 and lines 48-54; returns 1.", text) == []


def test_absent_mechanisms() -> None:
    cited = EVIDENCE["src/flask/json/provider.py"]
    assert absent_mechanisms(GOOD, cited) == []
    assert absent_mechanisms("It calls `encode_unicode_escape` first.", cited) == ["encode_unicode_escape"]


def test_grade_good_answer_keeps_retrieval_level() -> None:
    grade = grade_answer(QUESTION, GOOD, ["src/flask/json/provider.py"], EVIDENCE, "high")
    assert grade.confidence == "high"
    assert grade.reasons == ()


def test_grade_each_failed_check_lowers_one_step() -> None:
    cited = ["src/flask/json/provider.py"]
    hedged = GOOD + " The evidence does not show the default."
    assert grade_answer(QUESTION, hedged, cited, EVIDENCE, "high").confidence == "medium"
    unnamed = "It escapes non-ASCII characters (src/flask/json/provider.py)."
    assert grade_answer(QUESTION, unnamed, cited, EVIDENCE, "high").confidence == "medium"
    number = GOOD + " It retries 7 times."
    assert grade_answer(QUESTION, number, cited, EVIDENCE, "high").confidence == "medium"
    mechanism = GOOD + " Then `escape_everything` runs."
    assert grade_answer(QUESTION, mechanism, cited, EVIDENCE, "high").confidence == "medium"
    assert grade_answer(QUESTION, GOOD, [], EVIDENCE, "high").confidence == "medium"
    both = hedged + " It retries 7 times."
    grade = grade_answer(QUESTION, both, cited, EVIDENCE, "high")
    assert grade.confidence == "low"
    assert len(grade.reasons) == 2


def test_grade_a_bare_name_is_not_an_explanation() -> None:
    cited = ["src/flask/json/provider.py"]
    # the shape of what a 0.5B model replied in the real-model benchmark: the right name, nothing else
    grade = grade_answer(QUESTION, "`DefaultJSONProvider`", cited, EVIDENCE, "high")
    assert grade.confidence == "medium"
    assert "the answer is a fragment, not an explanation" in grade.reasons
    # uncited as well: two failed checks
    assert grade_answer(QUESTION, "`DefaultJSONProvider`", [], EVIDENCE, "high").confidence == "low"
    assert grade_answer(QUESTION, GOOD, cited, EVIDENCE, "high").reasons == ()


def test_grade_never_rises_above_retrieval() -> None:
    cited = ["src/flask/json/provider.py"]
    assert grade_answer(QUESTION, GOOD, cited, EVIDENCE, "partial").confidence == "medium"
    assert grade_answer(QUESTION, GOOD, cited, EVIDENCE, "weak").confidence == "low"
