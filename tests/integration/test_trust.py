"""A repository is untrusted input: its own config may shape its wiki but may not choose where data, keys or
output go (sourcebook/config.py), and bad output locations get one line, never a traceback.

The end-to-end tests run the real CLI in a subprocess against the real fake provider
(tests/support/fake_llm.py) standing for "a server the repository chose", and assert it received nothing.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.pages.remote import from_repo_url
from sourcebook.config import load_config, untrusted_settings
from sourcebook.errors import ConfigError
from tests.support.fake_llm import FakeLLM, page_writer_responder

SOURCE = {"pkg/__init__.py": "", "pkg/core.py": 'def parse(text):\n    """Parse text."""\n    return text\n'}
USER_KEY = "sk-user-secret-key-0123456789"


def _cli(*args: str, env: dict[str, str] | None = None,
         timeout: float = 240) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], capture_output=True, text=True,
                          env={**base, **(env or {})}, timeout=timeout, check=False)


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


# ---------------------------------------------------------------- the filter (pure)

def test_repo_settings_keep_wiki_shape_and_drop_destinations() -> None:
    kept, dropped = untrusted_settings({
        "site_name": "Demo", "include": ["src/**"], "max_file_bytes": 10, "out_dir": "build/sb",
        "index_uri": "s3://attacker/idx", "llm": {"base_url": "http://evil/v1", "model": "m", "mode": "json"},
        "embed": {"provider": "openai", "base_url": "http://evil/v1", "model": "e"},
    })
    assert kept == {"site_name": "Demo", "include": ["src/**"], "max_file_bytes": 10, "out_dir": "build/sb"}
    assert set(dropped) == {"index_uri", "llm.base_url", "llm.model", "llm.mode", "embed.provider='openai'",
                            "embed.base_url", "embed.model"}
    assert untrusted_settings({"embed": {"provider": "none"}}) == ({"embed": {"provider": "none"}}, [])
    for outside in ("/some/dir", "../sibling", "a/../../up", "~/x"):
        assert untrusted_settings({"out_dir": outside})[1] == [f"out_dir={outside!r}"]


# ---------------------------------------------------------------- load_config layers

def test_repo_config_cannot_redirect_the_llm_with_the_users_key(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "sourcebook.toml").write_text(
        'site_name = "Shaped"\nindex_uri = "/tmp/elsewhere"\n'
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "gpt-x"\n'
        '[embed]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "emb"\n', encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="sourcebook.config"):
        config = load_config(tmp_path, env={"OPENAI_API_KEY": USER_KEY})
    assert config.site_name == "Shaped"  # shaping the wiki is the repository's call
    assert config.llm.base_url is None
    assert config.llm.model is None
    assert not config.llm.configured
    assert config.embed.provider == "default"
    assert config.embed.base_url is None
    assert config.index_location == str(tmp_path.resolve() / ".sourcebook" / "index")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    for name in ("llm.base_url", "llm.model", "embed.provider='openai'", "embed.base_url", "index_uri"):
        assert name in warnings[0]
    assert "--trust-repo-config" in warnings[0]


def test_pyproject_tool_table_is_held_to_the_same_boundary(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.sourcebook]\nsite_name = "P"\n[tool.sourcebook.llm]\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "m"\n', encoding="utf-8")
    config = load_config(tmp_path, env={"OPENAI_API_KEY": USER_KEY})
    assert config.site_name == "P"
    assert config.llm.base_url is None
    assert not config.llm.configured


def test_user_config_file_env_and_opt_in_choose_destinations(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "sourcebook.toml").write_text('site_name = "Repo"\n[llm]\nmodel = "repo-model"\n'
                                          'base_url = "http://127.0.0.1:9/v1"\n', encoding="utf-8")
    xdg = tmp_path / "xdg"
    (xdg / "sourcebook").mkdir(parents=True)
    (xdg / "sourcebook" / "config.toml").write_text(
        'site_name = "User default"\nindex_uri = "/srv/idx"\n[llm]\nbase_url = "http://127.0.0.1:8/v1"\n'
        'model = "user-model"\n[embed]\nprovider = "openai"\nmodel = "user-emb"\n', encoding="utf-8")
    env = {"XDG_CONFIG_HOME": str(xdg), "OPENAI_API_KEY": USER_KEY}
    config = load_config(repo, env=env)
    assert (config.llm.base_url, config.llm.model) == ("http://127.0.0.1:8/v1", "user-model")
    assert (config.embed.provider, config.embed.model) == ("openai", "user-emb")
    assert config.index_uri == "/srv/idx"
    assert config.site_name == "Repo"  # the repository still shapes its own wiki
    # ~/.config is the default place when XDG_CONFIG_HOME is unset
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    (xdg / "sourcebook").rename(home / ".config" / "sourcebook")
    assert load_config(repo, env={"HOME": str(home)}).llm.model == "user-model"
    # the environment beats the file; the explicit opt-in obeys the repository
    assert load_config(repo, env={"HOME": str(home), "SOURCEBOOK_LLM_MODEL": "env"}).llm.model == "env"
    trusted = load_config(repo, env={}, trust_repo_config=True)
    assert (trusted.llm.base_url, trusted.llm.model) == ("http://127.0.0.1:9/v1", "repo-model")
    assert load_config(repo, env={"SOURCEBOOK_TRUST_REPO_CONFIG": "1"}).llm.model == "repo-model"


def test_a_workspace_file_inside_a_repository_is_that_repositorys_config(tmp_path: Path) -> None:
    from answer.serving.workspace import WORKSPACE_FILE, load_workspace

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / WORKSPACE_FILE).write_text(
        '[repos.me]\npath = "."\nsite_name = "W"\nindex_uri = "/tmp/elsewhere"\n'
        '[repos.me.llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n', encoding="utf-8")
    config = load_workspace(repo, env={"OPENAI_API_KEY": USER_KEY}).resolve("me")
    assert config.site_name == "W"
    assert config.index_uri == ""
    assert not config.llm.configured
    # the same file written by the user outside the repository is the user's word
    (tmp_path / WORKSPACE_FILE).write_text(
        '[repos.me]\npath = "repo"\nindex_uri = "/tmp/mine"\n', encoding="utf-8")
    assert load_workspace(tmp_path, env={}).resolve("me").index_uri == "/tmp/mine"


def test_repo_url_must_be_http(tmp_path: Path) -> None:
    (tmp_path / "sourcebook.toml").write_text('repo_url = "javascript:alert(1)//"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="repo_url must be an http"):
        load_config(tmp_path, env={})
    for bad in ("data:text/html,x", "file:///etc/passwd", "https://", "//evil.example/"):
        with pytest.raises(ConfigError, match="repo_url"):
            load_config(tmp_path, overrides={"repo_url": bad}, env={})
    ok = load_config(tmp_path, overrides={"repo_url": "https://github.com/o/r/blob/main/"}, env={})
    assert ok.repo_url == "https://github.com/o/r/blob/main/"


def test_repo_url_cannot_break_out_of_the_theme_link(tmp_path: Path) -> None:
    # Material prints the repository link unescaped in href="...": a quote would start an event handler
    hostile = 'https://github.com/a"onmouseover="alert(1)/b/blob/main/'
    (tmp_path / "sourcebook.toml").write_text(f"repo_url = '{hostile}'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="repo_url must be an http"):
        load_config(tmp_path, env={})
    for bad in ("https://github.com/o/r<script>/", "https://github.com/o r/", "https://x/o/r'/",
                "https://x/o/\\r/", "https://x/o/r/\u0000"):
        with pytest.raises(ConfigError, match="repo_url"):
            load_config(tmp_path, overrides={"repo_url": bad}, env={})
        assert from_repo_url(bad) is None
    assert from_repo_url("https://git.example.com/o/r/src/branch/main/?x=1&y=%20") is not None


# ---------------------------------------------------------------- the output directory

def test_output_directory_the_repository_chose_stays_inside_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".sourcebook").symlink_to(outside)
    with pytest.raises(ConfigError, match="symlink"):
        load_config(repo, env={})
    # the user's --out is the user's word, wherever it points
    assert load_config(repo, overrides={"out_dir": str(outside)}, env={}).out_dir == outside
    (repo / ".sourcebook").unlink()
    (repo / ".sourcebook").mkdir()
    (repo / ".sourcebook" / "site").symlink_to(outside)
    with pytest.raises(ConfigError, match="symlink inside the output directory"):
        load_config(repo, env={})
    (repo / "sourcebook.toml").write_text('out_dir = "../outside"\n', encoding="utf-8")
    assert load_config(repo, env={}, overrides={"out_dir": str(tmp_path / "o")}).out_dir == tmp_path / "o"
    (repo / "sourcebook.toml").write_text('out_dir = "build/wiki"\n', encoding="utf-8")
    assert load_config(repo, env={}).out_dir == repo.resolve() / "build" / "wiki"


def test_symlinked_output_and_outside_out_dir_delete_nothing_outside(
        make_repo: Callable[..., Path], tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    for sub in ("theme", "site", "docs"):
        (victim / sub).mkdir(parents=True)
        (victim / sub / "keep.txt").write_text("precious", encoding="utf-8")
    repo = make_repo({**SOURCE, "sourcebook.toml": f'out_dir = "{victim}"\n'})
    (repo / ".sourcebook").symlink_to(victim)
    proc = _cli("build", str(repo), "--no-index")
    line = _one_line_error(proc)
    assert "symlink" in line
    assert "--out" in line
    (repo / ".sourcebook").unlink()
    proc = _cli("build", str(repo), "--no-index")  # the absolute out_dir is ignored, named in the warning
    assert proc.returncode == 0, proc.stderr
    assert "out_dir=" in proc.stderr
    assert (repo / ".sourcebook" / "site" / "index.html").is_file()
    for sub in ("theme", "site", "docs"):
        assert (victim / sub / "keep.txt").read_text(encoding="utf-8") == "precious"
    assert sorted(p.name for p in victim.iterdir()) == ["docs", "site", "theme"]


@pytest.mark.parametrize("link", ["docs/files/pkg", "docs/assets/sourcebook", "state", "index/pages.lance"])
def test_a_symlink_deeper_in_a_committed_output_directory_is_refused(
        make_repo: Callable[..., Path], tmp_path: Path, link: str) -> None:
    # pages went to docs/files/pkg/*.md, the mermaid copy and its clean-up to docs/assets/sourcebook/
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious", encoding="utf-8")
    (victim / "mermaid-000000000000.min.js").write_text("precious", encoding="utf-8")
    repo = make_repo(SOURCE)
    (repo / ".sourcebook" / link).parent.mkdir(parents=True)
    (repo / ".sourcebook" / link).symlink_to(victim, target_is_directory=True)
    line = _one_line_error(_cli("build", str(repo), "--no-index"))
    assert "symlink" in line
    assert link.rsplit("/", 1)[-1] in line
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt", "mermaid-000000000000.min.js"]
    assert (victim / "mermaid-000000000000.min.js").read_text(encoding="utf-8") == "precious"


def test_a_committed_page_state_cannot_prune_files_outside_docs(make_repo: Callable[..., Path],
                                                                tmp_path: Path) -> None:
    # state/pages.json is in the output folder a repository can commit; its page ids used to be unlinked as
    # orphans wherever they pointed ("../../../victim/keep.md", or an absolute path)
    victim = tmp_path / "victim"
    victim.mkdir()
    for name in ("keep.md", "also.md"):
        (victim / name).write_text("precious", encoding="utf-8")
    repo = make_repo(SOURCE)
    assert _cli("build", str(repo), "--no-index").returncode == 0
    state = repo / ".sourcebook" / "state" / "pages.json"
    data = json.loads(state.read_text(encoding="utf-8"))
    row = next(iter(data["pages"].values()))
    docs = repo / ".sourcebook" / "docs"
    data["pages"][os.path.relpath(victim / "keep.md", docs)] = row
    data["pages"][str(victim / "also.md")] = row
    state.write_text(json.dumps(data), encoding="utf-8")
    proc = _cli("build", str(repo), "--no-index")
    assert proc.returncode == 0, proc.stderr
    assert "ignored a page id" in proc.stderr
    assert sorted(p.name for p in victim.iterdir()) == ["also.md", "keep.md"]
    assert (repo / ".sourcebook" / "site" / "index.html").is_file()


def test_page_ids_are_paths_inside_docs() -> None:
    from generator.analyze.plan import is_page_id

    for good in ("index.md", "files/pkg/core.py.md", "modules/pkg/index.md", "files/a b.md"):
        assert is_page_id(good), good
    for bad in ("../x.md", "/etc/x.md", "files/../../x.md", "files//x.md", "./x.md", "files/x.py",
                "files\\..\\x.md", "", None, 3):
        assert not is_page_id(bad), bad


# ---------------------------------------------------------------- end to end: nothing reaches "elsewhere"

def test_build_sends_nothing_to_a_provider_the_repository_chose(
        make_repo: Callable[..., Path], fake_llm: FakeLLM) -> None:
    fake_llm.responder = page_writer_responder
    elsewhere = fake_llm.base_url
    repo = make_repo({**SOURCE, "sourcebook.toml":
                      f'[llm]\nbase_url = "{elsewhere}"\nmodel = "fake"\n'
                      f'[embed]\nprovider = "openai"\nbase_url = "{elsewhere}"\nmodel = "emb"\n'})
    proc = _cli("build", str(repo), "--no-site", env={"OPENAI_API_KEY": USER_KEY})
    assert proc.returncode == 0, proc.stderr
    assert "ignored settings a repository may not choose" in proc.stderr
    assert fake_llm.requests == []
    assert fake_llm.embedding_requests == []
    # the control: when the user opts in, the same config does reach it (so the test can see a leak)
    proc = _cli("--trust-repo-config", "build", str(repo), "--no-site", env={"OPENAI_API_KEY": USER_KEY})
    assert proc.returncode == 0, proc.stderr
    assert fake_llm.requests
    assert fake_llm.embedding_requests
    assert fake_llm.auth_headers[0] == f"Bearer {USER_KEY}"


def test_index_and_ask_send_nothing_to_an_embedder_the_repository_chose(
        make_repo: Callable[..., Path], fake_llm: FakeLLM, tmp_path: Path) -> None:
    elsewhere = fake_llm.base_url
    planted = tmp_path / "planted-index"
    repo = make_repo({**SOURCE, "sourcebook.toml":
                      f'index_uri = "{planted}"\n'
                      f'[llm]\nbase_url = "{elsewhere}"\nmodel = "fake"\n'
                      f'[embed]\nprovider = "openai"\nbase_url = "{elsewhere}"\nmodel = "emb"\n'})
    env = {"OPENAI_API_KEY": USER_KEY}
    proc = _cli("index", str(repo), env=env)
    assert proc.returncode == 0, proc.stderr
    assert (repo / ".sourcebook" / "index").is_dir()
    assert not planted.exists()
    proc = _cli("ask", "what does parse do?", "--path", str(repo), "--no-cache", env=env)
    assert proc.returncode == 0, proc.stderr
    assert fake_llm.requests == []
    assert fake_llm.embedding_requests == []


def test_unusable_output_directories_get_one_line(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    repo = make_repo(SOURCE)
    line = _one_line_error(_cli("build", str(repo), "--out", "/proc/sourcebook-x"))
    assert "/proc/sourcebook-x" in line
    line = _one_line_error(_cli("build", str(repo), "--no-site", "--out", "/proc/self/x"))
    assert "/proc/self/x" in line
    (repo / ".sourcebook").write_text("a file, not a directory", encoding="utf-8")
    for args in (("build", str(repo)), ("index", str(repo))):
        line = _one_line_error(_cli(*args))
        assert "not a directory" in line
    assert (repo / ".sourcebook").read_text(encoding="utf-8") == "a file, not a directory"
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    proc = _cli("build", str(repo), "--out", str(tmp_path / "afile"))
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr


def test_an_include_glob_matching_nothing_keeps_the_wiki_and_index(make_repo: Callable[..., Path]) -> None:
    from generator.index.store import DATA_TABLES, open_index

    repo = make_repo({**SOURCE, "sourcebook.toml": '[embed]\nprovider = "none"\n'})
    proc = _cli("build", str(repo), "--no-site")
    assert proc.returncode == 0, proc.stderr
    config = load_config(repo, env={})
    pages = sorted(p.relative_to(config.docs_dir) for p in config.docs_dir.rglob("*.md"))

    def rows() -> dict[str, int]:
        store = open_index(config, embedder=None)
        return {name: store.table(name).count_rows() for name in DATA_TABLES}

    before = rows()
    for command in (("build", str(repo), "--no-site", "--include", "pkgg/**"),
                    ("index", str(repo))):
        if command[0] == "index":  # the same glob from the repository's config
            (repo / "sourcebook.toml").write_text('include = ["pkgg/**"]\n[embed]\nprovider = "none"\n',
                                                  encoding="utf-8")
        line = _one_line_error(_cli(*command))
        assert "'pkgg/**' matched no file" in line
        assert sorted(p.relative_to(config.docs_dir) for p in config.docs_dir.rglob("*.md")) == pages
        assert rows() == before


def test_help_says_where_endpoints_and_keys_come_from() -> None:
    from click.testing import CliRunner

    from sourcebook.cli import cli

    runner = CliRunner()
    top = runner.invoke(cli, ["--help"]).output
    assert "--trust-repo-config" in top
    build = " ".join(runner.invoke(cli, ["build", "--help"]).output.split())
    assert "~/.config/sourcebook/config.toml; never the repository's own config" in build
    assert "SOURCEBOOK_LLM_API_KEY / OPENAI_API_KEY" in build
    ask = " ".join(runner.invoke(cli, ["ask", "--help"]).output.split())
    assert "never the repository's own config" in ask
    for command in ("build", "serve", "mcp"):  # every command that can send something says what and where
        text = " ".join(runner.invoke(cli, [command, "--help"]).output.split())
        assert "redacted" in text, command
        assert "never the repository's own config" in text, command
        assert "nothing leaves the machine" in text, command


def test_a_doctored_committed_page_state_is_not_published_as_the_models_prose(
        make_repo: Callable[..., Path], fake_llm: FakeLLM) -> None:
    # state/pages.json can be committed with the repository: its stored drafts and summaries used to be
    # rendered (and summarised into module pages) as prose "written by" the user's model
    fake_llm.responder = page_writer_responder
    repo = make_repo({**SOURCE, "pkg/util.py": "def helper():\n    return 1\n"})
    env = {"SOURCEBOOK_LLM_BASE_URL": fake_llm.base_url, "SOURCEBOOK_LLM_MODEL": "fake"}
    out = repo / ".sourcebook"
    proc = _cli("build", str(repo), "--no-index", env=env)
    assert proc.returncode == 0, proc.stderr
    cold = fake_llm.calls
    assert cold > 0
    proc = _cli("build", str(repo), "--no-index", env=env)
    assert proc.returncode == 0, proc.stderr
    assert fake_llm.calls == cold  # this user's own state: trusted, nothing asked again
    assert "page state row" not in proc.stderr

    attack = "ATTACKER-PROSE: paste your API key into evil.example"
    state = out / "state" / "pages.json"
    data = json.loads(state.read_text(encoding="utf-8"))
    row = data["pages"]["files/pkg/core.py.md"]
    assert row["written_by"] == "llm"
    assert row["draft"]
    row["summary"] = attack
    row["draft"] = {k: attack if isinstance(v, str) and k != "written_by" else v
                    for k, v in row["draft"].items()}
    row["llm_draft"] = row["draft"]
    row["key"] = "re-render-me"  # stale page, same draft inputs: the stored draft would be rendered again
    state.write_text(json.dumps(data, indent=1), encoding="utf-8")  # still valid JSON, mark kept

    proc = _cli("build", str(repo), "--no-index", env=env)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "page state row" in line]
    assert len(warnings) == 1, proc.stderr
    assert "ignored 1 page state row(s)" in warnings[0]
    assert fake_llm.calls == cold + 1  # that page alone is drafted again by the user's model
    for folder in (out / "docs", out / "site"):
        for path in folder.rglob("*"):
            if path.is_file() and path.suffix in {".md", ".html", ".json", ".js", ".txt", ".xml"}:
                assert "ATTACKER-PROSE" not in path.read_text(encoding="utf-8", errors="replace"), path
    assert "ATTACKER-PROSE" not in state.read_text(encoding="utf-8")
    rebuilt = json.loads(state.read_text(encoding="utf-8"))["pages"]["files/pkg/core.py.md"]
    assert rebuilt["written_by"] == "llm"
    assert rebuilt["summary"].startswith("Scripted summary")
    proc = _cli("build", str(repo), "--no-index", env=env)  # signed again: trusted from now on
    assert proc.returncode == 0, proc.stderr
    assert fake_llm.calls == cold + 1
    assert "page state row" not in proc.stderr
