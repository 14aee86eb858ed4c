"""A localization set mined from a repository's own history: the commit message as the question, the
source files it changed (and the functions whose lines it changed) as the gold.

Pure core: `parse_log` reads `git log --numstat` output, `parse_moves` and `follow_renames` carry each
changed path forward through later renames, `parse_hunks` reads a `--unified=0` diff, `select` decides
which commits make questions. `mine` is the I/O edge that runs git.

What such a set measures, and what it cannot: the index is of the CURRENT checkout, so each commit's change
is already in the code being searched (a commit that added a function is asked about in a tree that holds
it). A gold file is the changed file at its path in that checkout: renames and moves since the commit are
followed (git's per-commit rename detection, walked from the indexed revision back), files deleted since
are dropped. Gold functions are read from the file as the commit left it, by the same analysis the index
runs, and named by qualname in the followed file.

Asked instead of an index of the commit's own tree (bench/history_bench.py --at-commit), a question's gold is
`gold_at_commit`: the paths as the commit names them, nothing followed, and the functions of that revision's
index; `commits_of`, `commit_ranges` and `revision_order` read the commits and order their indexes' builds.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sourcebook.errors import UsageError

_COMMIT_MARK = "\x1ecommit "  # record separator + word: cannot occur in a message or a numstat line
_LOG_FORMAT = "%x1ecommit %H%n%B%x1f"  # message ends at the unit separator; numstat lines follow
_MOVES_FORMAT = "%x1ecommit %H"  # name-status lines follow
_REVISION_FORMAT = "%x1ecommit %H%n%ct%n%B%x1f"  # _LOG_FORMAT with the commit time as the first line
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)
_TRAILER = re.compile(r"^(?:[A-Z][\w-]*-by|Co-authored-by|Change-Id|Fixes|Refs|Closes|See-also|Bug):\s", re.I)
FUNCTION_KINDS = frozenset({"function", "method"})
MAX_GOLD_FILES = 8  # a commit touching more source files than this is a sweep, not a localizable change
MAX_QUESTION_CHARS = 4000


# Build and tool configuration written in a programming language: a commit changing only these (a version
# bump, a dependency update) asks about the build, not the code a question about it could localize.
_BUILD_NAMES = frozenset({"setup.py", "noxfile.py", "fabfile.py", "build.rs", "build.gradle",
                          "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "build.sbt",
                          "build.sc", "Rakefile", "Gemfile", "Package.swift", "gulpfile.js", "Gruntfile.js"})
_BUILD_SUFFIXES = (".gemspec", ".config.js", ".config.mjs", ".config.cjs", ".config.ts", ".config.mts")


def is_build_script(path: str) -> bool:
    """Whether `path` is a build or tool configuration file (setup.py, build.gradle.kts, sbt's
    project/*.scala, vite.config.ts …) rather than the code it builds."""
    parts = path.split("/")
    name = parts[-1]
    if name in _BUILD_NAMES or name.endswith(_BUILD_SUFFIXES) or name.startswith(".eslintrc"):
        return True
    return len(parts) == 2 and parts[0] == "project" and name.endswith(".scala")  # sbt's build definition


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    message: str
    paths: tuple[str, ...]  # files whose content changed (binary files and deletions excluded)
    # (path in the commit, path at the indexed revision, "" if deleted since) for the paths moved since
    moved: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class HistoryQuestion:
    id: str
    question: str
    gold_files: tuple[str, ...]
    gold_functions: tuple[tuple[str, str], ...]  # (path, qualname) as the commit left the file
    commit: str
    language: str

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "question": self.question, "gold_files": list(self.gold_files),
                "gold_functions": [{"path": p, "qualname": q} for p, q in self.gold_functions],
                "commit": self.commit, "language": self.language}


@dataclass(frozen=True, slots=True)
class SymbolSpan:
    qualname: str
    kind: str
    start_line: int
    end_line: int


@dataclass
class Mined:
    questions: list[HistoryQuestion] = field(default_factory=list)
    considered: int = 0  # commits that changed at least one existing source file
    left_out: list[tuple[str, str, str]] = field(default_factory=list)  # (why, sha, message) to audit

    @property
    def trivial(self) -> int:
        """Left out: the message names a gold file."""
        return sum(why == "trivial" for why, _, _ in self.left_out)

    @property
    def uninformative(self) -> int:
        """Left out: the message says nothing about the code ("Fix build", "CS fixes")."""
        return sum(why == "uninformative" for why, _, _ in self.left_out)

    @property
    def housekeeping(self) -> int:
        """Left out: the message names a chore, not a place ("chore(deps): …", "Fix typo")."""
        return sum(why == "housekeeping" for why, _, _ in self.left_out)


def parse_log(text: str) -> list[Commit]:
    """Commits of `git log --format=<_LOG_FORMAT> --numstat --no-renames` output, newest first."""
    out: list[Commit] = []
    for record in text.split(_COMMIT_MARK)[1:]:
        head, _, rest = record.partition("\n")
        message, _, stats = rest.partition("\x1f")
        paths = []
        for line in stats.splitlines():
            parts = line.split("\t")
            if len(parts) != 3 or parts[0] == "-":  # not a numstat line, or a binary file
                continue
            added, _deleted, path = parts
            if added.isdigit():
                paths.append(path)
        out.append(Commit(head.strip(), message.strip(), tuple(paths)))
    return out


def parse_moves(text: str) -> dict[str, list[tuple[str, str]]]:
    """sha -> (old path, new path) of each rename and (path, "") of each deletion, from `git log -M
    --name-status --format=<_MOVES_FORMAT>` output."""
    out: dict[str, list[tuple[str, str]]] = {}
    moves: list[tuple[str, str]] = []
    for line in text.split("\n"):  # not splitlines(): it splits at the record separator too
        if line.startswith(_COMMIT_MARK):
            moves = out.setdefault(line[len(_COMMIT_MARK):].strip(), [])
            continue
        parts = line.split("\t")
        if len(parts) == 3 and parts[0].startswith("R"):
            moves.append((parts[1], parts[2]))
        elif len(parts) == 2 and parts[0] == "D":
            moves.append((parts[1], ""))
    return out


def follow_renames(commits: Iterable[Commit], moves: Mapping[str, Sequence[tuple[str, str]]]) -> list[Commit]:
    """`commits` (newest first, as `git log` lists them) with `moved` filled in: where each changed path is
    at the newest commit's tree. Walking back in time, a rename A -> B in commit X means a path A in an
    older commit is now wherever B is now, and a deletion of A means it is nowhere; each step is git's
    rename detection on one commit, so a file renamed and then rewritten is still followed."""
    now: dict[str, str] = {}  # path in the tree after the current commit -> path at the newest commit
    out = []
    for commit in commits:
        moved = tuple((p, now[p]) for p in commit.paths if p in now and now[p] != p)
        out.append(replace(commit, moved=moved))
        for old, new in moves.get(commit.sha, ()):
            now[old] = now.get(new, new) if new else ""
    return out


def parse_hunks(diff: str) -> dict[str, list[tuple[int, int]]]:
    """path -> the new-side line ranges (first, last) each hunk of a `--unified=0` diff touched. A pure
    deletion between lines c and c+1 is written (c + 1, c): empty, it names the gap between the two."""
    out: dict[str, list[tuple[int, int]]] = {}
    path = ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            target = line[4:]
            path = target[2:] if target.startswith("b/") else ""
            continue
        match = _HUNK.match(line) if path and line.startswith("@@") else None
        if match:
            start, count = int(match.group(1)), int(match.group(2) if match.group(2) is not None else 1)
            span = (start, start + count - 1) if count else (start + 1, start)
            out.setdefault(path, []).append(span)
    return out


def question_text(message: str) -> str:
    """The message without trailers (Signed-off-by, Co-authored-by …): they name people, not code."""
    lines = [line for line in message.splitlines() if not _TRAILER.match(line.strip())]
    return "\n".join(lines).strip()[:MAX_QUESTION_CHARS]


def names_file(message: str, path: str) -> bool:
    """Whether `message` names `path` by path, file name or stem (a commit that says where it changed
    is a trivial localization question). A stem's leading '-' or '_' is a naming convention the message
    leaves out: "Convert JsonValueReader to Kotlin" names -JsonValueReader.kt, "compat shim" a _compat
    module."""
    low = message.lower()
    name = path.rsplit("/", 1)[-1].lower()
    stem = name.rsplit(".", 1)[0] if "." in name else name
    if path.lower() in low or name in low:
        return True
    return any(s and re.search(rf"(?<![\w]){re.escape(s)}(?![\w])", low) is not None
               for s in {stem, stem.lstrip("-_")})


# Words a commit message uses about the work rather than the code: a message made only of these (with stop
# words, issue numbers, links and version numbers) names nothing a search could find ("Apply fixes from
# StyleCI (#451)", "Fix build", "Update baseline", "Test on PHP 8.5", "Tweaks"), so no tool can localize it
# and it would only measure luck. Tools' names count as work words: a linter's fixes spread over any file.
_WORK_TEXT = """
    a an the of to for on in at and or with from by is are be as it its this that some more all up into via
    per not no new old few small minor misc various other again also only just better fix fixes fixed
    fixing bug bugs bugfix hotfix issue issues pr build builds ci cs cleanup clean cleaned cleaning tweak
    tweaks tweaked typo typos typofix typofixes apply applied style styles lint linting linter format
    formatted formatting reformat update updated updates updating upgrade bump bumped baseline version
    versions release released prepare preparing test tests tested testing wip refactor refactored
    refactoring improve improved improvement improvements change changes changed merge merged revert
    reverted code stuff work things deps dependency dependencies support compat compatibility deprecation
    deprecations warning warnings php python go golang rust java kotlin scala ruby node nodejs typescript
    javascript csharp dotnet styleci phpstan psalm phpcs eslint prettier rubocop clippy rustfmt gofmt black
    flake8 pylint mypy ruff ktlint detekt scalafmt stylecop dependabot renovate travis appveyor github
    actions workflow workflows closes close closed resolves resolve resolved refs ref see
"""
_WORK_WORDS = frozenset(_WORK_TEXT.split())
# links, issue numbers, bracketed prefixes, version numbers and abbreviated commit hashes
_NOISE = re.compile(r"https?://\S+|(?:\b(?:gh|GH)-|#)\d+|\[[^\]]*\]|\bv?\d+(?:\.\w+)*"
                    r"|\b(?=[a-f]*\d)(?=\d*[a-f])[0-9a-f]{7,40}\b")


def says_nothing(message: str) -> bool:
    """Whether a commit message holds no word about the code: only work words, stop words, issue numbers,
    links, bracketed prefixes and version numbers (see `_WORK_WORDS`)."""
    return all(w in _WORK_WORDS for w in _words(message))


# Housekeeping: a message that says what kind of chore was done, not where. The source edits of such a
# commit are incidental (files reformatted after a formatter bump, a typo sweep over many files, types added
# everywhere), so the message cannot point at them. Four general shapes, each conservative: any word about
# the code itself (a name, a behaviour) keeps the message a question.
#   1. A conventional-commit type for build, CI, formatting or dependency work, or a deps scope on any type:
#      "build: …", "ci(release): …", "style: …", "deps: router@2.0.0", "chore(deps): …", "feat(deps)!: …".
#      (A bare "chore:" is judged by its words: "chore: unnecessary guard around call to delete" stays.)
#   2. A dependency or tool bump and nothing else: "Update dependency com.facebook:ktfmt to v0.62",
#      "Bump minimum Go to 1.23", "Update formatters to latest", "Upgrade `content-disposition`" (with a
#      body saying no more: one that tells what else changed keeps it), and a subject of sweep words
#      naming dependencies ("chore: update dev dependencies") whatever the body lists.
#   3. A sweep: only work words (see `_WORK_WORDS`) and the words of typo, format, doc-comment, typing,
#      import and naming sweeps: "docs: fix typo", "Fixed phpdoc", "Added missing types", "Optimize
#      imports", "naming, linting", "Fix review comments", "[pre-commit.ci] pre-commit autoupdate".
#   4. A version number with at most two other words, one of them not a work word: "Match 4.0.0".
#   And git's own revert message, 'Revert "…"': the change it names is undone, absent from the indexed
#   tree (a revert of a revert re-lands the change and stays).
_CHORE_TYPE = re.compile(r"^\s*(?:(?:build|ci|style|deps?)(?:\([^)]*\))?|\w+\((?:dev-?)?deps?\))!?:", re.I)
_BUMP = re.compile(r"^(?:update|bump|upgrade)[sd]?\s+(?:dev\s+)?(?:dependency\s+|dependencies\s+)?"
                   r"(?:\S+\s+){0,2}?\S+(?:\s+from\s+\S+)?\s+to\s+(?:v?\d[\w.+-]*|latest)\.?$", re.I)
# "Upgrade `content-disposition`", "Bump eslint and prettier", "Upgraded RailwaySharp from Version 1.1.0"
_UPGRADE = re.compile(r"^(?:upgrade|bump)(?:s|d|ed)?\s+\S+(?:\s+and\s+\S+)?(?:\s+from\s+(?:version\s+)?\S+)?"
                      r"(?:\s+to\s+\S+)?\.?$", re.I)
# A name with an underscore or a lower camel-case hump is a constant or variable of the code ("Bump
# RECENT_DATE", "Bump maxRetries to 5"), not a package: that asks where it is.
_CODE_NAME = re.compile(r"\b(?:\w+_\w+|[a-z]+[A-Z]\w*)\b")
_DEPENDENCY_WORDS = frozenset({"dependency", "dependencies", "deps"})
_GIT_REVERT = re.compile(r'^Revert "(?!Revert ")')
_VERSION = re.compile(r"\bv?\d+\.\d+(?:\.\w+)*")
_SWEEP_TEXT = """
    chore chores typo typos spelling grammar wording comment comments doc docs documentation jsdoc javadoc
    phpdoc rdoc rustdoc kdoc scaladoc docblock docblocks docstring docstrings annotation annotations type
    types typing typings typehint typehints hint hints import imports whitespace whitespaces indentation
    trailing newline newlines spacing naming name names variable variables lints unused missing redundant
    unnecessary optimize optimized organize sort sorted correct corrected add added adds remove removed
    removes use used cosmetic cosmetics copyright license dev development next cycle minimum latest number
    review cleanups prs maint maintenance prep preparation branch tool tools pre commit precommit autoupdate
    clang tidy codespell isort ktfmt spotless checkstyle tslint golangci
"""
_SWEEP_WORDS = frozenset(_SWEEP_TEXT.split()) | _WORK_WORDS


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z][a-z0-9_]*", _NOISE.sub(" ", text).lower())


def is_housekeeping(message: str) -> bool:
    """Whether a commit message names a chore rather than a place in the code: build/CI/style/deps commit
    types, dependency bumps, typo/format/doc/typing/import sweeps, version-only messages and git reverts
    (the rules above `_CHORE_TYPE`)."""
    first = message.strip().split("\n", 1)[0].strip()
    subject = re.sub(r"\s*\((?:#|gh-)\d+\)\s*$", "", first, flags=re.I).strip()  # a trailing PR number
    if _CHORE_TYPE.match(subject) or _GIT_REVERT.match(subject):
        return True
    subject_words = set(_words(subject))
    says_no_more = all(w in _SWEEP_WORDS or w in subject_words for w in _words(message))
    bump = _BUMP.match(subject) or (_UPGRADE.match(subject) and says_no_more)  # a bare "Upgrade X": no more
    if bump and not _CODE_NAME.search(subject):
        return True
    if subject_words & _DEPENDENCY_WORDS and subject_words <= _SWEEP_WORDS:
        return True  # "Update dependencies", whatever list of packages the body gives
    words = _words(message)
    if all(w in _SWEEP_WORDS for w in words):
        return True
    content = [w for w in words if w not in _WORK_WORDS]
    return _VERSION.search(message) is not None and len(words) <= 2 and len(content) <= 1


def changed_functions(spans: Iterable[SymbolSpan], ranges: Sequence[tuple[int, int]]) -> list[str]:
    """Qualnames of the innermost functions/methods holding a changed range's lines, in file order. A
    pure deletion (c + 1, c) counts for a function holding both line c and line c + 1."""
    funcs = [s for s in spans if s.kind in FUNCTION_KINDS]
    found: dict[str, int] = {}
    for lo, hi in ranges:
        gap = hi < lo
        # the innermost function around each line: the one starting last among those holding it
        for line in ([hi] if gap else range(lo, hi + 1)):
            holding = [s for s in funcs if s.start_line <= line and line + gap <= s.end_line]
            if holding:
                inner = max(holding, key=lambda s: (s.start_line, -s.end_line))
                found.setdefault(inner.qualname, inner.start_line)
    return sorted(found, key=lambda q: (found[q], q))


def _why_left_out(text: str, gold: Sequence[str]) -> str:
    """Why a commit makes no question ("trivial", "uninformative", "housekeeping"), or "" if it does."""
    if any(names_file(text, p) for p in gold):
        return "trivial"
    if says_nothing(text):
        return "uninformative"
    return "housekeeping" if is_housekeeping(text) else ""


def select(commits: Iterable[Commit], n: int, is_source: Callable[[str], bool], *,
           ranges_of: Callable[[Commit, list[str]], dict[str, list[tuple[int, int]]]],
           symbols_of: Callable[[Commit, str], list[SymbolSpan]],
           language_of: Callable[[str], str]) -> Mined:
    """Questions from the first `n` commits that changed a source file (`is_source`, asked of the path at
    the indexed revision: `Commit.moved`): the ones whose message names none of their gold files, says
    something about the code and names no chore. `ranges_of` and `symbols_of` read the commit's diff and
    the file as the commit left it, by the commit's own paths (I/O, given by the caller)."""
    mined = Mined()
    for commit in commits:
        if mined.considered >= n:
            break
        now = dict(commit.moved)
        pairs: dict[str, str] = {}  # path at the indexed revision -> path in the commit
        for path in commit.paths:
            current = now.get(path, path)
            if current and is_source(current) and not is_build_script(current):
                pairs.setdefault(current, path)
        gold = list(pairs)
        text = question_text(commit.message)
        if not gold or len(gold) > MAX_GOLD_FILES or not text:
            continue
        mined.considered += 1
        why = _why_left_out(text, gold)
        if why:
            mined.left_out.append((why, commit.sha, text))
            continue
        ranges = ranges_of(commit, list(pairs.values()))
        functions = [(path, q) for path, then in pairs.items()
                     for q in changed_functions(symbols_of(commit, then), ranges.get(then, []))]
        languages = [language_of(p) for p in gold]
        language = max(sorted(set(languages)), key=languages.count)
        mined.questions.append(HistoryQuestion(commit.sha[:12], text, tuple(gold), tuple(functions),
                                               commit.sha, language))
    return mined


# ---------------------------------------------------------------- the I/O edge: git

def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-c", "core.fsmonitor=false", "-C", str(root), *args],
                              capture_output=True, text=True, errors="replace", timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"{root}: git failed ({exc})") from exc
    if done.returncode != 0:
        raise UsageError(f"{root}: git {args[0]} failed: {done.stderr.strip()[:300]}")
    return done.stdout


def mine(root: Path, n: int, is_source: Callable[[str], bool], language_of: Callable[[str], str], *,
         rev: str = "HEAD", scan_limit: int | None = None) -> Mined:
    """The history set of the git checkout at `root`: the last `n` non-merge commits up to `rev` that
    changed a source file (followed through later renames to its path at `rev`). At most `scan_limit`
    commits are read (default 20 n)."""
    from generator.analyze.facts import SourceFile
    from generator.analyze.languages import detect_language
    from generator.analyze.parse import extract

    limit = scan_limit or 20 * n
    while True:
        try:
            log = _git(root, "log", "--no-merges", "--no-renames", "--numstat", f"--format={_LOG_FORMAT}",
                       "-n", str(limit), rev, "--")
            break
        except UsageError:
            # a partial clone or mirror lacks old objects: read fewer commits, never fewer than n
            if limit <= n:
                raise
            limit = max(n, limit // 2)

    # renames since each commit: one more walk over the same commits, with git's rename detection
    moves = parse_moves(_git(root, "log", "--no-merges", "-M", "--name-status", f"--format={_MOVES_FORMAT}",
                             "-n", str(limit), rev, "--"))

    def ranges_of(commit: Commit, paths: list[str]) -> dict[str, list[tuple[int, int]]]:
        return parse_hunks(_git(root, "show", "--no-renames", "--unified=0", "--no-color", "--no-ext-diff",
                                "--format=", commit.sha, "--", *paths))

    def symbols_of(commit: Commit, path: str) -> list[SymbolSpan]:
        try:
            data = _git(root, "show", f"{commit.sha}:{path}").encode("utf-8")
        except UsageError:
            return []
        facts = extract(SourceFile(path, detect_language(path), len(data), ""), data)
        return [SymbolSpan(s.qualname, s.kind, s.start_line, s.end_line) for s in facts.symbols]

    return select(follow_renames(parse_log(log), moves), n, is_source, ranges_of=ranges_of,
                  symbols_of=symbols_of, language_of=language_of)


# ---------------------------------------------------------------- asking at each question's own commit

def gold_at_commit(commit: Commit, is_source: Callable[[str], bool],
                   ranges: Mapping[str, Sequence[tuple[int, int]]],
                   symbols_of: Callable[[str], Iterable[SymbolSpan]]
                   ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The gold of `commit` asked of an index of its own tree: its changed paths as the commit names them
    (no rename followed: nothing has moved yet), kept by the rule `mine` applies at the indexed revision
    (`is_source` of that revision's index, no build script), and the functions of that revision's symbols
    (`symbols_of`) holding a changed line (`ranges`: the commit's `parse_hunks`)."""
    gold = [p for p in dict.fromkeys(commit.paths) if is_source(p) and not is_build_script(p)]
    functions = [(p, q) for p in gold for q in changed_functions(symbols_of(p), ranges.get(p, []))]
    return tuple(gold), tuple(functions)


def revision_order(shas: Sequence[str], times: Mapping[str, int]) -> list[str]:
    """`shas` oldest first by commit time (a sha without one last), ties in reverse of the given order (a
    history set lists newest first): consecutive revisions then differ by little, so each index is the
    previous one updated."""
    rank = {sha: i for i, sha in enumerate(shas)}
    return sorted(dict.fromkeys(shas), key=lambda s: (s not in times, times.get(s, 0), -rank[s]))


def parse_revisions(text: str) -> list[tuple[Commit, int]]:
    """(commit, commit time) of `git show --numstat --no-renames --format=<_REVISION_FORMAT>` output: the
    log's records with the commit time as the message's first line."""
    out = []
    for commit in parse_log(text):
        stamp, _, message = commit.message.partition("\n")
        out.append((replace(commit, message=message.strip()), int(stamp) if stamp.strip().isdigit() else 0))
    return out


def commits_of(git_dir: Path, shas: Sequence[str]) -> tuple[dict[str, Commit], dict[str, int]]:
    """sha -> the commit with its own changed paths (no renames followed), and sha -> its commit time, read
    from `git_dir` (a bare mirror works). A sha whose commit cannot be read is absent from both."""
    commits: dict[str, Commit] = {}
    times: dict[str, int] = {}
    for sha in dict.fromkeys(shas):  # one call each: a single unreadable commit fails a many-commit call
        try:
            text = _git(git_dir, "show", "--no-renames", "--numstat", f"--format={_REVISION_FORMAT}", sha,
                        "--")
        except UsageError:
            continue
        for commit, stamp in parse_revisions(text):
            commits[sha], times[sha] = commit, stamp
    return commits, times


def commit_ranges(git_dir: Path, commit: Commit, paths: Sequence[str]) -> dict[str, list[tuple[int, int]]]:
    """The lines `commit` changed in `paths`, by the paths the commit names (see `parse_hunks`)."""
    if not paths:
        return {}
    return parse_hunks(_git(git_dir, "show", "--no-renames", "--unified=0", "--no-color", "--no-ext-diff",
                            "--format=", commit.sha, "--", *paths))
