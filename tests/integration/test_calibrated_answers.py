"""A repository's calibrated confidence thresholds: derived and stored by `sourcebook eval --calibrate`, read
by get_answer, never taken from a file the repository planted."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from answer.answering.calibration import (
    CALIBRATION_FILE,
    Calibration,
    Observation,
    calibrate,
    read_calibration,
    write_calibration,
)
from answer.answering.evidence import retrieve
from answer.answering.get_answer import AnswerContext, get_answer
from answer.answering.grade import GLOBAL_THRESHOLDS, Thresholds, dominance, quality_label
from generator.index.store import open_index
from sourcebook.cli import cli
from sourcebook.config import Config, LLMConfig, load_config
from tests.support.fake_llm import FakeLLM, Reply
from tests.support.session_sources import CTX, SESSIONS

TOPICS = ["invoice", "shipment", "coupon", "refund", "warehouse", "payroll", "ledger", "voucher", "tariff",
          "receipt", "pallet", "courier", "rebate", "mortgage", "pension", "dividend", "escrow", "subsidy",
          "royalty", "annuity", "bounty", "stipend"]


SESSION_QUESTION = "How is the session opened when a request context is pushed?"
SESSION_ANSWER = {"answer": "`RequestContext.push` opens the session by calling `open_session` on the app's "
                            "session_interface with the app and the request (pkg/ctx.py).",
                  "citations": ["pkg/ctx.py"]}


def _topic_files() -> dict[str, str]:
    files = {"pkg/__init__.py": ""}
    for i, topic in enumerate(TOPICS):
        files[f"pkg/{topic}_rules.py"] = (
            f'"""Rules for each {topic}."""\n\n\ndef settle_{topic}(amount):\n'
            f'    """Settle one {topic} and return what remains."""\n    return amount - {i + 2}\n')
    return files


def _eval(root: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, ["eval", *args, "--path", str(root)],
                              env={"SOURCEBOOK_EMBEDDER": "none", **(env or {})})


def test_eval_calibrate_writes_the_repositorys_thresholds_and_get_answer_reads_them(make_repo, tmp_path):
    root = make_repo(_topic_files())
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(
        json.dumps({"id": topic, "question": f"How is a {topic} settled?",
                    "gold_files": [f"pkg/{topic}_rules.py"]}) + "\n" for topic in TOPICS))
    results = tmp_path / "results.jsonl"
    result = _eval(root, str(questions), "--calibrate", "--results", str(results))
    assert result.exit_code == 0, result.output
    stored = root / ".sourcebook" / CALIBRATION_FILE
    body = json.loads(stored.read_text())
    # the thresholds are the rule's on the questions just asked (their features are in the results)
    observed = [Observation.of(r["features"], r["ranked"], r["gold_files"])
                for r in map(json.loads, results.read_text().splitlines())]
    expected = calibrate(observed).thresholds
    assert body["dominance_high"] == expected.dominance_high
    assert body["coverage_high"] == expected.coverage_high
    assert body["share_high"] == expected.share_high
    assert body["questions"] == len(TOPICS)
    g = GLOBAL_THRESHOLDS
    assert f"global ({g.dominance_high}, {g.share_high}, {g.coverage_high})" in result.output
    assert f"calibration: {len(TOPICS)} questions" in result.output
    assert str(stored) in result.output
    config = load_config(root, env={})
    assert read_calibration(config.out_dir) == expected
    assert AnswerContext(config, chat=None).thresholds.current() == expected
    # a second run shows what is stored next to the global figures
    again = _eval(root, str(questions))
    assert again.exit_code == 0, again.output
    if expected != GLOBAL_THRESHOLDS:
        assert "stored for this repository" in again.output


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Config:
    from generator.analyze.parse import extract
    from generator.analyze.scan import read_source, scan
    from generator.index.writer import update_index

    base = tmp_path_factory.mktemp("calibration")
    root = base / "repo"
    for rel, text in {"pkg/__init__.py": "", "pkg/ctx.py": CTX, "pkg/sessions.py": SESSIONS}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    config = load_config(root, overrides={"out_dir": str(base / "sb")}, env={})
    result = scan(config)
    update_index(config, result.files, {f.path: extract(f, read_source(root, f.path)) for f in result.files},
                 None, None)
    return config


@pytest.fixture
def config(indexed: Config, tmp_path: Path) -> Config:
    return replace(indexed, out_dir=tmp_path / "out", index_uri=indexed.index_location)


def _chat(server: FakeLLM) -> Any:
    from sourcebook.provider import get_chat_model

    return get_chat_model(LLMConfig(base_url=server.base_url, api_key="k", model="fake-model", mode="tools",
                                    max_retries=1, retry_base_s=0.01, max_reasks=1, timeout_s=5.0,
                                    context_tokens=32000))


def _lenient_enough(config: Config) -> Thresholds:
    """Thresholds under which the session question's retrieval is "high" while the global ones say partial."""
    evidence = retrieve(open_index(config), SESSION_QUESTION)
    lead = dominance(evidence.scores)
    assert evidence.quality == "partial"
    assert 1.0 <= lead < GLOBAL_THRESHOLDS.dominance_high, lead
    t = Thresholds(lead, min(evidence.coverage, GLOBAL_THRESHOLDS.coverage_high))
    assert quality_label(lead, evidence.coverage, dominance_high=t.dominance_high,
                         coverage_high=t.coverage_high) == "high"
    return t


def test_with_a_provider_calibration_sets_where_confidence_starts_and_checks_still_lower_it(
        config: Config, fake_llm: FakeLLM) -> None:
    fake_llm.enqueue(Reply.ok(SESSION_ANSWER))
    before = get_answer(AnswerContext(config, chat=_chat(fake_llm)), SESSION_QUESTION,
                        include=["diagnostics"])
    assert (before.retrieval_quality, before.confidence) == ("partial", "medium")
    lenient = _lenient_enough(config)
    write_calibration(config.out_dir, Calibration(lenient, 40, lenient, "test"))
    ctx = AnswerContext(config, chat=_chat(fake_llm))
    fake_llm.enqueue(Reply.ok(SESSION_ANSWER))
    after = get_answer(ctx, SESSION_QUESTION, include=["diagnostics"])
    assert (after.retrieval_quality, after.confidence) == ("high", "high")
    # a failed check on the answer lowers the calibrated start one step, as it lowers the global one
    hedged = {**SESSION_ANSWER, "answer": SESSION_ANSWER["answer"] + " It is unclear whether it is saved."}
    fake_llm.enqueue(Reply.ok(hedged))
    lowered = get_answer(ctx, SESSION_QUESTION + " Really?", include=["diagnostics"])
    assert (lowered.retrieval_quality, lowered.confidence) == ("high", "medium")
    # without a provider the calibrated "high" retrieval is still capped: ranked evidence is never high
    degraded = get_answer(AnswerContext(config, chat=None), SESSION_QUESTION, include=["diagnostics"])
    assert (degraded.retrieval_quality, degraded.confidence) == ("high", "medium")


TASK = "Open the session lazily when the request context is pushed"


def test_a_task_the_ranker_ranked_is_labelled_by_its_share_not_the_fused_lead(
        config: Config, fake_llm: FakeLLM) -> None:
    evidence = retrieve(open_index(config), TASK)
    assert evidence.share is not None  # a task: the learned ranker ranked it
    lead = dominance(evidence.scores)
    assert lead < GLOBAL_THRESHOLDS.dominance_high
    assert evidence.share < GLOBAL_THRESHOLDS.share_high
    assert evidence.coverage >= GLOBAL_THRESHOLDS.coverage_high
    assert evidence.quality == "partial"
    # a lead threshold any ranking passes changes nothing: the model's share decides
    any_lead = replace(GLOBAL_THRESHOLDS, dominance_high=1.0)
    write_calibration(config.out_dir, Calibration(any_lead, 40, any_lead, "test"))
    reply = get_answer(AnswerContext(config, chat=None), TASK, include=["diagnostics"])
    assert reply.retrieval_quality == "partial"
    # a share threshold the model's share reaches makes it "high", with a provider and without
    trusting = replace(GLOBAL_THRESHOLDS, share_high=round(evidence.share - 0.01, 3))
    write_calibration(config.out_dir, Calibration(trusting, 40, trusting, "test"))
    fake_llm.enqueue(Reply.ok(SESSION_ANSWER))
    answered = get_answer(AnswerContext(config, chat=_chat(fake_llm)), TASK, include=["diagnostics"])
    assert (answered.retrieval_quality, answered.confidence) == ("high", "high")
    degraded = get_answer(AnswerContext(config, chat=None), TASK, include=["diagnostics"])
    assert (degraded.retrieval_quality, degraded.confidence) == ("high", "medium")


def _planted(config: Config, text: str | None = None) -> Path:
    path = config.out_dir / CALIBRATION_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        path.write_text(text)
    return path


@pytest.mark.parametrize("content", [
    "{not json",
    json.dumps({"format": 1, "dominance_high": 1.0, "coverage_high": 0.0, "mark": "0" * 64}),  # not ours
    json.dumps({"format": 2, "dominance_high": "1.0"}),
    json.dumps({"format": 2, "dominance_high": 1.0, "coverage_high": 0.0, "share_high": 0.5,
                "mark": "0" * 64}),
    json.dumps(["a", "list"]),
    "x" * 100_000,
])
def test_a_corrupt_or_planted_calibration_is_ignored_with_a_warning(
        config: Config, content: str, caplog: pytest.LogCaptureFixture) -> None:
    _planted(config, content)
    with caplog.at_level(logging.WARNING, logger="answer.answering.calibration"):
        reply = get_answer(AnswerContext(config, chat=None), SESSION_QUESTION, include=["diagnostics"])
    assert reply.retrieval_quality == "partial"  # the global thresholds
    assert any("calibration ignored" in r.getMessage() for r in caplog.records)


def test_a_calibration_marked_under_another_key_is_not_trusted(config: Config) -> None:
    lenient = _lenient_enough(config)
    write_calibration(config.out_dir, Calibration(lenient, 40, lenient, "elsewhere"), key=b"k" * 32)
    assert read_calibration(config.out_dir) is None
    assert read_calibration(config.out_dir, key=b"k" * 32) == lenient


def test_a_calibration_of_the_format_before_the_share_is_ignored_even_when_marked_here(
        config: Config, caplog: pytest.LogCaptureFixture) -> None:
    from sourcebook.local_key import keyed

    key = b"k" * 32
    fields = {"format": 1, "dominance_high": 1.0, "coverage_high": 0.0}  # what format 1 marked
    mark = keyed(b"sourcebook-calibration\0" + json.dumps(fields, sort_keys=True).encode("utf-8"), key)
    _planted(config, json.dumps({**fields, "mark": mark}))
    with caplog.at_level(logging.WARNING, logger="answer.answering.calibration"):
        assert read_calibration(config.out_dir, key=key) is None
    assert any("format 1" in r.getMessage() and "--calibrate" in r.getMessage() for r in caplog.records)
    lenient = replace(GLOBAL_THRESHOLDS, dominance_high=1.0, coverage_high=0.0)
    write_calibration(config.out_dir, Calibration(lenient, 40, lenient, "test"), key=key)
    assert read_calibration(config.out_dir, key=key) == lenient  # the same thresholds, re-derived: read


def test_a_symlink_or_fifo_in_place_of_the_file_is_never_read_or_written_through(config: Config,
                                                                                  tmp_path: Path) -> None:
    path = _planted(config)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    path.symlink_to(fifo)
    assert read_calibration(config.out_dir) is None  # a symlink is not followed (a FIFO would block)
    path.unlink()
    os.mkfifo(path)
    assert read_calibration(config.out_dir) is None
    path.unlink()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    path.symlink_to(victim)
    write_calibration(config.out_dir, Calibration(GLOBAL_THRESHOLDS, 40, None, "test"))
    assert victim.read_text() == "keep me"  # the link was replaced, not written through
    assert path.is_file()
    assert not path.is_symlink()
    assert read_calibration(config.out_dir) == GLOBAL_THRESHOLDS


def test_a_repositorys_config_cannot_point_calibration_elsewhere(make_repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    root = make_repo({**_topic_files(), "sourcebook.toml":
                      f'calibration = "{elsewhere / "cal.json"}"\nout_dir = "{elsewhere}"\n'})
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"id": "1", "question": "How is a coupon settled?",
                                     "gold_files": ["pkg/coupon_rules.py"]}) + "\n")
    refused = _eval(root, str(questions), "--calibrate")
    assert refused.exit_code != 0
    assert "unknown setting 'calibration'" in str(refused.exception)
    (root / "sourcebook.toml").write_text(f'out_dir = "{elsewhere}"\n')  # dropped: it leaves the repository
    done = _eval(root, str(questions), "--calibrate")
    assert done.exit_code == 0, done.output
    assert (root / ".sourcebook" / CALIBRATION_FILE).is_file()
    assert not elsewhere.exists()
