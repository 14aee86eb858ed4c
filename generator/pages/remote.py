"""Source links: where a file's lines live on the repository's forge, at the commit the wiki was built from.

By default the base comes from the git remote (GitHub, GitLab, Bitbucket, Gitea/Forgejo; ssh or https
remote URLs) and HEAD's commit; `--repo-url` overrides it; no remote (or an unknown host) means no links.
Links are applied when pages are rendered, never part of a draft's key: a new commit re-renders pages but
never asks a writer for new prose.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import quote, urlsplit

from generator.analyze.checkout import git as _git
from generator.analyze.checkout import owner_repo
from sourcebook.config import is_http_url

log = logging.getLogger(__name__)

Forge = Literal["github", "gitlab", "bitbucket", "gitea"]
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


@dataclass(frozen=True)
class SourceLinks:
    """`base` + a repository-relative path = the file's page on the forge; `forge` picks the line anchor."""

    base: str  # ends with "/"
    forge: Forge = "github"
    home: str = ""  # the repository's own page (the theme's repository link)

    def url(self, path: str, start: int, end: int) -> str:
        return f"{self.base}{quote(path)}{line_anchor(self.forge, start, end)}"

    def key(self) -> str:
        return f"{self.forge} {self.base}"


def line_anchor(forge: Forge, start: int, end: int) -> str:
    if forge == "bitbucket":
        return f"#lines-{start}" if start == end else f"#lines-{start}:{end}"
    if forge == "gitlab":
        return f"#L{start}" if start == end else f"#L{start}-{end}"
    return f"#L{start}" if start == end else f"#L{start}-L{end}"  # GitHub, Gitea, Forgejo


def forge_of(host: str) -> Forge | None:
    """The forge a host name is known to run; None for hosts we cannot tell (no guessed URL forms)."""
    host = host.lower()
    if host == "github.com" or host.endswith(".github.com") or host.startswith("github."):
        return "github"
    if host == "bitbucket.org" or host.startswith("bitbucket."):
        return "bitbucket"
    if host in {"codeberg.org", "gitea.com"} or host.startswith(("gitea.", "forgejo.")):
        return "gitea"
    if host == "gitlab.com" or host.startswith("gitlab.") or ".gitlab." in host:
        return "gitlab"
    return None


def from_remote(remote: str, commit: str) -> SourceLinks | None:
    """Source links for a git remote URL at `commit` (a full hash); None when the host is no known forge."""
    found = owner_repo(remote)
    if found is None or not _SHA.match(commit):
        return None
    host, path = found
    forge = forge_of(host)
    if forge is None:
        return None
    home = f"https://{host}/{path}"
    blob = {"github": "blob", "gitlab": "-/blob", "bitbucket": "src", "gitea": "src/commit"}[forge]
    return SourceLinks(f"{home}/{blob}/{commit}/", forge, home)


def from_repo_url(repo_url: str) -> SourceLinks | None:
    """The `--repo-url` override: an http(s) URL that a path is appended to; anything else gives no links."""
    parts = urlsplit(repo_url.strip()) if is_http_url(repo_url) else None
    if parts is None:
        if repo_url:
            log.warning("repo_url %r is not an http(s) URL: no source links", repo_url)
        return None
    base = repo_url.strip()
    base = base if base.endswith("/") else base + "/"
    forge = forge_of(parts.hostname or "") or "github"
    segments = [s for s in parts.path.split("/") if s]
    home = f"{parts.scheme}://{parts.netloc}/{segments[0]}/{segments[1]}" if len(segments) >= 2 else ""
    return SourceLinks(base, forge, home)


def detect(root: Path) -> SourceLinks | None:
    """Source links from `root`'s git remote (origin, else the first one) at HEAD; None without one."""
    remotes = _git(root, "remote").split()
    if not remotes:
        return None
    name = "origin" if "origin" in remotes else remotes[0]
    remote = _git(root, "remote", "get-url", name)
    commit = _git(root, "rev-parse", "--verify", "HEAD^{commit}")
    return from_remote(remote, commit) if remote and commit else None


def source_links(root: Path, repo_url: str) -> SourceLinks | None:
    """The links a build renders: the override when given, else the git remote's."""
    return from_repo_url(repo_url) if repo_url else detect(root)
