"""Shared fixtures: small repositories written from dicts of files into a temp dir, the scripted LLM server,
the moto S3 server, the real repositories, chromium; and the tiers.

The tests are in three folders by what they need (README, "Tests"): tests/unit (pure and fast: no server, no
LanceDB, no MkDocs build; `make test-fast`), tests/integration (real LanceDB, real MkDocs builds of small
repositories, real HTTP/MCP servers on 127.0.0.1) and tests/e2e (the flask and requests sdists, the browser,
a wheel installed into a fresh environment). Each test gets its folder's marker (`-m unit`, `-m integration`,
`-m e2e`). Helpers the tests share live in tests/support/, never in a test file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.browser import chromium
from tests.support.fake_llm import FakeLLM
from tests.support.object_store import AWS_KEYS, MotoS3
from tests.support.real_repos import FLASK, REQUESTS, FixtureUnavailable, Sdist, checkout
from tests.support.repo_files import write_files

TIERS = ("unit", "integration", "e2e")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its tier, the folder under tests/ that holds it."""
    for item in items:
        tier = item.path.parent.name
        if tier in TIERS:
            item.add_marker(getattr(pytest.mark, tier))


@pytest.fixture(scope="session", autouse=True)
def _one_user_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One temp $XDG_STATE_HOME (the local key, sourcebook/local_key.py) for the whole session: every test is
    the same user, so an index a module-scoped fixture builds (before any per-test fixture) is this user's."""
    state = tmp_path_factory.mktemp("xdg-state")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(state))
        yield state


@pytest.fixture(autouse=True)
def _isolated_user_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                          _one_user_state: Path) -> Path:
    """Point the user config file ($XDG_CONFIG_HOME/sourcebook/config.toml) at an empty temp dir, so no test
    (nor a CLI subprocess it starts) reads the real user's settings, and trust no repository config."""
    home = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(_one_user_state))  # undo() in a test keeps this user
    monkeypatch.delenv("SOURCEBOOK_TRUST_REPO_CONFIG", raising=False)
    return home


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Write {relative path: text or bytes} under a fresh directory and return it."""

    def _make(files: dict[str, str | bytes], name: str = "repo") -> Path:
        return write_files(tmp_path / name, files)

    return _make


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A scripted OpenAI-compatible server on 127.0.0.1 (tests/support/fake_llm.py); stopped after the
    test."""
    with FakeLLM() as server:
        yield server


@pytest.fixture(scope="session")
def moto_s3() -> Iterator[MotoS3]:
    """One moto S3 server on 127.0.0.1 for the session (tests/support/object_store.py); each test makes its
    own bucket with `moto_s3.bucket()`."""
    with MotoS3() as server:
        yield server


@pytest.fixture
def s3_env(moto_s3: MotoS3, monkeypatch: pytest.MonkeyPatch) -> MotoS3:
    """The moto server's standard AWS environment set for this test (and the CLI subprocesses it starts),
    with every other AWS_* variable removed."""
    for key in AWS_KEYS:
        monkeypatch.delenv(key, raising=False)
    for key, value in moto_s3.env.items():
        monkeypatch.setenv(key, value)
    return moto_s3


def _real_repo(spec: Sdist, tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        return checkout(spec, tmp_path_factory.mktemp(f"{spec.name}-sdist"))
    except FixtureUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)  # a test on a real repository never skips for want of it


@pytest.fixture(scope="session")
def flask_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """flask's pinned sdist (tests/support/real_repos.py), extracted and committed into a git checkout, once a
    session. Shared: a test that writes into the tree builds with `out_dir` elsewhere or works on a copy."""
    return _real_repo(FLASK, tmp_path_factory)


@pytest.fixture(scope="session")
def requests_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """requests' pinned sdist, as `flask_repo`."""
    return _real_repo(REQUESTS, tmp_path_factory)


@pytest.fixture(scope="session")
def flask_wiki(flask_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """flask's wiki, extractive, with its site and no index, built once a session: its output folder
    (docs/, site/). Read only: the browser tests serve its site, the page tests read its Markdown."""
    from generator.build import build
    from sourcebook.config import load_config

    out = tmp_path_factory.mktemp("flask-wiki") / "out"
    with pytest.MonkeyPatch.context() as patch:  # built before any test's own user config is set
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("flask-wiki-config")))
        report = build(load_config(flask_repo, overrides={"out_dir": str(out)}), index=False)
    assert report.site_dir == out / "site"
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Debian's headless chromium with a DevTools port (tests/support/browser.py), one per test module: its
    DevTools HTTP base URL. The browser tests skip themselves when chromium is not installed."""
    try:
        with chromium(tmp_path_factory.mktemp("chromium-profile")) as url:
            yield url
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
