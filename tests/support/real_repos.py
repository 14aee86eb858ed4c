"""Real repositories for end-to-end tests, on every machine: the source distributions of flask and requests
from the package registry, pinned by version and sha256.

`archive(spec)` returns the verified .tar.gz, downloaded once (`pip download`, the registry's ordinary client)
into the cache under this checkout's .venv/ (`make clean` drops it; a fresh clone downloads once; override
with $SOURCEBOOK_TEST_FIXTURES). `checkout(spec, dest)` extracts it under `dest` and commits it into a new
git repository with a fixed author and date, so a build sees a checkout as it would on a developer's
machine and two sessions see the same commit. A download or a hash that does not match raises
FixtureUnavailable: the tests that need the repository fail with that message, they never skip.

`python -m tests.support.real_repos` fetches every fixture (the Makefile's test target runs it first).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

CACHE_ENV = "SOURCEBOOK_TEST_FIXTURES"
REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Sdist:
    name: str
    version: str
    sha256: str  # of the .tar.gz the registry serves for this version

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}.tar.gz"


FLASK = Sdist("flask", "3.1.3", "0ef0e52b8a9cd932855379197dd8f94047b359ca0a78695144304cb45f87c9eb")
REQUESTS = Sdist("requests", "2.34.2", "f288924cae4e29463698d6d60bc6a4da69c89185ad1e0bcc4104f584e960b9ed")
SDISTS = (FLASK, REQUESTS)

# one commit, the same on every machine and in every session
GIT_ENV = {"GIT_AUTHOR_NAME": "sourcebook tests", "GIT_AUTHOR_EMAIL": "tests@sourcebook.invalid",
           "GIT_COMMITTER_NAME": "sourcebook tests", "GIT_COMMITTER_EMAIL": "tests@sourcebook.invalid",
           "GIT_AUTHOR_DATE": "2025-01-01T00:00:00+00:00", "GIT_COMMITTER_DATE": "2025-01-01T00:00:00+00:00",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


class FixtureUnavailable(RuntimeError):
    """A pinned repository could not be had: not downloaded, or not the bytes pinned."""


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or REPO_ROOT / ".venv" / "share" / "sourcebook-test-fixtures")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def archive(spec: Sdist) -> Path:
    """The verified sdist of `spec`, from the cache or downloaded into it now."""
    cache = cache_dir()
    target = cache / spec.filename
    if target.is_file() and _sha256(target) == spec.sha256:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".download-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
               "--dest", tmp, f"{spec.name}=={spec.version}"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise FixtureUnavailable(f"could not download the {spec.filename} test fixture: {exc}") from exc
        got = Path(tmp) / spec.filename
        if done.returncode != 0 or not got.is_file():
            said = (done.stderr or done.stdout)[-600:].strip()
            raise FixtureUnavailable(f"could not download the {spec.filename} test fixture ({' '.join(cmd)}, "
                                     f"exit {done.returncode}): {said}")
        actual = _sha256(got)
        if actual != spec.sha256:
            raise FixtureUnavailable(f"the registry's {spec.filename} has sha256 {actual}, the tests pin "
                                     f"{spec.sha256}: not the pinned bytes, refused")
        os.replace(got, target)  # in the same folder: a reader never sees half a file
    return target


def checkout(spec: Sdist, dest: Path) -> Path:
    """Extract `spec`'s sdist as `dest/<name>` and commit it into a new git repository; return that folder."""
    source = archive(spec)
    root = dest / spec.name
    top = f"{spec.name}-{spec.version}"
    with tempfile.TemporaryDirectory(dir=dest) as tmp, tarfile.open(source) as tar:
        # the "data" filter refuses links out of the tree, device files and absolute paths
        tar.extractall(tmp, filter="data")
        shutil.move(Path(tmp) / top, root)
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", f"{top} (sdist)"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, timeout=120)
    return root


def main() -> None:
    for spec in SDISTS:
        try:
            print(f"{spec.filename}: {archive(spec)}")
        except FixtureUnavailable as exc:
            sys.exit(str(exc))


if __name__ == "__main__":
    main()
