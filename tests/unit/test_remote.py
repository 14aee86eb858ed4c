"""Source links: forge URL forms from git remotes, the --repo-url override, nothing without a remote."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from generator.pages.remote import detect, from_remote, from_repo_url, source_links

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(("remote", "url"), [
    ("https://github.com/pallets/flask.git", f"https://github.com/pallets/flask/blob/{SHA}/src/a.py#L3-L9"),
    ("git@github.com:pallets/flask.git", f"https://github.com/pallets/flask/blob/{SHA}/src/a.py#L3-L9"),
    ("ssh://git@github.com/pallets/flask", f"https://github.com/pallets/flask/blob/{SHA}/src/a.py#L3-L9"),
    ("https://gitlab.com/group/sub/proj.git", f"https://gitlab.com/group/sub/proj/-/blob/{SHA}/src/a.py#L3-9"),
    ("git@gitlab.example.org:team/proj.git", f"https://gitlab.example.org/team/proj/-/blob/{SHA}/src/a.py#L3-9"),
    ("git@git.example.org:team/proj.git", None),  # a host we cannot tell: no guessed URL form
    ("git@bitbucket.org:team/proj.git", f"https://bitbucket.org/team/proj/src/{SHA}/src/a.py#lines-3:9"),
    ("https://codeberg.org/fj/fj", f"https://codeberg.org/fj/fj/src/commit/{SHA}/src/a.py#L3-L9"),
    ("https://gitea.example.com/o/r.git", f"https://gitea.example.com/o/r/src/commit/{SHA}/src/a.py#L3-L9"),
    ("/srv/mirrors/flask/repo", None),  # a local path
    ("file:///srv/git/flask.git", None),
    ("C:/repos/flask", None),
    ("https://github.com/onlyowner", None),
    ("https://github.com/o/../r", None),
])
def test_remote_url_forms(remote: str, url: str | None) -> None:
    links = from_remote(remote, SHA)
    assert (links.url("src/a.py", 3, 9) if links else None) == url


def test_single_line_anchor_and_path_quoting() -> None:
    links = from_remote("git@github.com:o/r.git", SHA)
    assert links is not None
    assert links.url("a b/x#1.py", 4, 4) == f"https://github.com/o/r/blob/{SHA}/a%20b/x%231.py#L4"
    assert links.home == "https://github.com/o/r"
    assert from_remote("git@github.com:o/r.git", "main") is None  # only a commit hash pins the lines


def test_repo_url_override_is_http_only() -> None:
    links = from_repo_url("https://github.com/o/r/blob/v1.0")
    assert links is not None
    assert links.url("x.py", 1, 2) == "https://github.com/o/r/blob/v1.0/x.py#L1-L2"
    assert from_repo_url("javascript:alert(1)//") is None
    assert from_repo_url("file:///etc/") is None


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_detect_from_a_real_checkout(make_repo) -> None:  # type: ignore[no-untyped-def]
    root = make_repo({"a.py": "x = 1\n"})
    _git(root, "init", "-q")
    assert detect(root) is None  # no remote: no links
    _git(root, "remote", "add", "origin", "git@gitlab.com:team/proj.git")
    assert detect(root) is None  # no commit yet
    _git(root, "add", "-A")
    _git(root, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x")
    links = detect(root)
    assert links is not None
    assert links.forge == "gitlab"
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert links.base == f"https://gitlab.com/team/proj/-/blob/{head}/"
    override = source_links(root, "https://example.com/code/")
    assert override is not None
    assert override.base == "https://example.com/code/"
    assert detect(root / "missing") is None
