"""bench/corpus.py checks a corpus repository out of its mirror: a repository holding symlinks that leave it
(an absolute target, or one climbing above the root, as a test fixture for broken links does) is checked
out without them, and the checkout is then recognised as the pinned commit's; files `.gitattributes` keeps
out of release archives (`export-ignore`) are checked out all the same, as committed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bench import corpus
from tests.support.git_repos import first_commit, git


@pytest.fixture
def mirrored(tmp_path: Path) -> tuple[corpus.Repo, Path]:
    work = tmp_path / "work"
    (work / "src" / "test" / "misc").mkdir(parents=True)
    (work / "src" / "lib.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    os.symlink("/etc/passwd", work / "src" / "test" / "misc" / "broken-abs-symlink")
    os.symlink("../../../../outside", work / "src" / "test" / "misc" / "climbs-out")
    os.symlink("../../lib.py", work / "src" / "test" / "misc" / "inner")
    commit = first_commit(work, "files and links")
    mirrors = tmp_path / "mirrors"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(mirrors / "owner+proj" / "repo"))
    return corpus.Repo("owner/proj", commit, "python"), mirrors


def test_links_leaving_the_repository_are_not_checked_out(mirrored: tuple[corpus.Repo, Path],
                                                           tmp_path: Path) -> None:
    repo, mirrors = mirrored
    dest = tmp_path / "dest"
    dest.mkdir()
    assert corpus.checkout(repo, dest, mirrors) == "checked out"
    misc = dest / "proj" / "src" / "test" / "misc"
    assert (dest / "proj" / "src" / "lib.py").read_text(encoding="utf-8").startswith("def f")
    assert os.readlink(misc / "inner") == "../../lib.py"  # a link inside the repository is kept
    assert not (misc / "broken-abs-symlink").is_symlink()
    assert not (misc / "climbs-out").is_symlink()
    # the same commit again: the folder is its checkout (the skipped links are not "missing")
    assert corpus.checkout(repo, dest, mirrors) == "reused"


def test_a_checkout_missing_a_kept_file_is_refused(mirrored: tuple[corpus.Repo, Path],
                                                   tmp_path: Path) -> None:
    repo, mirrors = mirrored
    dest = tmp_path / "dest"
    dest.mkdir()
    corpus.checkout(repo, dest, mirrors)
    (dest / "proj" / "src" / "test" / "misc" / "inner").unlink()
    with pytest.raises(corpus.CorpusError, match="missing src/test/misc/inner"):
        corpus.checkout(repo, dest, mirrors)


def test_a_mirror_lacking_a_blob_checks_out_the_rest(mirrored: tuple[corpus.Repo, Path],
                                                     tmp_path: Path) -> None:
    repo, mirrors = mirrored
    git_dir = mirrors / "owner+proj" / "repo"
    sha = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", f"{repo.commit}:src/lib.py"],
                         capture_output=True, text=True, check=True).stdout.strip()
    # the fetch tool can leave a repository's largest files out of a mirror; `git archive` then fails whole
    (git_dir / "objects" / sha[:2] / sha[2:]).unlink()
    dest = tmp_path / "dest"
    dest.mkdir()
    assert corpus.checkout(repo, dest, mirrors) == "checked out without 1 file(s) the mirror lacks"
    misc = dest / "proj" / "src" / "test" / "misc"
    assert not (dest / "proj" / "src" / "lib.py").exists()
    assert os.readlink(misc / "inner") == "../../lib.py"
    assert not (misc / "broken-abs-symlink").is_symlink()
    assert corpus.checkout(repo, dest, mirrors) == "reused"


def test_files_marked_export_ignore_are_checked_out(tmp_path: Path) -> None:
    # a PHP package keeps its tests out of its release archive; a clone, which is what users index, has them
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "tests").mkdir()
    (work / "src" / "Logger.php").write_text("<?php\nclass Logger {}\n", encoding="utf-8")
    (work / "tests" / "LoggerTest.php").write_text("<?php\nclass LoggerTest {}\n", encoding="utf-8")
    (work / ".gitattributes").write_text("/tests export-ignore\n/README.md export-subst\n", encoding="utf-8")
    (work / "README.md").write_text("version $Format:%H$\n", encoding="utf-8")
    commit = first_commit(work, "a package with tests")
    mirrors = tmp_path / "mirrors"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(mirrors / "acme+log" / "repo"))
    repo = corpus.Repo("acme/log", commit, "php")
    dest = tmp_path / "dest"
    dest.mkdir()
    assert corpus.checkout(repo, dest, mirrors) == "checked out"
    assert (dest / "log" / "tests" / "LoggerTest.php").read_text(encoding="utf-8").startswith("<?php")
    assert (dest / "log" / "README.md").read_text(encoding="utf-8") == "version $Format:%H$\n"  # as committed
    assert corpus.checkout(repo, dest, mirrors) == "reused"
