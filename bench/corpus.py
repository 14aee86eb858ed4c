"""Checks the wiki-audit corpus (bench/corpus.toml) out at its pinned commits, from local mirrors only.

    python bench/corpus.py checkout DEST [--mirrors /work/.mirror]
    python bench/corpus.py list

Each repository `owner/name` is read from its bare mirror `MIRRORS/owner+name/repo` (the `fetch` tool's
layout; a bare git dir at `MIRRORS/owner+name` works too) and written to `DEST/name` from its blobs: every
file of the commit, as a clone has it (not `git archive`, which leaves out what `.gitattributes` marks
`export-ignore`: PHP packages keep their tests and more out of their release archives that way, and a checkout
lacking them is not what a user indexes); no network, no `.git` in the checkout, no symlink pointing outside
the repository (an absolute target or one climbing above the root: a fixture of the machine it was made on,
never written). A folder already at `DEST/name` is reused when its files are exactly the commit's (same blob
hashes; a build's `.sourcebook/` output aside), and refused otherwise, so a stale or edited checkout never
passes for the pinned one. Then, e.g.:

    PYTHONPATH=$PWD python bench/wiki_audit.py DEST/* --build
"""

from __future__ import annotations

import argparse
import hashlib
import os
import posixpath
import subprocess
import sys
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

CORPUS = Path(__file__).with_name("corpus.toml")
_IGNORED = frozenset({".sourcebook", ".git"})  # a build's output and a VCS dir are not the repository's files


class CorpusError(Exception):
    """A mirror, commit or checkout that does not match the corpus."""


@dataclass(frozen=True)
class Repo:
    name: str  # owner/name
    commit: str
    language: str
    style: str = ""
    split: str = ""  # "tune": a TUNE repository besides the first of its language (bench/history_bench.py)

    @property
    def folder(self) -> str:
        return self.name.split("/", 1)[1]


def load(path: Path = CORPUS) -> list[Repo]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    repos = [Repo(r["name"], r["commit"], r["language"], r.get("style", ""), r.get("split", ""))
             for r in data["repo"]]
    if any(r.split not in ("", "tune") for r in repos):
        raise CorpusError("a corpus repository's split is \"tune\" or absent")
    folders = [r.folder for r in repos]
    if len(set(folders)) != len(folders):
        raise CorpusError("two corpus repositories share a folder name")
    return repos


def tune_split(repos: list[Repo]) -> set[str]:
    """The tuning split: the first repository listed per language, and any marked `split = "tune"` (added
    later to give a language more questions to tune on, listed after the REPORT ones so that the first per
    language, and with it the REPORT split, stays what it was)."""
    first: dict[str, str] = {}
    for r in repos:
        first.setdefault(r.language, r.name)
    return set(first.values()) | {r.name for r in repos if r.split == "tune"}


def _git(git_dir: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, check=False)
    if proc.returncode:
        err = proc.stderr.decode(errors="replace").strip()
        raise CorpusError(f"git {' '.join(args)} in {git_dir}: {err}")
    return proc.stdout


def mirror_of(repo: Repo, mirrors: Path) -> Path:
    base = mirrors / repo.name.replace("/", "+")
    for cand in (base / "repo", base / "repo" / ".git", base):  # a bare mirror, or a clone's .git
        if (cand / "HEAD").is_file() and (cand / "objects").is_dir():
            break
    else:
        raise CorpusError(f"no mirror of {repo.name} under {mirrors}: call `fetch github:{repo.name}` first")
    probe = subprocess.run(["git", f"--git-dir={cand}", "cat-file", "-e", f"{repo.commit}^{{commit}}"],
                           capture_output=True, check=False)
    if probe.returncode:
        raise CorpusError(f"the mirror of {repo.name} ({cand}) lacks commit {repo.commit}: call "
                          f"`fetch github:{repo.name}` again, or pin a commit it holds")
    return cand


def tree_of(git_dir: Path, commit: str) -> dict[str, tuple[str, str]]:
    """Path -> (mode, blob sha) of every file of the commit (submodules aside)."""
    out: dict[str, tuple[str, str]] = {}
    for entry in _git(git_dir, "ls-tree", "-r", "-z", commit).split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.decode().split()
        if kind == "blob":
            out[path.decode("utf-8", "surrogateescape")] = (mode, sha)
    return out


def leaves_checkout(path: str, target: str) -> bool:
    """Whether a symlink at `path` (relative to the repository's root) points outside the repository: an
    absolute target, or one climbing above the root. Such a link names a file of the machine it was made on
    (a test fixture for broken links, a developer's home): nothing of the repository to check out."""
    if posixpath.isabs(target):
        return True
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return resolved == ".." or resolved.startswith("../")


def _outside_links(git_dir: Path, tree: dict[str, tuple[str, str]]) -> set[str]:
    """The tree's symlinks that leave the checkout (`leaves_checkout`), read in one `git cat-file` call."""
    links = [(p, sha) for p, (mode, sha) in tree.items() if mode == "120000"]
    if not links:
        return set()
    proc = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "--batch"], check=False,
                          input=b"".join(sha.encode() + b"\n" for _, sha in links), capture_output=True)
    if proc.returncode:
        raise CorpusError(f"git cat-file in {git_dir}: {proc.stderr.decode(errors='replace').strip()}")
    out, data = set(), proc.stdout
    for path, _sha in links:
        header, data = data.split(b"\n", 1)
        size = int(header.split()[2])
        target, data = data[:size].decode("utf-8", "surrogateescape"), data[size + 1:]
        if leaves_checkout(path, target):
            out.add(path)
    return out


def _missing_blobs(git_dir: Path, tree: dict[str, tuple[str, str]]) -> set[str]:
    """The tree's files whose blob the mirror lacks (the `fetch` tool may leave a repository's largest files
    out), read in one `git cat-file --batch-check` call."""
    shas = sorted({sha for _mode, sha in tree.values()})
    proc = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "--batch-check"], check=False,
                          input=b"".join(s.encode() + b"\n" for s in shas), capture_output=True)
    if proc.returncode:
        raise CorpusError(f"git cat-file in {git_dir}: {proc.stderr.decode(errors='replace').strip()}")
    absent = {line.split()[0].decode() for line in proc.stdout.splitlines() if line.endswith(b" missing")}
    return {p for p, (_mode, sha) in tree.items() if sha in absent}


def missing_blobs(git_dir: Path, commit: str) -> set[str]:
    """The files of `commit` whose blob the mirror lacks."""
    return _missing_blobs(git_dir, tree_of(git_dir, commit))


def _write_blobs(git_dir: Path, tree: dict[str, tuple[str, str]], dest: Path) -> None:
    """Every file of `tree` written under `dest` from the mirror's blobs, read one after another from a
    single `git cat-file --batch` (never all in memory). Paths come from the repository: one that is
    absolute or climbs out of `dest` is refused."""
    items = sorted(tree.items())
    for path, _ in items:
        norm = posixpath.normpath(path)
        if posixpath.isabs(norm) or norm == ".." or norm.startswith("../"):
            raise CorpusError(f"refusing a path outside the checkout: {path!r}")
    proc = subprocess.Popen(["git", f"--git-dir={git_dir}", "cat-file", "--batch"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    wanted = b"".join(sha.encode() + b"\n" for _p, (_m, sha) in items)
    # fed from a thread: git's output could fill its pipe before all the names are written
    feeder = threading.Thread(target=_feed, args=(proc.stdin, wanted), daemon=True)
    feeder.start()
    try:
        for path, (mode, sha) in items:
            header = proc.stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                raise CorpusError(f"git cat-file in {git_dir}: no blob {sha} for {path}")
            content = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after each object
            out = dest / posixpath.normpath(path)
            out.parent.mkdir(parents=True, exist_ok=True)
            if mode == "120000":
                os.symlink(content.decode("utf-8", "surrogateescape"), out)
            else:
                out.write_bytes(content)
                if mode == "100755":
                    out.chmod(0o755)
    finally:
        proc.stdout.close()  # first: a git still writing then stops, and so does the feeder
        feeder.join()
        failed = proc.wait()
    if failed:
        reason = proc.stderr.read().decode(errors="replace").strip()
        raise CorpusError(f"git cat-file in {git_dir}: {reason}")


def _feed(pipe: IO[bytes], data: bytes) -> None:
    try:
        pipe.write(data)
    except BrokenPipeError:  # git stopped early: its exit status says why
        pass
    finally:
        pipe.close()


def _blob_sha(path: Path) -> str:
    data = os.readlink(path).encode("utf-8", "surrogateescape") if path.is_symlink() else path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def mismatches(folder: Path, tree: dict[str, tuple[str, str]]) -> list[str]:
    """What differs between a folder and a commit's files: missing, changed and extra paths."""
    found: set[str] = set()
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not (Path(root) == folder and d in _IGNORED)]
        for name in files + [d for d in dirs if (Path(root) / d).is_symlink()]:
            found.add((Path(root) / name).relative_to(folder).as_posix())
    problems = [f"extra {p}" for p in sorted(found - tree.keys())]
    problems += [f"missing {p}" for p in sorted(tree.keys() - found)]
    problems += [f"changed {p}" for p in sorted(found & tree.keys()) if _blob_sha(folder / p) != tree[p][1]]
    return problems


def checkout(repo: Repo, dest: Path, mirrors: Path) -> str:
    git_dir = mirror_of(repo, mirrors)
    target = dest / repo.folder
    tree = tree_of(git_dir, repo.commit)
    outside = _outside_links(git_dir, tree)  # never written: they name files of another machine
    absent = _missing_blobs(git_dir, tree)  # not in the mirror: nothing to write (a build skips such files)
    tree = {p: v for p, v in tree.items() if p not in outside and p not in absent}
    if target.exists():
        problems = mismatches(target, tree)
        if problems:
            raise CorpusError(f"{target} exists but is not {repo.name}@{repo.commit[:12]} "
                              f"({len(problems)} differences, e.g. {problems[0]}): "
                              "remove it or pick another DEST")
        return "reused"
    part = dest / f".{repo.folder}.part"
    if part.exists():
        subprocess.run(["rm", "-rf", str(part)], check=True)
    part.mkdir(parents=True)
    _write_blobs(git_dir, tree, part)
    part.rename(target)
    return f"checked out without {len(absent)} file(s) the mirror lacks" if absent else "checked out"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    co = sub.add_parser("checkout", help="check every corpus repository out into DEST/name")
    co.add_argument("dest", type=Path)
    co.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    sub.add_parser("list", help="print the corpus")
    args = ap.parse_args(argv)
    try:
        repos = load()
        if args.cmd == "list":
            for r in repos:
                print(f"{r.name:24} {r.commit} {r.language:11} {r.style}")
            return 0
        args.dest.mkdir(parents=True, exist_ok=True)
        for r in repos:
            print(f"{r.folder:16} {checkout(r, args.dest, args.mirrors)} at {r.commit[:12]}")
    except CorpusError as exc:
        print(f"corpus: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
