"""Several repositories behind one server: aliases, each with its own Config and its own index.

A workspace file (`sourcebook-workspace.toml`) looks like:

    default = "flask"            # optional; otherwise the first repository listed

    [repos.flask]
    path = "../eval-repos/flask"  # relative to the workspace file
    # any sourcebook.toml setting may follow, e.g. out_dir = "/var/cache/flask-sb"
    # (a workspace file that lies inside any repository, at its root or below, may have been committed
    # there: its settings then pass the same trust boundary as a repository's own sourcebook.toml (see
    # sourcebook/config.py), and it may list only folders inside that repository)

    [repos.requests]
    path = "../eval-repos/requests"

Without a workspace file the single repository given on the command line is the workspace; its alias is its
directory name. `repo="all"` is refused: every answer cites files of one checkout, and fan-out across
repositories is not something the ranking or the confidence grading were built for.
"""

from __future__ import annotations

import logging
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sourcebook.config import INDEX_URI_ENV, Config, detached_state_dir, load_config
from sourcebook.errors import ConfigError, NotFoundError, UsageError
from sourcebook.settings import Settings

log = logging.getLogger(__name__)

WORKSPACE_FILE = "sourcebook-workspace.toml"
# What marks a folder as a checkout: a workspace file at or below one may have come with the repository
_VCS_MARKS = (".git", ".hg", ".svn")
_ALIAS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # fullmatch: `$` passes a trailing newline


@dataclass(frozen=True)
class RepoEntry:
    alias: str
    root: Path
    overrides: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    trusted: bool = True  # False: `overrides` come from a file inside a repository, not from the user


class Workspace:
    """The repositories a server answers for. `resolve(alias)` gives a repository's Config (cached)."""

    # False: the repositories are the ones listed, and another name is a mistake to report. True (an
    # organisation's): any free name becomes a repository with its first push, so an unknown one is a
    # repository never indexed (an empty tree, never "not found", whether or not another tenant uses it).
    named_by_push = False

    def __init__(self, entries: list[RepoEntry], default: str | None = None,
                 env: dict[str, str] | None = None, settings: Settings | None = None) -> None:
        if not entries:
            raise ConfigError("workspace: no repositories")
        self.entries = {e.alias: e for e in entries}
        if len(self.entries) != len(entries):
            raise ConfigError("workspace: duplicate repository alias")
        self.default = default or entries[0].alias
        if self.default not in self.entries:
            raise ConfigError(f"workspace: default {self.default!r} is not one of {self.aliases}")
        self._env = env
        self._settings = settings  # the user's (the CLI's); None: read from `env` when a config is made
        self._configs: dict[str, Config] = {}

    @property
    def aliases(self) -> list[str]:
        return list(self.entries)

    def alias_for(self, repo: str | None) -> str:
        """Validate `repo` and return the alias it names (None/"" = the default)."""
        if repo is None or repo == "":
            return self.default
        if not isinstance(repo, str):
            raise UsageError("repo must be a string alias")
        if repo.strip().lower() == "all":
            raise UsageError(
                "repo='all' is not supported: ask one repository at a time "
                f"(known repositories: {', '.join(self.aliases)})")
        if repo not in self.entries:
            shown = repo if len(repo) <= 80 else repo[:80] + "…"
            known = ", ".join(self.aliases)
            raise NotFoundError(f"unknown repository {shown!r}; known repositories: {known}")
        return repo

    def resolve(self, repo: str | None = None) -> Config:
        alias = self.alias_for(repo)
        if alias not in self._configs:
            entry = self.entries[alias]
            if entry.trusted:
                config = load_config(entry.root, overrides=dict(entry.overrides), env=self._env,
                                     settings=self._settings)
            else:
                config = load_config(entry.root, env=self._env, repo_settings=entry.overrides,
                                     settings=self._settings)
            self._configs[alias] = config
        return self._configs[alias]


def single(root: Path | str, alias: str | None = None, overrides: dict[str, Any] | None = None,
           env: dict[str, str] | None = None, settings: Settings | None = None) -> Workspace:
    """A workspace of one repository (the default when no workspace file is given)."""
    path = Path(root).resolve()
    name = alias or _sanitize_alias(path.name)
    return Workspace([RepoEntry(name, path, dict(overrides or {}))], env=env, settings=settings)


def _sanitize_alias(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "-", name).strip("-.") or "repo"
    return cleaned[:64]


def enclosing_repository(folder: Path) -> Path | None:
    """The nearest folder at or above `folder` that is a checkout (holds .git, .hg or .svn), or None."""
    for candidate in (folder, *folder.parents):
        if any((candidate / mark).exists() for mark in _VCS_MARKS):
            return candidate
    return None


def parse_workspace(data: dict[str, Any], base: Path, env: dict[str, str] | None = None,
                    settings: Settings | None = None) -> Workspace:
    """Build a Workspace from parsed TOML. Relative paths are taken from `base`. Reports every problem.

    Trust comes from the user, never from a repository: a file whose folder lies inside a checkout (or
    inside one of the folders it lists) may have been committed there, so unless the user opts in
    (SOURCEBOOK_TRUST_REPO_CONFIG / --trust-repo-config) its settings pass the repository-config filter and
    the folders it lists must lie inside that checkout; the others are dropped and named in one warning.
    """
    problems: list[str] = []
    repos = data.get("repos")
    if not isinstance(repos, dict) or not repos:
        raise ConfigError("workspace: a [repos.<alias>] table with at least one repository is required")
    entries: list[RepoEntry] = []
    for alias, spec in repos.items():
        if not _ALIAS.fullmatch(alias) or alias.lower() == "all":
            problems.append(f"workspace: invalid alias {alias!r} (letters, digits, _ . -; not 'all')")
            continue
        if not isinstance(spec, dict) or not isinstance(spec.get("path"), str):
            problems.append(f"workspace: repos.{alias} needs a path")
            continue
        values = dict(spec)
        root = Path(values.pop("path")).expanduser()
        root = (base / root) if not root.is_absolute() else root
        if not root.is_dir():
            problems.append(f"workspace: repos.{alias}: {root} is not a directory")
            continue
        entries.append(RepoEntry(alias, root.resolve(), values))
    trusted = (settings or Settings.from_env(env)).trust_repo_config
    base = base.resolve()
    listed = [e.root for e in entries if base.is_relative_to(e.root)]
    home = enclosing_repository(base) or (min(listed, key=lambda p: len(p.parts)) if listed else None)
    outside: list[RepoEntry] = []
    if home is not None and not trusted:
        outside = [e for e in entries if not e.root.is_relative_to(home)]
        if outside:
            log.warning("%s lies inside the repository %s, so it may list only folders inside it: ignored "
                        "%s; list them in a workspace file of your own outside any repository, or pass "
                        "--trust-repo-config", base / WORKSPACE_FILE, home,
                        ", ".join(f"repos.{e.alias} (path {str(e.root)!r})" for e in outside))
        entries = [RepoEntry(e.alias, e.root, e.overrides, trusted=False) for e in entries
                   if e.root.is_relative_to(home)]
        if not entries and not problems:
            problems.append(f"workspace: {base / WORKSPACE_FILE} lists no folder inside its own "
                            f"repository {home}")
    default = data.get("default")
    if default is not None and not isinstance(default, str):
        problems.append("workspace: default must be an alias")
        default = None
    for key in data:
        if key not in {"repos", "default"}:
            problems.append(f"workspace: unknown setting {key!r}")
    if default in {e.alias for e in outside}:
        default = None  # the default named a folder dropped above: the first one kept instead
    if problems:
        raise ConfigError(problems)
    return Workspace(entries, default=default, env=env, settings=settings)


def detached(index_uri: str, env: dict[str, str] | None = None,
             settings: Settings | None = None) -> Workspace:
    """A workspace of one index with no checkout: contents and bodies come from the index itself; the alias
    is the URI's last path segment."""
    alias = _sanitize_alias(index_uri.rstrip("/").rsplit("/", 1)[-1])
    state = detached_state_dir(index_uri, env)
    return single(state, alias=alias, env=env, settings=settings,
                  overrides={"out_dir": str(state), "index_uri": index_uri, "checkout": False})


def load_workspace(target: Path | str | None, env: dict[str, str] | None = None,
                   settings: Settings | None = None) -> Workspace:
    """The workspace for a command-line PATH: a workspace file, a directory holding one, or a single repo.
    `settings`: the user's (the CLI's flags over the environment), default read from `env`.

    None with an index URI set (SOURCEBOOK_INDEX_URI / --index-uri): no checkout, the index alone
    (`detached`).
    """
    uri = (settings or Settings.from_env(env)).index_uri
    if target is None and uri:
        return detached(uri, env, settings)
    path = Path(target or ".").expanduser()
    ws_file = path if path.is_file() else path / WORKSPACE_FILE
    if ws_file.is_file():
        try:
            with ws_file.open("rb") as fh:
                data = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{ws_file}: {exc}") from exc
        workspace = parse_workspace(data, ws_file.parent.resolve(), env=env, settings=settings)
        if uri and len(workspace.entries) > 1:
            raise ConfigError(f"{INDEX_URI_ENV} / --index-uri names one index, but {ws_file} lists "
                              f"{len(workspace.entries)} repositories: set index_uri per repository there")
        return workspace
    if not path.is_dir():
        raise ConfigError(f"{path}: not a directory or a workspace file")
    return single(path, env=env, settings=settings)
