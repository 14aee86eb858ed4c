"""Page keys and prompts do not depend on the checkout folder's name: the same repository built in two
differently named folders (as two CI runners check it out) with one shared index (the build cache) asks the
model nothing the second time, and publishes the same pages. The project's name comes from the configured
site_name, a manifest or the git remote; a project nothing names is "the repository" in the prompts.
Through the real CLI with the fake provider (real HTTP on 127.0.0.1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.analyze.manifests import project_name, remote_project_name, site_title
from tests.support.fake_llm import FakeLLM, page_writer_responder
from tests.support.real_repos import GIT_ENV
from tests.support.repo_files import DEMO, write_files

ROOT = Path(__file__).resolve().parents[2]


def _build(root: Path, fake: FakeLLM, shared: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1", "SOURCEBOOK_EMBEDDER": "none",
           "SOURCEBOOK_LLM_BASE_URL": fake.base_url, "SOURCEBOOK_LLM_MODEL": "fake",
           "SOURCEBOOK_INDEX_URI": shared}
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--no-site"], cwd=root,
                          env=env, check=False, capture_output=True, text=True, timeout=600)


def _docs(root: Path) -> dict[str, str]:
    docs = root / ".sourcebook" / "docs"
    return {p.relative_to(docs).as_posix(): p.read_text(encoding="utf-8") for p in sorted(docs.rglob("*.md"))}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


@pytest.mark.parametrize("named_by", ["nothing", "git-remote"])
def test_the_same_repository_in_another_folder_asks_the_model_nothing(tmp_path: Path, fake_llm: FakeLLM,
                                                                      named_by: str) -> None:
    fake_llm.responder = page_writer_responder
    shared = str(tmp_path / "shared-index")
    first = write_files(tmp_path / "runner-a" / "checkout-one", DEMO)
    second = write_files(tmp_path / "runner-b" / "ci-build-7f3a", DEMO)
    for root in (first, second):
        if named_by == "git-remote":
            _git(root, "init", "-q", "-b", "main")
            _git(root, "remote", "add", "origin", "https://ci-token:s3cr3t@forge.example/acme/widgets.git")
            _git(root, "add", "-A")
            _git(root, "commit", "-q", "-m", "one commit")
    done = _build(first, fake_llm, shared)
    assert done.returncode == 0, done.stderr[-3000:]
    asked = fake_llm.calls
    assert asked > 0
    prompts = fake_llm.all_text()
    assert "checkout-one" not in prompts  # the folder's name is in no prompt
    if named_by == "git-remote":
        assert 'the repository \\"widgets\\"' in prompts
        assert "s3cr3t" not in prompts
    again = _build(second, fake_llm, shared)
    assert again.returncode == 0, again.stderr[-3000:]
    assert fake_llm.calls == asked  # not one call: every module, overview and topic page came from the cache
    assert _docs(second) == _docs(first)


def test_the_project_name_never_comes_from_the_folder(tmp_path: Path) -> None:
    root = write_files(tmp_path / "some-folder", {"main.c": "int main(void) { return 0; }\n"})
    assert project_name(root) == ""
    assert project_name(root, "Configured") == "Configured"
    assert site_title(root) == "some-folder"  # the site's title alone falls back to it (display only)
    (root / "pyproject.toml").write_text('[project]\nname = "from-manifest"\n', encoding="utf-8")
    assert project_name(root) == "from-manifest"
    for url, name in (("https://github.com/go-chi/chi.git", "chi"),
                      ("git@github.com:pallets/flask.git", "flask"),
                      ("ssh://git@host:22/team/repo-x/", "repo-x"), ("/srv/git/tool.git", "tool"),
                      ("https://user:tok@gitlab.example/group/sub/proj", "proj")):
        assert remote_project_name(url) == name, url
    for url in ("", "https://host/", "https://host/org/bad name.git"):
        assert remote_project_name(url) is None, url
