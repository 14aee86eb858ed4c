import json
import re

from click.testing import CliRunner

from answer.retrieval.evaluate import Outcome, Question, Span, breakdown, function_hit
from answer.retrieval.history import (
    Commit,
    SymbolSpan,
    changed_functions,
    is_build_script,
    names_file,
    parse_hunks,
    parse_log,
    question_text,
    says_nothing,
    select,
)
from sourcebook.cli import cli
from tests.support.git_repos import first_commit, git

LOG = ("\x1ecommit aaa111\nFix the retry loop\n\nSigned-off-by: Someone <s@example.org>\n\x1f\n"
       "3\t1\tsrc/net.py\n-\t-\tlogo.png\n0\t4\tsrc/gone.py\n"
       "\x1ecommit bbb222\nRename things in util.py\n\x1f\n1\t1\tsrc/util.py\n")

DIFF = """diff --git a/src/net.py b/src/net.py
--- a/src/net.py
+++ b/src/net.py
@@ -10,2 +10,3 @@ def fetch():
@@ -30 +31 @@ class Pool:
@@ -50,3 +52,0 @@ def close():
diff --git a/src/old.py b/src/old.py
--- a/src/old.py
+++ /dev/null
@@ -1,3 +0,0 @@
"""


def test_parse_log_keeps_changed_text_files():
    commits = parse_log(LOG)
    assert [c.sha for c in commits] == ["aaa111", "bbb222"]
    assert commits[0].paths == ("src/net.py", "src/gone.py")  # the binary file skipped
    assert question_text(commits[0].message) == "Fix the retry loop"


def test_parse_hunks_new_side_ranges_and_deletions():
    assert parse_hunks(DIFF) == {"src/net.py": [(10, 12), (31, 31), (53, 52)]}


def test_changed_functions_innermost_and_deletion_inside_only():
    spans = [SymbolSpan("Pool", "class", 1, 60), SymbolSpan("Pool.get", "method", 5, 20),
             SymbolSpan("Pool.put", "method", 25, 40), SymbolSpan("helper", "function", 50, 52)]
    assert changed_functions(spans, [(10, 12), (31, 31)]) == ["Pool.get", "Pool.put"]
    assert changed_functions(spans, [(53, 52)]) == []  # a deletion after the function's last line
    assert changed_functions(spans, [(52, 51)]) == ["helper"]  # a deletion inside it
    assert changed_functions(spans, [(45, 45)]) == []  # class-level lines name no function


def test_names_file_by_path_name_or_stem():
    assert names_file("Fix src/util.py", "src/util.py")
    assert names_file("tweak util.py", "src/util.py")
    assert names_file("Util: handle empty input", "src/util.py")
    assert not names_file("utility functions faster", "src/util.py")


def test_build_scripts_are_not_source():
    assert is_build_script("setup.py")
    assert is_build_script("moshi/build.gradle.kts")
    assert is_build_script("project/Dependencies.scala")
    assert is_build_script("vite.config.ts")
    assert not is_build_script("src/project/Setup.scala")
    assert not is_build_script("src/setup_tools.py")


def test_select_counts_trivial_and_stops_at_n():
    commits = [Commit("c0", "Bump the version", ("setup.py",)),
               Commit("c1", "Speed up parsing", ("a.py", "tests/test_a.py")),
               Commit("c2", "Fix b.py crash", ("b.py",)),
               Commit("c3", "Docs only", ("README.md",)),
               Commit("c4", "Older change", ("a.py",))]
    mined = select(commits, 2, lambda p: p.endswith(".py") and not p.startswith("tests/"),
                   ranges_of=lambda c, paths: {"a.py": [(2, 2)]},
                   symbols_of=lambda c, p: [SymbolSpan("parse", "function", 1, 3)],
                   language_of=lambda p: "python")
    assert mined.considered == 2
    assert mined.trivial == 1
    assert [q.id for q in mined.questions] == ["c1"]
    assert mined.questions[0].gold_files == ("a.py",)
    assert mined.questions[0].gold_functions == (("a.py", "parse"),)


def test_a_message_that_says_nothing_about_the_code_is_no_question():
    for message in ("Apply fixes from StyleCI (#451)", "[2.6] CS fixes", "Fix build", "Update baseline",
                    "Test on PHP 8.5 (#591)", "Tweaks", "Fix issue https://example.org/issues/1984 (#1999)",
                    "Bump version to v2.3.1", "Fix phpstan build"):
        assert says_nothing(message), message
    for message in ("Added missing types", "Add support for BOM-signed env files (#501)",
                    "Rotate files based on timezone", "Fix crash when the header is empty"):
        assert not says_nothing(message), message
    commits = [Commit("c0", "Apply fixes from StyleCI (#12)", ("a.py",)),
               Commit("c1", "Handle empty headers", ("a.py",))]
    mined = select(commits, 5, lambda p: p.endswith(".py"), ranges_of=lambda c, paths: {},
                   symbols_of=lambda c, p: [], language_of=lambda p: "python")
    assert (mined.considered, mined.uninformative, [q.id for q in mined.questions]) == (2, 1, ["c1"])


def test_function_hit_and_label_precision():
    q = Question("1", "x", ("a.py",), {"gold_functions": [{"path": "a.py", "qualname": "f"}]})
    lines = {("a.py", "f"): (10, 20)}
    inside = Outcome(q, ("a.py",), 0.1, (Span("a.py", "", 12, 15),), "high")
    named = Outcome(q, ("b.py",), 0.1, (Span("b.py"), Span("a.py", "f", 1, 2)), "weak")
    across = Outcome(q, ("a.py",), 0.1, (Span("a.py", "g", 5, 15),), "high")
    overload = Outcome(q, ("a.py",), 0.1, (Span("a.py", "f~2", 30, 40),), None)
    assert function_hit(overload, lines)
    assert function_hit(inside, lines)
    assert function_hit(named, lines)
    assert not function_hit(across, lines)
    b = breakdown([inside, named, across], lines)
    assert b.function_n == 3
    assert abs(b.function_hit5 - 2 / 3) < 1e-9
    assert b.labels == {"high": (2, 1.0), "weak": (1, 0.0)}


def test_eval_history_on_a_real_git_repository(make_repo, tmp_path):
    root = make_repo({"billing/invoice.py": "def total(items):\n    return sum(items)\n",
                      "mail/sender.py": "def deliver(message):\n    return None\n"})
    first_commit(root)
    (root / "billing/invoice.py").write_text(
        "def total(items):\n    return sum(i.price * i.quantity for i in items)\n\n\n"
        "def tax(amount):\n    return amount * 0.2\n")
    git(root, "commit", "-qam", "Multiply price by quantity when summing the order")
    (root / "mail/sender.py").write_text("def deliver(message):\n    message.send()\n    return True\n")
    (root / "tests").mkdir()
    (root / "tests/test_sender.py").write_text("def test_deliver():\n    pass\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Actually send the outgoing message")
    (root / "mail/sender.py").write_text("def deliver(message):\n    message.send()\n    return 1\n")
    git(root, "commit", "-qam", "sender: return 1")  # names the file's stem: trivial
    out = tmp_path / "set.jsonl"
    result = CliRunner().invoke(cli, ["eval", "--history", "5", "--path", str(root), "--out", str(out)],
                                env={"SOURCEBOOK_EMBEDDER": "none"})
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    by_question = {r["question"]: r for r in rows}
    assert set(by_question) == {"Multiply price by quantity when summing the order",
                                "Actually send the outgoing message", "Initial import"}
    assert by_question["Actually send the outgoing message"]["gold_files"] == ["mail/sender.py"]
    assert by_question["Actually send the outgoing message"]["gold_functions"] == [
        {"path": "mail/sender.py", "qualname": "deliver"}]
    assert by_question["Multiply price by quantity when summing the order"]["gold_functions"] == [
        {"path": "billing/invoice.py", "qualname": "total"},
        {"path": "billing/invoice.py", "qualname": "tax"}]
    assert all(r["language"] == "python" for r in rows)
    assert "1 left out" in result.output
    assert "python" in result.output
    assert "ALL" in result.output
    # per confidence label: how many questions carry it and the share whose top file was right
    every = next(line for line in result.output.splitlines() if line.startswith("ALL"))
    labels = re.findall(r"\b(high|partial|weak) (\d+):(\d\.\d\d)", every)
    assert labels
    assert sum(int(n) for _, n, _ in labels) == 3
    # side by side, a full-text search over the two source files (not the test): the two questions whose
    # words are in their file's text are found first; "Initial import" names nothing of either file
    baseline = next(line for line in result.output.splitlines() if line.startswith("full-text baseline"))
    assert "whole text of 2 files" in baseline
    assert "n 3  hit@1 0.667" in baseline
    assert "sourcebook over the baseline: hit@1" in result.output
    rerun = CliRunner().invoke(cli, ["eval", str(out), "--path", str(root), "--no-baseline"])
    assert rerun.exit_code == 0, rerun.output
    assert "full-text baseline" not in rerun.output
    assert "n 3" in rerun.output
    assert [line.split()[:2] for line in rerun.output.splitlines() if line.startswith("python")] == \
        [["python", "3"]]


def test_eval_history_follows_a_file_moved_since_the_commit(make_repo, tmp_path):
    root = make_repo({"billing/invoice.py": "def total(items):\n    return sum(items)\n"})
    first_commit(root)
    (root / "billing/invoice.py").write_text("def total(items):\n    return sum(i.price for i in items)\n")
    git(root, "commit", "-qam", "Sum prices rather than the line objects")
    (root / "billing/core").mkdir()
    git(root, "mv", "billing/invoice.py", "billing/core/invoices.py")
    git(root, "commit", "-qm", "Move the billing module into core")
    (root / "billing/core/invoices.py").write_text(
        "def total(items):\n    return sum(i.price for i in items)\n\n\n"
        "def count(items):\n    return len(items)\n")
    git(root, "commit", "-qam", "chore: update dev dependencies")
    out = tmp_path / "set.jsonl"
    result = CliRunner().invoke(cli, ["eval", "--history", "5", "--path", str(root), "--out", str(out)],
                                env={"SOURCEBOOK_EMBEDDER": "none"})
    assert result.exit_code == 0, result.output
    rows = {r["question"]: r for r in map(json.loads, out.read_text().splitlines())}
    # asked before the move: the gold is the file where the index holds it now, the function by qualname
    assert rows["Sum prices rather than the line objects"]["gold_files"] == ["billing/core/invoices.py"]
    assert rows["Sum prices rather than the line objects"]["gold_functions"] == [
        {"path": "billing/core/invoices.py", "qualname": "total"}]
    assert rows["Initial import"]["gold_files"] == ["billing/core/invoices.py"]
    assert "chore: update dev dependencies" not in rows
    assert "1 (it names a chore" in result.output
