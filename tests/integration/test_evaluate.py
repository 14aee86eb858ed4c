import json

import pytest

from answer.retrieval.evaluate import Outcome, Question, load_questions, reciprocal_rank, run, score
from answer.retrieval.tiers import rank_files
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.config import load_config
from sourcebook.errors import UsageError


def test_metrics_by_hand():
    q1 = Question("1", "a?", ("x.py",))
    q2 = Question("2", "b?", ("y.py", "z.py"))
    q3 = Question("3", "c?", ("w.py",))
    outcomes = [Outcome(q1, ("x.py", "y.py"), 0.1), Outcome(q2, ("a", "b", "c", "z.py", "y.py"), 0.3),
                Outcome(q3, ("a",) * 12, 0.2)]
    m = score(outcomes)
    assert m.n == 3
    assert m.hit[1] == pytest.approx(1 / 3)
    assert m.hit[3] == pytest.approx(1 / 3)
    assert m.hit[5] == pytest.approx(2 / 3)
    assert m.hit[10] == pytest.approx(2 / 3)
    assert m.recall5 == pytest.approx((1 + 1 + 0) / 3)
    assert m.mrr == pytest.approx((1 + 0.25 + 0) / 3)
    assert m.median_seconds == pytest.approx(0.2)
    assert reciprocal_rank(["a", "b"], ["b"]) == 0.5


def test_load_questions_errors(tmp_path):
    good = tmp_path / "q.jsonl"
    good.write_text(json.dumps({"id": "a", "question": "q", "gold_files": ["x"], "repo": "r"}) + "\n\n")
    qs = load_questions(good)
    assert qs[0].gold_files == ("x",)
    assert qs[0].extra == {"repo": "r"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "question": "q"}\n')
    with pytest.raises(UsageError, match=r"bad\.jsonl:1"):
        load_questions(bad)
    with pytest.raises(UsageError):
        load_questions(tmp_path / "missing.jsonl")


def test_eval_scores_exactly_rank_files_and_cli_writes_results(make_repo, tmp_path):
    from click.testing import CliRunner

    from sourcebook.cli import cli

    root = make_repo({"auth.py": "def check_password(user, password):\n    return False\n",
                      "mail.py": "def send_email(to, body):\n    return None\n"})
    config = load_config(root)
    index_repository(config, embedder=None)
    questions = [Question("1", "how is the password checked?", ("auth.py",)),
                 Question("2", "how do we send an email?", ("mail.py",))]
    store = open_index(config)
    outcomes = run(store, questions)
    for o in outcomes:
        assert list(o.ranked) == [f.path for f in rank_files(store, o.question.question)]
    assert score(outcomes).mrr == 1.0
    qfile = tmp_path / "q.jsonl"
    lines = [json.dumps({"id": q.id, "question": q.question, "gold_files": list(q.gold_files)})
             for q in questions]
    qfile.write_text("\n".join(lines) + "\n")
    out = tmp_path / "res.jsonl"
    fresh = make_repo({"auth.py": "def check_password(user, password):\n    return False\n"}, name="fresh")
    built = CliRunner().invoke(cli, ["eval", str(qfile), "--path", str(fresh)],
                               env={"SOURCEBOOK_EMBEDDER": "none"})
    assert built.exit_code == 0, built.output
    assert "building it first" in built.output
    assert "n 2" in built.output
    result = CliRunner().invoke(cli, ["eval", str(qfile), "--path", str(root), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "MRR 1.000" in result.output
    assert "hit@1 1.000" in result.output
    # a question file's baseline searches every indexed file; each question's words are in its file's text
    baseline = next(line for line in result.output.splitlines() if line.startswith("full-text baseline"))
    assert "n 2  hit@1 1.000" in baseline
    assert "sourcebook over the baseline: hit@1 +0.000  hit@5 +0.000  MRR +0.000" in result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["ranked"][0] for r in rows] == ["auth.py", "mail.py"]
    assert set(rows[0]) >= {"id", "question", "gold_files", "ranked", "seconds"}
