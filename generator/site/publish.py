"""The generated Markdown -> a static MkDocs Material site (`mkdocs build --strict`)."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from sourcebook.atomic import atomic_copy, atomic_write_text
from sourcebook.data_files import data_dir
from sourcebook.errors import NotOwnedError, SiteBuildError
from sourcebook.settings import SITE_ENGINE_ENV as ENGINE_ENV  # noqa: F401 - its name, for the tests

log = logging.getLogger(__name__)

MKDOCS_FILE = "mkdocs.yml"
THEME_DIR = "theme"
DOCS_DIR = "docs"
SITE_DIR = "site"
# Where `sourcebook setup` puts the pinned mermaid.min.js, inside a data folder (sourcebook/data_home.py)
MERMAID_FILE = "mermaid/mermaid.min.js"
# Inside docs_dir rather than the theme: the root mkdocs.yml (dogfood) shares the docs but not the theme copy.
MERMAID_DIR = "assets/sourcebook"


@dataclass(frozen=True)
class MermaidAsset:
    """The local mermaid.js a site ships; its name carries a content hash: a new file, a new config."""

    source: Path
    name: str  # mermaid-<sha12>.min.js

    @property
    def url(self) -> str:
        return f"{MERMAID_DIR}/{self.name}"


def mermaid_asset(source: Path | None = None) -> MermaidAsset | None:
    """The installed mermaid.min.js (default: the first data folder's MERMAID_FILE), or None: then Material
    fetches mermaid from its CDN, as before."""
    from sourcebook.data_home import find_asset, prefix_home

    found = find_asset(MERMAID_FILE) if source is None else source
    if found is None or not found.is_file():
        _log_cdn_once(str(found or prefix_home() / MERMAID_FILE))
        return None
    source = found
    stat = source.stat()
    return MermaidAsset(source, f"mermaid-{_sha12(str(source), stat.st_size, stat.st_mtime_ns)}.min.js")


@cache
def _sha12(path: str, size: int, mtime_ns: int) -> str:
    # keyed by size and mtime: 3 MB hashed once per process, not once per build
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


@cache
def _log_cdn_once(path: str) -> None:
    log.info("no local mermaid.js at %s (run `sourcebook setup`): diagrams will load mermaid from Material's "
             "CDN, so they show as source text offline", path)


def install_mermaid(docs_dir: Path, asset: MermaidAsset | None) -> None:
    """Copy `asset` into the docs' assets; drop copies of other versions (and all of them when None)."""
    target = docs_dir / MERMAID_DIR
    if target.is_dir():
        for old in target.glob("mermaid-*.min.js"):
            if asset is None or old.name != asset.name:
                old.unlink()
    if asset is not None and not (target / asset.name).is_file():
        target.mkdir(parents=True, exist_ok=True)
        atomic_copy(asset.source, target / asset.name)


# -- directories sourcebook owns -----------------------------------------------------------------------------
# theme/ and site/ are replaced wholesale on every build. Each carries this marker, and a directory without it
# is never replaced or deleted: an --out that happens to hold someone's own `site/` folder stays intact.

OWNED_MARKER = ".sourcebook-owned"
_MARKER_TEXT = "Created by sourcebook, which replaces this directory on every build.\n"
# names of the build's working copies next to their target: .site.new-<pid>-<random>, .site.old-<pid>-<random>
_WORK_NAME = re.compile(r"^\.(?P<target>[\w-]+)\.(?:new|old)-(?P<pid>\d+)-\w+$")


_MARK_PREFIX = "mark: "


def _owner_mark(target: Path) -> str | None:
    """This user's mark for the directory at `target` (keyed with the local key; None without one): a
    committed copy of the marker file cannot carry it, since no repository knows the key."""
    from sourcebook.local_key import keyed, local_key

    return keyed(b"sourcebook-owned\0" + str(target.absolute()).encode("utf-8"), local_key())


def claim(directory: Path, target: Path | None = None) -> None:
    """Mark `directory` (which sourcebook just created, and which will be `target`) as this user's."""
    mark = _owner_mark(target or directory)
    (directory / OWNED_MARKER).write_text(_MARKER_TEXT + (f"{_MARK_PREFIX}{mark}\n" if mark else ""),
                                          encoding="utf-8")


def owned_here(directory: Path) -> bool:
    """Whether this user's sourcebook made `directory` (a real directory whose marker carries this user's
    mark for this path). A site, theme or output committed with a repository never is: it is not served,
    and the next build sets it aside."""
    import hmac

    marker = directory / OWNED_MARKER
    if directory.is_symlink() or marker.is_symlink() or not marker.is_file():
        return False
    expected = _owner_mark(directory)
    try:
        text = marker.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return False
    marks = [line[len(_MARK_PREFIX):].strip() for line in text.splitlines() if line.startswith(_MARK_PREFIX)]
    return expected is not None and any(hmac.compare_digest(mark, expected) for mark in marks)


def set_aside_foreign(directory: Path) -> Path | None:
    """Move a sourcebook directory this user did not make (committed with the repository: its marker has no
    mark of this user's, or it predates marks) out of the way, so the build replaces it; nothing is deleted.
    Returns where it went, or None when there was nothing to move (absent, this user's, or not sourcebook's
    at all: `check_owned` refuses that one)."""
    if directory.is_symlink() or not directory.is_dir() or owned_here(directory):
        return None
    if not ((directory / OWNED_MARKER).is_file() or _made_before_markers(directory)):
        return None
    aside = Path(tempfile.mkdtemp(prefix=f".{directory.name}.not-ours-", dir=directory.parent))
    os.replace(directory, aside / directory.name)
    log.warning("%s was not built by this user (committed with the repository, or by an older sourcebook): "
                "moved to %s and rebuilt", directory, aside / directory.name)
    return aside / directory.name


def check_owned(directory: Path) -> None:
    """Raise NotOwnedError unless `directory` is absent or a real directory sourcebook created."""
    if directory.is_symlink():
        raise NotOwnedError(str(directory), "is a symbolic link")
    if not directory.exists():
        return
    if not directory.is_dir():
        raise NotOwnedError(str(directory), "is not a directory")
    if (directory / OWNED_MARKER).is_file() or _made_before_markers(directory):
        return
    raise NotOwnedError(str(directory), f"has no {OWNED_MARKER} marker")


def _made_before_markers(directory: Path) -> bool:
    # Sites and themes written before the marker existed carry sourcebook's generator tag in their pages.
    for page in (directory / "index.html", directory / "main.html"):
        if page.is_file() and '<meta name="generator" content="sourcebook">' in page.read_text(
                encoding="utf-8", errors="replace")[:20_000]:
            return True
    return False


def replace_owned_dir(target: Path, fill: Callable[[Path], object]) -> None:
    """Make a new `target`: `fill(tmp)` writes it into a fresh sibling directory, which then takes the old
    one's place. Until that swap the old directory is untouched, so a failed or killed `fill` (mkdocs) leaves
    it complete; the swap itself is two renames on one filesystem."""
    check_owned(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(target)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-{os.getpid()}-", dir=target.parent))
    try:
        claim(work, target)  # first, so that a copy left by a killed run is recognisably sourcebook's
        fill(work)
        claim(work, target)  # and again, in case `fill` cleaned the directory
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-{os.getpid()}-", dir=target.parent))
            os.replace(target, old / target.name)
            try:
                os.replace(work, target)
            except OSError:
                os.replace(old / target.name, target)  # put the old one back
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _remove_leftovers(target: Path) -> None:
    """Working copies of `target` from runs that were killed (their process is gone), marked as ours."""
    for sibling in target.parent.glob(f".{target.name}.*-*"):
        m = _WORK_NAME.match(sibling.name)
        if not m or m.group("target") != target.name or sibling.is_symlink() or _alive(int(m.group("pid"))):
            continue
        marked = (sibling / OWNED_MARKER).is_file() or (sibling / target.name / OWNED_MARKER).is_file()
        if marked:
            log.info("removing %s, left by an interrupted build", sibling)
            shutil.rmtree(sibling, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def install_theme(out_dir: Path) -> Path:
    """Copy the shared theme layer (site/) next to the generated mkdocs.yml, and the local mermaid.js (if any)
    into its docs; returns the theme directory."""
    target = out_dir / THEME_DIR
    source = data_dir("site")
    replace_owned_dir(target, lambda work: shutil.copytree(source, work, dirs_exist_ok=True))
    install_mermaid(out_dir / DOCS_DIR, mermaid_asset())
    return target


# Material's CDN copy of mermaid: allowed (this one file) only for a site built without the local mermaid.js
MERMAID_CDN_URL = "https://unpkg.com/mermaid@11/dist/mermaid.min.js"


def site_csp(*, connect: str = "'self'", cdn_mermaid: bool = False, img: str = "'self' data: https:") -> str:
    """The Content-Security-Policy a built site is served with. `connect`: where its scripts may send
    requests (`sourcebook serve` narrows it to the wiki's own URL prefix: the search index lives there, the
    API does not).

    - script-src 'self': no inline script and no inline event handler runs, whatever the HTML holds (the
      theme layer has no inline script: site/partials/javascripts/);
    - style-src 'unsafe-inline': mermaid writes <style> into its diagrams (styles cannot run script, and
      the sanitizer keeps `style=` out of the content);
    - img-src https: README badges; data: Material's icons (`sourcebook serve` narrows it to the wiki's own
      URL prefix: an image URL elsewhere is a way out for what a script read);
    - form-action 'self', base-uri 'none', frame-ancestors 'none', object-src 'none'."""
    scripts = "'self'" + (f" {MERMAID_CDN_URL}" if cdn_mermaid else "")
    return "; ".join([
        "default-src 'none'", f"script-src {scripts}", f"worker-src {scripts}",
        "style-src 'self' 'unsafe-inline'", f"img-src {img}", "font-src 'self' data:",
        f"connect-src {connect}", "manifest-src 'self'", "form-action 'self'", "base-uri 'none'",
        "frame-ancestors 'none'", "object-src 'none'",
    ])


def site_headers(site_dir: Path, *, connect: str = "'self'",
                 img: str = "'self' data: https:") -> dict[str, str]:
    """Response headers for any file of the built site at `site_dir` (its CSP and two hardening headers)."""
    assets = site_dir / MERMAID_DIR
    local_mermaid = assets.is_dir() and any(assets.glob("mermaid-*.min.js"))
    return {"content-security-policy": site_csp(connect=connect, cdn_mermaid=not local_mermaid, img=img),
            "x-content-type-options": "nosniff", "referrer-policy": "no-referrer"}


def write_config(out_dir: Path, text: str) -> Path:
    path = out_dir / MKDOCS_FILE
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        atomic_write_text(path, text)
    return path


def build_site(config_file: Path, *, site_dir: Path | None = None, strict: bool = True,
               timeout_s: float = 900.0, workers: int | None = None, cache_dir: Path | None = None) -> str:
    """Build the site with this interpreter (generator/site/material/engine.py: MkDocs' build through a render
    cache,
    in `workers` processes, default SOURCEBOOK_SITE_WORKERS or the usable CPUs) into a fresh directory that
    then replaces `site_dir` (default: `site` next to the config, mkdocs' own default); returns the build's
    log, raises SiteBuildError. A failed, timed-out or killed build leaves the previous site as it was.

    `cache_dir` (default: cache/site next to the config) keeps each page's renders for the next build;
    unchanged pages of the new site are hard links to them, so the swap copies nothing."""
    target = config_file.parent / SITE_DIR if site_dir is None else site_dir
    cache = config_file.parent / RENDER_CACHE_DIR if cache_dir is None else cache_dir
    # no symbolic link may lead the cache out of the output folder (or out of the caller's own cache_dir)
    within = config_file.parent if cache_dir is None else cache_dir
    count = site_workers() if workers is None else workers
    log_text: list[str] = []
    replace_owned_dir(target, lambda work: log_text.append(
        _run_engine(config_file, work, cache, within, strict=strict, timeout_s=timeout_s, workers=count)))
    return log_text[0]


RENDER_CACHE_DIR = "cache/site"


def site_workers(env: Mapping[str, str] | None = None) -> int:
    """SOURCEBOOK_SITE_WORKERS (a positive number), else the CPUs this process may use."""
    from generator.site.material.engine import default_workers
    from sourcebook.settings import current

    return current(env).site_workers or default_workers()


# SOURCEBOOK_SITE_ENGINE=mkdocs: build with MkDocs' own page loop (`mkdocs build`), none of the site engine's
# uses of MkDocs', Material's, Jinja's or Markdown's internals (generator/site/material/): the same bytes
# (tests/integration/test_publish.py compares the two), only slower, with no render cache and one process


def _run_engine(config_file: Path, site_dir: Path, cache: Path, within: Path, *, strict: bool,
                timeout_s: float, workers: int) -> str:
    from sourcebook.settings import current

    if current().site_engine == "mkdocs":
        cmd = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config_file), "-d", str(site_dir),
               *(["--strict"] if strict else [])]
    else:
        cmd = [sys.executable, "-m", "generator.site.material.engine", str(config_file), str(site_dir),
               "--cache", str(cache), "--within", str(within), "--workers", str(workers),
               "--parent", str(os.getpid())]
        if not strict:
            cmd.append("--no-strict")
    # the engine is this checkout's, whatever the working directory (it imports generator/ by name)
    code_root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH", "")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1",
               PYTHONPATH=code_root + (os.pathsep + path if path else ""))
    log.info("running %s", " ".join(cmd))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s, check=False,
                              cwd=config_file.parent)
    except subprocess.TimeoutExpired as exc:
        raise SiteBuildError(f"mkdocs build timed out after {timeout_s:.0f} s") from exc
    output = (proc.stdout or "") + (proc.stderr or "")
    if proc.returncode != 0:
        raise SiteBuildError(f"mkdocs build failed (exit {proc.returncode}):\n{output.strip()}")
    for line in output.splitlines():
        if line.startswith("WARNING"):  # one --strict lets through: a page over its render budget
            log.warning("site: %s", line.partition("-")[2].strip())
    return output
