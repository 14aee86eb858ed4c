"""Files pushed by a client: `POST /index {"repo", "files": [{"path", "content", "encoding"}], "prune",
"commit"}`.

The server has no checkout of the repository: the request carries the content, which is validated as a whole
before anything is written (`check_push`, pure), classified like `scan` would classify a file on disk
(binary, vendored, lock files, generated: skipped with the reason), parsed here, and written to the caller's
index through the same `update_index` as every other run. Unchanged content hashes are skipped, so
re-sending a whole tree is cheap; `prune` makes the call a full sync (indexed files the request does not name
are deleted). A pushed path that is now skipped leaves the index even without `prune`, as a file that turned
binary on disk would.

Repository content is untrusted input: a path is relative POSIX, without `..`, `.`, empty segments, NUL,
backslashes or a drive letter; per-file and per-request size caps bound what one request may make the server
parse and hold. A refused request names every bad entry (400) and writes nothing.

A big tree may come as a tar archive instead (`POST /index?repo=…&prune=…&commit=…` with
`Content-Type: application/x-tar`): the server streams the body to a temporary file (never the whole body in
memory, and the body itself capped by `tar_body_cap`), then reads its members with the same rules
(`check_tar`: an uncompressed tar with its end-of-archive blocks, regular files only, no links or
devices).

`commit` (optional) is what the client says the pushed tree is (a git SHA, a tag, any identifier without
whitespace): it is recorded with the publish and every reply naming the index state reports it (`structure`,
`file`, `symbol`, `context`). A push without one that changes the index clears the recorded commit, since
the rows no longer describe it; one that changes nothing keeps it.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard

from sourcebook.errors import IndexStoreError, RequestRefused, UsageError

if TYPE_CHECKING:
    from answer.serving.repo_state import RepoState
    from generator.analyze.manifests import Manifests

log = logging.getLogger(__name__)

_DRIVE = re.compile(r"^[A-Za-z]:")
MAX_PATH_CHARS = 1024
MAX_COMMIT_CHARS = 200
_COMMIT = re.compile(rf"[!-~]{{1,{MAX_COMMIT_CHARS}}}")  # printable ASCII, no whitespace (fullmatch)


@dataclass(frozen=True)
class PushLimits:
    """What one push may carry (an orgs file's `max_file_bytes` / `max_request_bytes` / `max_files`)."""

    max_file_bytes: int = 1_000_000
    max_request_bytes: int = 32_000_000
    max_files: int = 20_000


@dataclass(frozen=True)
class Pushed:
    """One accepted entry: its path and raw bytes."""

    path: str
    raw: bytes


def _admitted(path: object, label: str, seen: set[str], problems: list[str]) -> TypeGuard[str]:
    """Whether a pushed entry's path may be taken (a valid path, not named before in the push); else its
    problem is added to `problems`. Shared by the JSON and the tar push."""
    problem = path_problem(path)
    if problem is not None or not isinstance(path, str):  # path_problem refuses every non-string
        problems.append(f"{label}: {problem}")
        return False
    if path in seen:
        problems.append(f"{label}: the path is given twice")
        return False
    seen.add(path)
    return True


def path_problem(path: Any) -> str | None:
    """Why `path` cannot name a file of a pushed repository, or None when it can. Pure.

    The rules apply to the path as given and to what a reader could turn it into: its NFKC form (a
    fullwidth dot is a dot) and its percent-decoded form (`%2e%2e` is `..`). A path that turns into a
    climb, an empty or '.' segment, or an absolute path is refused rather than stored under a name no
    read could reach."""
    if not isinstance(path, str) or not path:
        return "the path is empty"
    if len(path) > MAX_PATH_CHARS:
        return f"the path is longer than {MAX_PATH_CHARS} characters"
    if not _utf8(path):
        return "the path is not valid UTF-8"
    if "\0" in path:
        return "the path contains a NUL byte"
    if any(_control(c) for c in path):
        return "the path contains a control character"
    from urllib.parse import unquote

    folded = unicodedata.normalize("NFKC", path)
    for form in dict.fromkeys((path, folded, unquote(path), unquote(folded))):
        problem = _form_problem(form)
        if problem is not None:
            return problem if form == path else f"{problem} once decoded ({form[:80]!r})"
    return None


def _form_problem(path: str) -> str | None:
    if "\0" in path or any(_control(c) for c in path):
        return "the path contains a NUL byte or a control character"
    if "\\" in path:
        return "the path contains a backslash (use '/')"
    if path.startswith("/"):
        return "the path is absolute (give it relative to the repository root)"
    if _DRIVE.match(path):
        return "the path starts with a drive letter"
    parts = path.split("/")
    if ".." in parts:
        return "the path climbs out with '..'"
    if "" in parts or "." in parts:
        return "the path has an empty or '.' segment"
    return None


def _control(char: str) -> bool:
    """C0, DEL and C1 controls and the Unicode line and paragraph separators: never part of a file name a
    page, a log line or a terminal can show as it is."""
    return unicodedata.category(char) in {"Cc", "Zl", "Zp"}


def _utf8(text: str) -> bool:
    """False for text holding lone surrogates (how Python decodes bytes that are not UTF-8, tar names
    included)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _commit_problems(commit: Any) -> list[str]:
    if commit is not None and not (isinstance(commit, str) and _COMMIT.fullmatch(commit)):
        return [f"commit: 1-{MAX_COMMIT_CHARS} printable characters without spaces (a SHA or a tag)"]
    return []


def check_push(files: Sequence[Any], limits: PushLimits, commit: Any = None) -> list[Pushed]:
    """The decoded entries of a push, or RequestRefused naming every bad entry (nothing is written then).

    Each entry is a mapping or model with `path`, `content` and `encoding` ("utf-8" or "base64")."""
    problems = _commit_problems(commit)
    if len(files) > limits.max_files:
        raise RequestRefused([f"files: {len(files)} entries, more than the {limits.max_files} one push "
                              "may carry (push in several requests; prune only on the last)"])
    seen: set[str] = set()
    out: list[Pushed] = []
    total = 0
    for n, entry in enumerate(files):
        item = entry if isinstance(entry, dict) else entry.model_dump()
        path, content, encoding = item.get("path"), item.get("content"), item.get("encoding") or "utf-8"
        label = f"files[{n}] {path!r}" if isinstance(path, str) else f"files[{n}]"
        if not _admitted(path, label, seen, problems):
            continue
        if not isinstance(content, str):
            problems.append(f"{label}: content must be a string")
            continue
        try:
            raw = _decoded(content, encoding)
        except ValueError as exc:
            problems.append(f"{label}: {exc}")
            continue
        if len(raw) > limits.max_file_bytes:
            problems.append(f"{label}: {len(raw):,} bytes, more than the {limits.max_file_bytes:,} "
                            "a file may have")
            continue
        total += len(raw)
        out.append(Pushed(path, raw))
    if total > limits.max_request_bytes:
        problems.append(f"files: {total:,} bytes in all, more than the {limits.max_request_bytes:,} one push "
                        "may carry (push in several requests; prune only on the last)")
    if problems:
        raise RequestRefused(problems)
    return out


# A tar body's framing on top of its files' bytes: a 512-byte header per member, padding to 512, a pax header
# (another 1 KB or so) for long names, the end-of-archive blocks and tar's 10 KB record rounding.
TAR_BYTES_PER_MEMBER = 2048
TAR_FIXED_BYTES = 20_480


def tar_body_cap(limits: PushLimits) -> int:
    """The largest tar body a push may send: its files' bytes within the request cap, plus tar's framing."""
    return limits.max_request_bytes + limits.max_files * TAR_BYTES_PER_MEMBER + TAR_FIXED_BYTES


# What a compressed body starts with (gzip, bzip2, xz, zstd, lzip): refused by name, since a compressed tar is
# never read. Its size cap would count compressed bytes, and skipping a member would mean decompressing it: a
# few kilobytes could keep a worker busy for minutes.
_COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"),
               (b"\x28\xb5\x2f\xfd", "zstd"), (b"LZIP", "lzip"))
_BLOCK = 512


def check_tar(fileobj: Any, limits: PushLimits, commit: Any = None) -> list[Pushed]:
    """The entries of an uncompressed tar archive (a seekable file object, read from its start), checked as
    a JSON push's are, or RequestRefused naming every bad member (nothing is written then).

    Only a plain tar is read: its members are skipped by seeking, so the work is bounded by the body's own
    size. The archive must end with its end-of-archive blocks: a body cut short, even at a member boundary
    (a `tar | curl` pipeline whose tar died), is refused instead of read as a smaller tree that a prune
    would take for the whole repository.
    Members must be regular files (folders are skipped: their files say where they are); a symbolic or hard
    link, a device, a FIFO or anything else is refused, since extracting one could point outside the tree.
    Nothing is extracted to disk: each regular member's bytes are read from the archive. A leading "./" (what
    `tar -C dir -cf - .` writes) is dropped; then the path rules of `path_problem` apply."""
    import tarfile

    head = fileobj.read(8)
    fileobj.seek(0)
    for magic, kind in _COMPRESSED:
        if head.startswith(magic):
            raise RequestRefused([f"body: a {kind}-compressed archive; send an uncompressed tar "
                                  "(Content-Encoding is not accepted either)"])
    problems = _commit_problems(commit)
    seen: set[str] = set()
    out: list[Pushed] = []
    total = members = 0
    try:
        with tarfile.open(fileobj=fileobj, mode="r:") as archive:
            for member in archive:  # one header at a time: a huge member list is never held at once
                members += 1
                name = member.name[2:] if member.name.startswith("./") else member.name
                label = f"member {members} {_shown(member.name)}"
                if member.isdir():
                    continue
                if not member.isreg():
                    kind = ("a symbolic link" if member.issym() else "a hard link" if member.islnk()
                            else "a FIFO" if member.isfifo() else "a device" if member.isdev()
                            else "not a file")  # isdev() is true of a FIFO too: asked second
                    problems.append(f"{label}: {kind} (only regular files may be pushed)")
                    continue
                if not _admitted(name, label, seen, problems):
                    continue
                if len(seen) > limits.max_files:
                    raise RequestRefused([f"files: more than the {limits.max_files} entries one push may "
                                          "carry (push in several requests; prune only on the last)"])
                if member.size > limits.max_file_bytes:
                    problems.append(f"{label}: {member.size:,} bytes, more than the "
                                    f"{limits.max_file_bytes:,} a file may have")
                    continue
                total += member.size
                if total > limits.max_request_bytes:
                    raise RequestRefused([*problems, f"files: more than the {limits.max_request_bytes:,} "
                                          "bytes in all one push may carry (push in several requests; prune "
                                          "only on the last)"])
                data = archive.extractfile(member)
                out.append(Pushed(name, data.read() if data is not None else b""))
            end = archive.offset
    except tarfile.TarError as exc:
        raise RequestRefused([f"body: not a readable uncompressed tar archive ({exc})"]) from None
    fileobj.seek(end)
    if fileobj.read(2 * _BLOCK) != bytes(2 * _BLOCK):
        raise RequestRefused([f"body: the tar archive ends after {members} member(s) without its "
                              "end-of-archive blocks (cut short?): nothing was written"])
    if problems:
        raise RequestRefused(problems)
    return out


def _shown(name: str) -> str:
    """A member name for a message: repr, with bytes that are not UTF-8 shown as escapes."""
    return repr(name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))


def _decoded(content: str, encoding: str) -> bytes:
    if encoding == "base64":
        try:
            return base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("content is not valid base64") from None
    if encoding == "utf-8":
        try:
            return content.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("content is not valid UTF-8 text (lone surrogates)") from None
    raise ValueError(f"unknown encoding {encoding!r} (utf-8 or base64)")


class PushTarget(Protocol):
    """What a push writes through (answer.serving.tools.Tools): the workspace and each repository's state."""

    workspace: Any

    def state(self, repo: str | None) -> RepoState: ...


def push_files(tools: PushTarget, repo: str | None, files: Sequence[Any], prune: bool,  # noqa: PLR0917
               limits: PushLimits, commit: str | None = None,
               checked: list[Pushed] | None = None) -> dict[str, Any]:
    """Write the pushed files to the repository's index; the reply counts what was done and why.
    `checked`: entries already validated (a tar push, `check_tar`) in place of `files`."""
    # refused as a whole before the repository is even created
    entries = checked if checked is not None else check_push(files, limits, commit)
    create = getattr(tools.workspace, "create", None)
    if create is None:
        return _write_push(tools, repo, entries, prune, commit)
    alias = create(repo)  # an organisation's workspace: a push is how a repository comes to exist
    try:
        return _write_push(tools, alias, entries, prune, commit)
    except BaseException:
        tools.workspace.abandon(alias)  # a push that wrote nothing leaves no repository behind
        raise


def _write_push(tools: PushTarget, repo: str | None, entries: Sequence[Pushed], prune: bool,
                commit: str | None) -> dict[str, Any]:
    from answer.serving.repo_state import indexed_source, reusable_hashes
    from generator.index.embed import get_embedder
    from generator.index.refresh import IndexUpdate, PushedContent, read_source, update_from
    from generator.index.store import outage_errors
    from sourcebook.lock import output_lock

    st = tools.state(repo)
    config = st.config
    if config.checkout:
        raise UsageError(f"repository {st.alias!r} is a checkout on this server: index it with `paths` "
                         "(pushed files would disagree with the files on disk)")
    embedder = get_embedder(config.embed)
    # the newest version, even while readers are answered from the previous one (answer/serving/repo_state.py)
    with st.index_lock, output_lock(config.out_dir), st.writing():
        known = reusable_hashes(st, embedder)
        stored_commit = st.commit()  # the store reusable_hashes opened: no second read
        try:
            rows = st.indexed_paths()
        except IndexStoreError:  # unreadable: this push rebuilds the index from what it carries
            rows = {}
        manifests = _manifests(entries, prune, st)
        analysis = read_source(config, PushedContent(entries, unchanged=known, manifests=manifests))
        named = {e.path for e in entries}
        keep = [] if prune else [indexed_source(rows[p]) for p in sorted(rows) if p not in named]
        deleted = sorted(set(rows) - {f.path for f in [*analysis.files, *keep]})
        # a push that changes the rows without naming a commit: the stored one no longer describes them
        recorded = commit if commit is not None else ("" if analysis.parsed or deleted else None)
        # always a prune over the exact final file list: a pushed path now skipped leaves the index too
        try:
            update = IndexUpdate(prune=True, keep=keep, commit=recorded)
            report = update_from(config, analysis, embedder, update, stored_manifests=manifests is None)
        except outage_errors() as exc:  # the store refused the write (a denied key) or is unreachable
            log.warning("push to %s not written: %s", st.alias, exc)
            raise IndexStoreError(f"the push to {st.alias!r} was not written: its index store refused or "
                                  f"could not be reached ({str(exc)[:400]})") from exc
        st.invalidate()
        published = getattr(tools.workspace, "published", None)
        if published is not None:  # an organisation's workspace lists what its pushes made
            published(st.alias)
    changed, accepted = analysis.parsed, len(analysis.files)
    skipped = [{"path": s.path, "reason": s.reason} for s in analysis.skipped]
    log.info("push to %s: %d indexed, %d unchanged, %d deleted, %d skipped", st.alias, changed,
             accepted - changed, len(deleted), len(skipped))
    now = recorded if recorded is not None else stored_commit
    return {"repo": st.alias, "prune": prune, "commit": now or None,
            "requested": [e.path for e in entries][:200],
            "report": asdict(report), "removed": deleted[:1000], "not_found": [], "skipped": skipped[:200],
            "pushed": {"indexed": changed, "unchanged": accepted - changed,
                       "deleted": len(deleted), "skipped": len(skipped)}}


def _manifests(entries: Sequence[Pushed], prune: bool, st: Any) -> Manifests | None:
    """The manifests to store: a full sync's own; otherwise the stored ones with the pushed ones over them
    (None keeps the stored ones when the push carries none)."""
    from generator.analyze.manifests import Manifests, is_manifest, read_manifests
    from generator.analyze.scan import decode

    pushed = {e.path: decode(e.raw) for e in entries if is_manifest(e.path)}
    if prune:
        return read_manifests(pushed)
    if not pushed:
        return None
    try:
        store = st.store_or_none()
    except IndexStoreError:
        store = None
    stored = Manifests.from_json(store.meta.get("manifests")) if store is not None else Manifests()
    new = read_manifests(pushed)
    return Manifests(go={**stored.go, **new.go}, js={**stored.js, **new.js},
                          rust={**stored.rust, **new.rust})
