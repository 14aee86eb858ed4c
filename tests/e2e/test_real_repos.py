"""The real-repository fixtures (tests/support/real_repos.py): pinned bytes or a clear failure, cached once,
the same checkout on every machine."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.real_repos import CACHE_ENV, REQUESTS, FixtureUnavailable, archive, checkout


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(cache))
    return cache


def test_bytes_other_than_the_pinned_ones_are_refused_and_not_cached(empty_cache: Path) -> None:
    wrong = dataclasses.replace(REQUESTS, sha256="0" * 64)
    with pytest.raises(FixtureUnavailable, match=f"has sha256 {REQUESTS.sha256}, the tests pin 0{{64}}"):
        archive(wrong)
    assert [p for p in empty_cache.rglob("*") if p.is_file()] == []


def test_a_failed_download_is_an_error_naming_the_fixture(empty_cache: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # pip with no index and an empty folder to find links in: the registry unreachable, offline
    links = empty_cache.parent / "nothing-here"
    links.mkdir()
    offline = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(links)}
    for key, value in offline.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(FixtureUnavailable, match=r"could not download the requests-2\.34\.2\.tar\.gz test"):
        archive(REQUESTS)


def test_a_cached_archive_is_used_without_the_registry(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    pinned = archive(REQUESTS)  # the session's cache (fetched now if need be)
    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copy(pinned, cache / REQUESTS.filename)
    monkeypatch.setenv(CACHE_ENV, str(cache))

    def no_pip(*args: object, **kwargs: object) -> None:
        raise AssertionError("pip was run although the cache holds the pinned archive")

    monkeypatch.setattr(subprocess, "run", no_pip)
    assert archive(REQUESTS) == cache / REQUESTS.filename


def test_a_checkout_is_one_commit_the_same_on_every_machine(tmp_path: Path) -> None:
    heads = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        root = checkout(REQUESTS, tmp_path / name)
        assert (root / "src" / "requests" / "sessions.py").is_file()
        status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True,
                                check=True)
        assert status.stdout == ""  # every file of the sdist committed
        heads.append(subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                    check=True).stdout.strip())
    assert heads[0] == heads[1]  # fixed author, committer and dates: the same commit id
