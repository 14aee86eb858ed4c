"""What the repository's package manifests say about its own packages, for import resolution.

Pure: {manifest path: text} in, Manifests out. go.mod gives each Go module's import path; package.json
gives each local JS/TS package's name (workspaces import each other by it); Cargo.toml gives each crate's
name and library root (Cargo workspaces `use` each other by it). Manifests are small and few, so every run
reads them from disk (see analysis.py) and the index keeps the result (see
generator/index/stored_analysis.py), which is what makes the build, `--check`, `--dry-run` and the answer side
resolve imports the same way. """

from __future__ import annotations

import json
import logging
import posixpath
import re
import subprocess
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MANIFEST_NAMES = frozenset({"go.mod", "package.json", "Cargo.toml"})


@dataclass(frozen=True)
class Manifests:
    go: dict[str, str] = field(default_factory=dict)  # directory -> Go module path
    js: dict[str, tuple[str, str]] = field(default_factory=dict)  # package name -> (directory, main file)
    rust: dict[str, str] = field(default_factory=dict)  # crate name (as `use` writes it) -> lib.rs path

    def to_json(self) -> dict[str, Any]:
        return {"go": self.go, "js": {k: list(v) for k, v in self.js.items()}, "rust": self.rust}

    @classmethod
    def from_json(cls, data: Any) -> Manifests:
        if not isinstance(data, dict):
            return cls()
        try:
            return cls(go={str(k): str(v) for k, v in dict(data.get("go") or {}).items()},
                       js={str(k): (str(v[0]), str(v[1])) for k, v in dict(data.get("js") or {}).items()},
                       rust={str(k): str(v) for k, v in dict(data.get("rust") or {}).items()})
        except (TypeError, ValueError, IndexError):
            return cls()


def is_manifest(path: str) -> bool:
    return posixpath.basename(path) in MANIFEST_NAMES


def manifest_paths(paths: Iterable[str]) -> list[str]:
    return sorted({p for p in paths if is_manifest(p)})


def _dir(path: str) -> str:
    return posixpath.dirname(path)


def _join(*parts: str) -> str:
    return posixpath.normpath("/".join(p for p in parts if p)) if any(parts) else ""


def go_module(text: str) -> str | None:
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "module":
            return words[1].strip('"')
    return None


def _js_package(path: str, text: str) -> tuple[str, tuple[str, str]] | None:
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        return None
    main = next((data[k] for k in ("source", "types", "module", "main")
                 if isinstance(data.get(k), str) and data[k]), "")
    directory = _dir(path)
    main_path = _join(directory, main) if main else ""
    if main_path.startswith("../"):
        main_path = ""
    return data["name"], (directory, main_path)


def _rust_crate(path: str, text: str) -> tuple[str, str] | None:
    data = tomllib.loads(text)
    package = data.get("package")
    if not isinstance(package, dict) or not isinstance(package.get("name"), str):
        return None  # a virtual workspace manifest: its members have their own
    lib = data.get("lib")
    lib = lib if isinstance(lib, dict) else {}
    name = lib.get("name") if isinstance(lib.get("name"), str) else package["name"]
    root = lib.get("path") if isinstance(lib.get("path"), str) else "src/lib.rs"
    return str(name).replace("-", "_"), _join(_dir(path), str(root))


def read_manifests(texts: Mapping[str, str]) -> Manifests:
    """Manifests from {path: text}; a manifest that does not parse is logged and left out."""
    out = Manifests()
    for path in sorted(texts):
        text = texts[path]
        name = posixpath.basename(path)
        try:
            if name == "go.mod":
                module = go_module(text)
                if module:
                    out.go[_dir(path)] = module
            elif name == "package.json":
                pkg = _js_package(path, text)
                if pkg:
                    out.js.setdefault(*pkg)
            elif name == "Cargo.toml":
                crate = _rust_crate(path, text)
                if crate:
                    out.rust.setdefault(*crate)
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            log.warning("%s: unreadable manifest (%s); its imports resolve as external", path, exc)
    return out


_NAME_MANIFESTS = ("pyproject.toml", "package.json", "Cargo.toml", "go.mod", "setup.cfg")
_MAX_NAME = 80
_MAX_DESCRIPTION = 300


def manifest_project_name(texts: Mapping[str, str]) -> str | None:
    """The project's name as its root manifest spells it: pyproject's [project].name (or Poetry's),
    package.json's name, Cargo.toml's [package].name, go.mod's module path's last element (a major-version
    suffix skipped: `github.com/go-chi/chi/v5` -> chi), setup.cfg's [metadata] name. Pure: {file name: text}
    of the repository's top folder in; None when none names it."""
    for name in _NAME_MANIFESTS:
        text = texts.get(name)
        if text is None:
            continue
        try:
            found = _project_name(name, text)
        except (ValueError, tomllib.TOMLDecodeError):
            continue
        found = " ".join((found or "").split())[:_MAX_NAME]
        if found:
            return found
    return None


def _project_name(manifest: str, text: str) -> str | None:
    if manifest == "pyproject.toml":
        data = tomllib.loads(text)
        for table in (data.get("project"), (data.get("tool") or {}).get("poetry")):
            if isinstance(table, dict) and isinstance(table.get("name"), str):
                return str(table["name"])
        return None
    if manifest == "package.json":
        data = json.loads(text)
        return data["name"] if isinstance(data, dict) and isinstance(data.get("name"), str) else None
    if manifest == "Cargo.toml":
        package = tomllib.loads(text).get("package")
        return package["name"] if isinstance(package, dict) and isinstance(package.get("name"), str) else None
    if manifest == "go.mod":
        parts = [p for p in (go_module(text) or "").split("/") if p]
        if len(parts) > 1 and parts[-1][:1] == "v" and parts[-1][1:].isdigit():
            parts.pop()
        return parts[-1] if parts else None
    return _setup_cfg(text, "name")


def manifest_description(texts: Mapping[str, str]) -> str:
    """The project's one-line description from its root manifest (pyproject's [project] or Poetry's
    description, package.json's, Cargo.toml's [package]'s, setup.cfg's [metadata]); "" when none has one."""
    for name in _NAME_MANIFESTS:
        text = texts.get(name)
        if text is None or name == "go.mod":
            continue
        try:
            if name == "package.json":
                data = json.loads(text)
                tables: list[Any] = [data]
            elif name == "setup.cfg":
                tables = [{"description": _setup_cfg(text, "description")}]
            else:
                data = tomllib.loads(text)
                tables = [data.get("project"), (data.get("tool") or {}).get("poetry"), data.get("package")]
        except (ValueError, tomllib.TOMLDecodeError):
            continue
        for table in tables:
            if isinstance(table, dict) and isinstance(table.get("description"), str):
                found = " ".join(table["description"].split())[:_MAX_DESCRIPTION]
                if found:
                    return found
    return ""


def _setup_cfg(text: str, key: str) -> str | None:
    in_metadata = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            in_metadata = stripped == "[metadata]"
        elif in_metadata and "=" in stripped and stripped.split("=", 1)[0].strip() == key:
            return stripped.split("=", 1)[1].strip()
    return None


def _root_manifests(root: Path) -> dict[str, str]:
    texts: dict[str, str] = {}
    for name in _NAME_MANIFESTS:
        path = root / name
        try:
            if path.is_file() and path.stat().st_size <= 1 << 20:
                texts[name] = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return texts


def project_name(root: Path, configured: str = "") -> str:
    """The project's own name: the configured one (site_name), else the root manifest's, else the name of the
    repository its git remote `origin` points at; "" when nothing names it.

    Never the checkout folder's name: CI checks a repository out under any folder name, and this name is in
    the page prompts and page keys the shared build cache is keyed by (a folder's name there made every
    fresh runner re-ask the model for every module, overview and topic page). A project nothing names is
    "the repository" in the prompts; only the site's title (`site_title`) falls back to the folder."""
    if configured:
        return configured
    return manifest_project_name(_root_manifests(root)) or remote_project_name(_origin_url(root)) or ""


def site_title(root: Path, configured: str = "") -> str:
    """The site's title (mkdocs.yml's site_name): the project's name, else the folder's. Display only: no
    page's Markdown, prompt or cache key holds it."""
    return project_name(root, configured) or root.resolve().name


_REMOTE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,79}")


def remote_project_name(url: str) -> str | None:
    """The repository name at the end of a git remote URL (`https://host/org/chi.git`, `git@host:org/chi`,
    a local path): the part after the last `/` or `:`, without `.git`. Pure; None when it is no plain name.
    Only that last part is kept: a URL may carry credentials (`https://user:token@host/...`)."""
    tail = url.strip().rstrip("/")
    if "://" in tail and "/" not in tail.split("://", 1)[1]:
        return None  # a host alone names no repository
    tail = tail.rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    tail = tail.removesuffix(".git")
    return tail if _REMOTE_NAME.fullmatch(tail) else None


def _origin_url(root: Path) -> str:
    """`git config remote.origin.url` of the checkout at `root` ("" when there is none or no git)."""
    try:
        done = subprocess.run(["git", "-c", "core.fsmonitor=false", "-C", str(root), "config", "--get",
                               "remote.origin.url"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def project_description(root: Path) -> str:
    """The root manifest's description of the project ("" without one)."""
    return manifest_description(_root_manifests(root))
