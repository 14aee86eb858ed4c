"""The generated Markdown -> a static MkDocs Material site (`mkdocs build --strict`)."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

from generator.plan import atomic_write_text
from generator.render import data_dir
from sourcebook.errors import SiteBuildError

log = logging.getLogger(__name__)

MKDOCS_FILE = "mkdocs.yml"
THEME_DIR = "theme"


def install_theme(out_dir: Path) -> Path:
    """Copy the shared theme layer (site/) next to the generated mkdocs.yml; returns its directory."""
    target = out_dir / THEME_DIR
    source = data_dir("site")
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target)
    return target


def write_config(out_dir: Path, text: str) -> Path:
    path = out_dir / MKDOCS_FILE
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        atomic_write_text(path, text)
    return path


def build_site(config_file: Path, *, strict: bool = True, timeout_s: float = 900.0) -> str:
    """Run `python -m mkdocs build` with this interpreter; returns mkdocs' log, raises SiteBuildError."""
    cmd = [sys.executable, "-m", "mkdocs", "build", "--clean", "-f", str(config_file)]
    if strict:
        cmd.append("--strict")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    log.info("running %s", " ".join(cmd))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s, check=False,
                              cwd=config_file.parent)
    except subprocess.TimeoutExpired as exc:
        raise SiteBuildError(f"mkdocs build timed out after {timeout_s:.0f} s") from exc
    output = (proc.stdout or "") + (proc.stderr or "")
    if proc.returncode != 0:
        raise SiteBuildError(f"mkdocs build failed (exit {proc.returncode}):\n{output.strip()}")
    return output
