"""The one exception tree. Boundaries (CLI, HTTP handler, MCP tool) turn these into messages and codes."""

from __future__ import annotations


class SourcebookError(Exception):
    """Base of every error sourcebook raises on purpose."""

    exit_code = 1
    http_status = 500


class ConfigError(SourcebookError):
    """The configuration is invalid; `problems` lists every problem found, not just the first."""

    exit_code = 2
    http_status = 400

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


class UsageError(SourcebookError):
    """A caller asked for something malformed (bad regex, empty question, unknown include flag)."""

    exit_code = 2
    http_status = 400


class NotFoundError(SourcebookError):
    """The thing asked for is not in the index (distinct from 'exists but empty')."""

    http_status = 404


class AccessError(SourcebookError):
    """A path outside the repository, or a request without the required token."""

    exit_code = 2
    http_status = 403


class ParseError(SourcebookError):
    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}")


class IndexStoreError(SourcebookError):
    """The LanceDB index is missing, from another schema version or embedder, or unusable."""

    http_status = 503


class IndexMissingError(IndexStoreError):
    """There is no index where the configuration points (never built, or its folder or prefix is gone)."""


class IndexSourceError(SourcebookError):
    """A run would prune (or rebuild) an index from a place that is not the checkout it was built from (no
    files scanned, another remote or folder): refused before anything is written; `reset` allows it."""

    exit_code = 2
    http_status = 409


class ProviderError(SourcebookError):
    """An LLM or embedding provider failed after retries."""

    http_status = 502

    def __init__(self, provider: str, message: str, status: int | None = None) -> None:
        self.provider = provider
        self.status = status
        super().__init__(f"{provider}: {message}" + (f" (HTTP {status})" if status else ""))


class LockError(SourcebookError):
    """Another sourcebook run holds the output directory's lock (and the caller chose not to wait)."""

    exit_code = 75  # EX_TEMPFAIL: try again later
    http_status = 409


class SiteBuildError(SourcebookError):
    """mkdocs build failed on the generated wiki."""


class NotOwnedError(SourcebookError):
    """sourcebook would replace or delete a directory it did not create (no ownership marker in it)."""

    exit_code = 2

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        super().__init__(f"{path}: {reason}; sourcebook only replaces directories it created "
                         "(move it away or pick another --out)")


class ProviderOutputError(ProviderError):
    """The provider answered, but no reply passed validation after the re-asks (or every reply was cut)."""


class RequestRefused(UsageError):
    """A request refused as a whole (nothing done); `problems` names every bad entry, not just the first."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        shown = "; ".join(self.problems[:20])
        more = f"; and {len(self.problems) - 20} more" if len(self.problems) > 20 else ""
        super().__init__(shown + more)
