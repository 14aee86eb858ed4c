"""The history miner's pure rules: following renames to the indexed revision, and leaving out messages that
name a chore instead of a place in the code (answer/retrieval/history.py)."""

from answer.retrieval.history import (
    Commit,
    SymbolSpan,
    follow_renames,
    is_housekeeping,
    names_file,
    parse_moves,
    says_nothing,
    select,
)

MOVES = ("\x1ecommit c3\n\nR087\tsrc/Adapter.kt\tsrc/internal/Adapter.kt\nM\tsrc/Moshi.kt\n"
         "\x1ecommit c2\n\nD\tsrc/legacy.kt\n"
         "\x1ecommit c1\n\nR100\tlib/Adapter.java\tsrc/Adapter.kt\n")


def test_parse_moves_reads_renames_and_deletions_only():
    assert parse_moves(MOVES) == {"c3": [("src/Adapter.kt", "src/internal/Adapter.kt")],
                                  "c2": [("src/legacy.kt", "")],
                                  "c1": [("lib/Adapter.java", "src/Adapter.kt")]}


def test_follow_renames_walks_back_through_chains_and_deletions():
    commits = [Commit("c4", "newest", ("src/internal/Adapter.kt",)),
               Commit("c3", "move it", ("src/internal/Adapter.kt", "src/Moshi.kt")),
               Commit("c2", "drop legacy", ()),
               Commit("c1", "convert", ("src/Adapter.kt",)),
               Commit("c0", "oldest", ("lib/Adapter.java", "src/legacy.kt", "src/Moshi.kt"))]
    followed = follow_renames(commits, parse_moves(MOVES))
    assert [c.moved for c in followed] == [
        (), (),  # a commit's own rename: its paths are already the new ones
        (),
        (("src/Adapter.kt", "src/internal/Adapter.kt"),),
        (("lib/Adapter.java", "src/internal/Adapter.kt"), ("src/legacy.kt", ""))]
    assert followed[4].paths == commits[4].paths


def test_select_asks_about_the_followed_path_and_reads_the_commit_path():
    source = {"src/internal/Adapter.kt", "src/Moshi.kt"}
    read: list[tuple[str, str]] = []

    def symbols_of(commit, path):
        read.append((commit.sha, path))
        return [SymbolSpan("Adapter.fromJson", "method", 1, 9)]

    commits = [Commit("c1", "Port the reflective binding to Kotlin",
                      ("src/Adapter.kt", "src/Moshi.kt", "src/gone.kt"),
                      (("src/Adapter.kt", "src/internal/Adapter.kt"), ("src/gone.kt", ""))),
               Commit("c0", "Fix Adapter crash on null", ("lib/Adapter.java",),
                      (("lib/Adapter.java", "src/internal/Adapter.kt"),))]
    mined = select(commits, 5, source.__contains__,
                   ranges_of=lambda c, paths: {p: [(3, 3)] for p in paths},
                   symbols_of=symbols_of, language_of=lambda p: "kotlin")
    (question,) = mined.questions
    assert question.gold_files == ("src/internal/Adapter.kt", "src/Moshi.kt")
    assert question.gold_functions == (("src/internal/Adapter.kt", "Adapter.fromJson"),
                                       ("src/Moshi.kt", "Adapter.fromJson"))
    assert read == [("c1", "src/Adapter.kt"), ("c1", "src/Moshi.kt")]
    # the triviality check reads the followed path: "Adapter" names src/internal/Adapter.kt
    assert (mined.considered, mined.trivial) == (2, 1)
    assert [why for why, _, _ in mined.left_out] == ["trivial"]


def test_chores_are_housekeeping():
    for message in ("chore(deps): update dev dependencies (#3306)", "chore: update dev dependencies",
                    "Update dependency com.facebook:ktfmt to v0.62 (#2089)", "deps: statuses@2.0.1",
                    "feat(deps)!: router@^2.0.0 (#5885)", "build: drop the old toolchain",
                    "ci(release): publish from the tag", "style: reorder members",
                    "Bump minimum Go to 1.23", "Update formatters to latest",
                    "bump lodash from 4.17.20 to 4.17.21", "docs: fix typo (#3029)", "Fixed phpdoc",
                    "Added missing types", "Optimize imports", "naming, linting", "Whitespace, style",
                    "Javadoc format fix", "Fix lints and doc typos", "Fix a typo in b6a052f.", "Match 4.0.0",
                    "Fix typos in comments and variable names (#849)", "Fix and bump to next version",
                    'Revert "Add async versions of the parse helpers"',
                    "Upgrade `content-disposition` (#7233)", "Upgraded RailwaySharp from Version 1.1.0",
                    "docs: fix typos in JSDoc comments\n\ncloses #51",
                    "Update dependencies (#1767)\n\n* Update to eslint@8 and standard\n* Update jest and tsd",
                    "[pre-commit.ci] pre-commit autoupdate (#614)",
                    "Fix lint issues for correct golangci-lint version"):
        assert is_housekeeping(message), message


def test_a_concrete_word_keeps_the_message_a_question():
    for message in ("Fix typo in Router.mount error message",
                    "chore: unnecessary guard around call to delete", "docs: fix typo in res.download jsdoc",
                    "Bump minimum Go to 1.23, always use request.Pattern",
                    "Add typings for helpGroup support (#2367)", "Release 0.23 with foul mode",
                    "Fix crash on 3.12 when the header is empty", "Update the cookie parser to handle quotes",
                    "lint: coalesce duplicate switch statements", "Fix imports of nested types.",
                    'Revert "Revert "Add async versions of the parse helpers""',
                    "Revert factory function reexport (#2014)", "feat(core/types): wrong variance on Result",
                    "Bump minimum Go and use new features", "Bump RECENT_DATE (#3617)",
                    "Bump maxRetries to 5",
                    "Upgrade `content-disposition`\n\n* Better fallback for latin1 names",
                    "Remove the System.Linq.Expressions dependency",
                    "fix: Remove `utils-merge` dependency - use spread syntax instead"):
        assert not is_housekeeping(message), message


def test_uninformative_wins_over_housekeeping_and_each_is_counted_once():
    commits = [Commit("c0", "Fix build", ("a.py",)), Commit("c1", "chore(deps): bump everything", ("a.py",)),
               Commit("c2", "docs: fix typo", ("a.py",)), Commit("c3", "Handle empty headers", ("a.py",))]
    assert says_nothing("Fix build")
    assert is_housekeeping("Fix build")
    mined = select(commits, 10, lambda p: True, ranges_of=lambda c, paths: {},
                   symbols_of=lambda c, p: [], language_of=lambda p: "python")
    assert (mined.considered, mined.uninformative, mined.housekeeping) == (4, 1, 2)
    assert [q.id for q in mined.questions] == ["c3"]
    assert [(why, sha) for why, sha, _ in mined.left_out] == [
        ("uninformative", "c0"), ("housekeeping", "c1"), ("housekeeping", "c2")]


def test_a_stem_is_named_without_its_leading_dash_or_underscore():
    assert names_file("Convert JsonValueReader to Kotlin (#1487)", "moshi/src/-JsonValueReader.kt")
    assert names_file("Drop the compat shim for old interpreters", "pkg/_compat.py")
    assert not names_file("Convert the reader to Kotlin", "moshi/src/-JsonValueReader.kt")
