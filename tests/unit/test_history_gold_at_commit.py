"""Asking a history question at its own commit: the gold as the commit names it, the order revisions are
built in, and function lines carried by the question (answer/retrieval/history.py, evaluate.py)."""

from answer.retrieval.evaluate import Outcome, Question, Span, function_hit, gold_function_lines
from answer.retrieval.history import Commit, SymbolSpan, gold_at_commit, parse_revisions, revision_order

SHOW = ("\x1ecommit c2\n1700000200\nMove the parser into its own module\n\n"
        "Signed-off-by: A <a@example.org>\x1f\n"
        "\n12\t0\tsrc/parse/reader.ts\n0\t30\tsrc/store.ts\n-\t-\tlogo.png\n")


def test_parse_revisions_reads_the_time_and_keeps_the_message_and_paths():
    [(commit, stamp)] = parse_revisions(SHOW)
    assert stamp == 1700000200
    assert commit.sha == "c2"
    assert commit.message.startswith("Move the parser into its own module")
    assert commit.paths == ("src/parse/reader.ts", "src/store.ts")  # the binary file is not text


def test_gold_at_commit_uses_the_commits_own_paths_and_the_revisions_rule():
    commit = Commit("c1", "Read the epoch before flushing", ("src/store.ts", "src/store.ts", "README.md",
                                                               "vite.config.ts", "src/gone.ts"),
                    moved=(("src/store.ts", "src/internals.ts"),))  # moved since: not at this revision
    source = {"src/store.ts", "vite.config.ts"}.__contains__  # kind code, parsed, at the revision
    spans = {"src/store.ts": [SymbolSpan("createStore", "function", 1, 40),
                              SymbolSpan("createStore.flush", "function", 10, 20),
                              SymbolSpan("Store", "class", 50, 60)]}
    gold, functions = gold_at_commit(commit, source, {"src/store.ts": [(12, 12), (55, 55)]},
                                     lambda p: spans.get(p, []))
    assert gold == ("src/store.ts",)  # not the followed path, no build script, no vanished file
    assert functions == (("src/store.ts", "createStore.flush"),)


def test_gold_at_commit_is_empty_when_no_changed_file_is_source_there():
    commit = Commit("c1", "Document the store", ("docs/store.md",))
    assert gold_at_commit(commit, {"src/store.ts"}.__contains__, {}, lambda p: []) == ((), ())


def test_revision_order_is_oldest_first_with_unknown_times_last():
    newest_first = ["c4", "c3", "c2", "c1", "cx"]
    times = {"c4": 40, "c3": 30, "c2": 30, "c1": 10}  # c3 and c2 at the same second: the log's order
    assert revision_order(newest_first, times) == ["c1", "c2", "c3", "c4", "cx"]
    assert revision_order(["c2", "c2", "c1"], times) == ["c1", "c2"]


def test_function_hit_prefers_the_lines_the_question_carries():
    carried = Question("q", "flush", ("src/store.ts",), {"gold_functions": [
        {"path": "src/store.ts", "qualname": "flush", "start_line": 100, "end_line": 120}]})
    bare = Question("q", "flush", ("src/store.ts",), {"gold_functions": [
        {"path": "src/store.ts", "qualname": "flush"}]})
    head_lines = {("src/store.ts", "flush"): (5, 25)}  # where the function is in another checkout
    span = (Span("src/store.ts", "", 105, 110),)
    assert gold_function_lines(carried) == {("src/store.ts", "flush"): (100, 120)}
    assert gold_function_lines(bare) == {}
    assert function_hit(Outcome(carried, ("src/store.ts",), 0.0, span), head_lines)
    assert not function_hit(Outcome(bare, ("src/store.ts",), 0.0, span), head_lines)
