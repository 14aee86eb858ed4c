"""The typed, frozen configuration passed down through every stage.

Sources, lowest to highest precedence: defaults, the user's config file (`$XDG_CONFIG_HOME/sourcebook/
config.toml`, default `~/.config/sourcebook/config.toml`), the repository's own `sourcebook.toml` (or
`[tool.sourcebook]` in its pyproject.toml), environment variables, CLI overrides. Every problem is reported
at once.

Trust boundary: a repository is untrusted input (people build wikis of code they did not write), so its own
config may shape its wiki (names, globs, site options, the local embedder) but may not choose where data or
keys go: the `[llm]` table (endpoint, key, model, and the prices that --max-cost trusts), a remote embedder
and its endpoint, key and model, `index_uri`, and an `out_dir` outside the repository. Those settings come
from the user (environment, CLI flags, the user config file) or are obeyed only with `--trust-repo-config` /
SOURCEBOOK_TRUST_REPO_CONFIG=1; otherwise they are dropped and named in one warning.
"""

from __future__ import annotations

import logging
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sourcebook.errors import ConfigError

# INDEX_URI_ENV, TRUST_ENV and user_config_path: named here too, where other modules have imported them from
from sourcebook.settings import INDEX_URI_ENV, TRUST_ENV, Settings, user_config_path  # noqa: F401

log = logging.getLogger(__name__)

DEFAULT_MAX_FILE_BYTES = 1_000_000
# rows from which a publish gives a table's vectors an ANN index (generator/index/vectors.py)
DEFAULT_ANN_MIN_ROWS = 100_000
# What a repository's own config may raise max_file_bytes to: a file is read whole, and a repository's
# `max_file_bytes = 100000000000` ended every build in a MemoryError traceback (the user may set more)
REPO_MAX_FILE_BYTES = 50_000_000
DEFAULT_OUT_DIR = ".sourcebook"
# embedders that run on this machine: a repository may pick one of these, never a remote one
LOCAL_EMBEDDERS = frozenset({"default", "static", "minilm", "none"})

@dataclass(frozen=True)
class LLMConfig:
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    mode: str = "tools"  # instructor mode: tools | json | md_json
    context_tokens: int = 8192
    timeout_s: float = 60.0
    concurrency: int = 4
    max_retries: int = 3  # transport retries (429/5xx/connection)
    max_reasks: int = 2  # validation re-asks
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    max_output_tokens: int = 1024  # reply budget per call; prompt + reply must fit context_tokens
    retry_base_s: float = 1.0  # first transport-retry delay; doubles per attempt, with jitter
    # Servers whose chat format drops system messages (llama.cpp's `gemma`): send the system prompt as the
    # start of the first user message instead.
    system_in_user: bool = False
    # Re-asks resend the rejected tool call and a `tool` reply next to the user message that carries the
    # reason; off for servers that reject tool-call history (the reason is in the user message either way).
    tool_history: bool = True
    # Sampling sent with every call, so a run is repeatable: the same prompt gets the same reply from servers
    # that honour them (llama.cpp, vLLM, Ollama, OpenAI's seed is best effort). A negative value is not sent
    # (the server's default); a server that rejects either one gets calls without it for the rest of the run.
    temperature: float = 0.0
    seed: int = 0

    @property
    def configured(self) -> bool:
        return bool(self.base_url or self.api_key) and bool(self.model)


@dataclass(frozen=True)
class EmbedConfig:
    provider: str = "default"  # default | static | minilm | openai | none
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class Config:
    root: Path
    out_dir: Path  # default <root>/.sourcebook
    index_uri: str = ""  # default <out_dir>/index; a path or s3:// gs:// az:// (SOURCEBOOK_INDEX_URI)
    # False: no repository on this machine (a server answering from an index on object storage): file
    # contents and symbol bodies come from the index, nothing is compared with a working tree
    checkout: bool = True
    index_refresh_s: float = 2.0  # how often a long-running reader looks for a newly published index
    index_keep_s: float = 600.0  # how long a superseded index version stays readable after a publish
    # a server warms a newly published version in the background while the previous one answers; a reader
    # arriving in the warm-up's first this-many seconds waits for it (a small push reads its own writes)
    index_swap_wait_s: float = 1.0
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    ann_min_rows: int = DEFAULT_ANN_MIN_ROWS  # SOURCEBOOK_ANN_MIN_ROWS
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    site_name: str = ""
    repo_url: str = ""  # e.g. https://github.com/o/r/blob/<ref>/ for source links; empty = no links
    llm: LLMConfig = field(default_factory=LLMConfig)
    embed: EmbedConfig = field(default_factory=EmbedConfig)

    @property
    def docs_dir(self) -> Path:
        return self.out_dir / "docs"

    @property
    def site_dir(self) -> Path:
        return self.out_dir / "site"

    @property
    def index_location(self) -> str:
        return self.index_uri or str(self.out_dir / "index")

    @property
    def index_chosen(self) -> bool:
        """True when the user (not the repository: see the trust boundary above) chose where the index is.

        Such an index is not held to this user's owner mark: it lives where the user sent it (a bucket
        shared by CI and the servers), not in the repository's tree where a committed one could hide; a
        chosen path inside the repository is therefore still held to it.
        """
        if not self.index_uri:
            return False
        return "://" in self.index_uri or not Path(self.index_uri).resolve().is_relative_to(self.root)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from exc


def _read_user_settings(path: Path | None) -> tuple[dict[str, Any], Path | None]:
    if path is None or not path.is_file():
        return {}, None
    return _read_toml(path), path


def _read_repo_settings(root: Path) -> tuple[dict[str, Any], str]:
    """The repository's own settings and where they came from ("" when it has none)."""
    own = root / "sourcebook.toml"
    if own.is_file():
        return _read_toml(own), "sourcebook.toml"
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            with pyproject.open("rb") as fh:
                data = tomllib.load(fh)
        except (tomllib.TOMLDecodeError, OSError):
            return {}, ""  # a broken pyproject belongs to the target repo, not to us
        tool = data.get("tool", {})
        if isinstance(tool, dict) and isinstance(tool.get("sourcebook"), dict):
            return dict(tool["sourcebook"]), "pyproject.toml [tool.sourcebook]"
    return {}, ""


def untrusted_settings(settings: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Split a repository's settings into what it may decide and the names of what it may not (pure).

    Kept: wiki-shaping settings, a relative `out_dir` (checked later to stay inside the repository) and a
    local embedder. Dropped: the whole `[llm]` table, a remote embedder with its endpoint/key/model,
    `index_uri`, `checkout` and an `out_dir` that is absolute or climbs out with `..`.
    """
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in settings.items():
        if key == "llm":
            dropped.extend(f"llm.{k}" for k in (value if isinstance(value, dict) else {"*": 0}))
        elif key == "embed" and isinstance(value, dict):
            embed: dict[str, Any] = {}
            for k, v in value.items():
                if k == "provider" and v in LOCAL_EMBEDDERS:
                    embed[k] = v
                else:
                    dropped.append(f"embed.{k}" + (f"={v!r}" if k == "provider" else ""))
            if embed:
                kept["embed"] = embed
        elif key in {"index_uri", "checkout"}:
            dropped.append(key)
        elif key == "out_dir" and isinstance(value, str) and _leaves_root(value):
            dropped.append(f"out_dir={value!r}")
        elif key == "max_file_bytes" and isinstance(value, int | float) and value > REPO_MAX_FILE_BYTES:
            kept[key] = REPO_MAX_FILE_BYTES
            dropped.append(f"max_file_bytes={value!r} (clamped to {REPO_MAX_FILE_BYTES})")
        else:
            kept[key] = value
    return kept, dropped


def _coerce(cls: type, values: dict[str, Any], where: str, problems: list[str]) -> dict[str, Any]:
    """`values` as the fields of `cls` declare them (a config file's or the environment's text made a
    number, a flag or a tuple); an unknown name or a value of the wrong kind is added to `problems`."""
    hints = _field_types(cls)
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in hints:
            problems.append(f"{where}: unknown setting {key!r}")
            continue
        kind = hints[key]
        try:
            out[key] = _as_kind(kind, value)
        except (TypeError, ValueError):
            problems.append(f"{where}: {key} must be a {kind.__name__}, got {value!r}")
    return out


def _as_kind(kind: type, value: Any) -> Any:
    if kind is bool:
        return value if isinstance(value, bool) else str(value).lower() in {"1", "true", "yes"}
    if kind is int:
        return int(value)
    if kind is float:
        return float(value)
    if kind is tuple:
        return tuple(value) if isinstance(value, list | tuple) else tuple(str(value).split(","))
    return value


def _field_types(cls: type) -> dict[str, type]:
    """Each field of a config dataclass and the kind of value it holds (bool, int, float, tuple, or object
    for text, paths and nested tables, which are taken as given), from its declared type."""
    import types
    import typing

    found: dict[str, type] = {}
    for name, hint in typing.get_type_hints(cls).items():
        origin = typing.get_origin(hint) or hint
        if origin in (typing.Union, types.UnionType):  # `str | None`: what the value is when set
            origin = next(a for a in typing.get_args(hint) if a is not type(None))
        found[name] = origin if origin in (bool, int, float, tuple) else object
    return {f.name: found[f.name] for f in fields(cls)}


def _leaves_root(path: str) -> bool:
    p = Path(path).expanduser()
    return p.is_absolute() or os.path.normpath(p).split(os.sep)[0] == os.pardir


def load_config(root: Path | str, overrides: dict[str, Any] | None = None,
                env: Mapping[str, str] | None = None, *, trust_repo_config: bool | None = None,
                repo_settings: Mapping[str, Any] | None = None, settings: Settings | None = None) -> Config:
    """Build the Config for repository `root`. Raises ConfigError listing every problem.

    `overrides` are the user's (CLI flags, a workspace file the user wrote) and are trusted; so are the
    user's `settings` (default: read from `env`, default this process's environment: sourcebook/settings.py)
    and the user config file. The repository's own settings, plus `repo_settings` (settings from a file
    that lives inside the repository, such as a committed workspace file), pass the trust boundary
    (`untrusted_settings`) unless `trust_repo_config` (default: the settings' trust_repo_config,
    SOURCEBOOK_TRUST_REPO_CONFIG or --trust-repo-config).
    """
    problems: list[str] = []
    if settings is None:
        settings = Settings.from_env(env, problems)
    overrides = dict(overrides or {})
    root = Path(root).resolve()
    if not root.is_dir():
        raise ConfigError(f"{root}: not a directory")
    if trust_repo_config is None:
        trust_repo_config = settings.trust_repo_config
    user_file = Path(settings.user_config) if settings.user_config else None
    user, user_path = _read_user_settings(user_file)
    repo, repo_source = _read_repo_settings(root)
    if repo_settings:
        repo = _merged(repo, dict(repo_settings))
        repo_source = repo_source or "repository settings"
    if not trust_repo_config:
        repo, dropped = untrusted_settings(repo)
        if dropped:
            log.warning("%s: ignored settings a repository may not choose (where data, keys and output go): "
                        "%s; set them in the environment, CLI flags or %s, or pass --trust-repo-config",
                        root / repo_source if repo_source.endswith(".toml") else f"{root} ({repo_source})",
                        ", ".join(dropped), user_path or user_file or "the user config file")
    values = _merged(_merged(user, repo), settings.config)  # the environment over the files
    # where the output directory was chosen: only the repository's own choice is held to its tree
    out_from_user = trust_repo_config or overrides.get("out_dir") is not None or (
        "out_dir" in user and "out_dir" not in repo)

    llm_values = dict(values.pop("llm", {}) or {})
    embed_values = dict(values.pop("embed", {}) or {})
    settings_top = values
    llm_values.update(overrides.pop("llm", {}) or {})
    embed_values.update(overrides.pop("embed", {}) or {})
    settings_top.update({k: v for k, v in overrides.items() if v is not None})

    top = _coerce(Config, settings_top, "config", problems)
    llm = _coerce(LLMConfig, llm_values, "llm", problems)
    embed = _coerce(EmbedConfig, embed_values, "embed", problems)
    if llm.get("mode", "tools") not in {"tools", "json", "md_json"}:
        problems.append(f"llm: mode must be tools, json or md_json, got {llm['mode']!r}")
    if embed.get("provider", "default") not in {"default", "static", "minilm", "openai", "none"}:
        problems.append(
            f"embed: provider must be default, static, minilm, openai or none, got {embed['provider']!r}")
    problems.extend(_index_uri_problems(str(top.get("index_uri", "") or "")))
    if float(top.get("index_refresh_s", 2.0)) <= 0:
        problems.append("config: index_refresh_s must be positive")
    if float(top.get("index_swap_wait_s", 1.0)) < 0:
        problems.append("config: index_swap_wait_s must be 0 or more")
    if float(top.get("index_keep_s", 600.0)) < 0:
        problems.append("config: index_keep_s must be 0 or more")
    if int(top.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)) <= 0:
        problems.append("config: max_file_bytes must be positive")
    if int(top.get("ann_min_rows", DEFAULT_ANN_MIN_ROWS)) <= 0:
        problems.append("config: ann_min_rows must be positive")
    repo_url = str(top.get("repo_url", "") or "")
    if repo_url and not is_http_url(repo_url):
        shown = repo_url if len(repo_url) <= 60 else repo_url[:60] + "…"
        problems.append(f"config: repo_url must be an http(s) URL without quotes or spaces, got {shown!r}")
    if problems:
        raise ConfigError(problems)

    uri = str(top.get("index_uri", "") or "")
    if uri and "://" not in uri:  # a path: taken from where the command runs, as --out is
        top["index_uri"] = str(Path(uri).expanduser().absolute())
    out_dir = Path(top.pop("out_dir", root / DEFAULT_OUT_DIR)).expanduser()
    if not out_dir.is_absolute():
        out_dir = root / out_dir
    if not out_from_user:
        check_repo_out_dir(root, out_dir)
    top.pop("root", None)
    config = Config(root=root, out_dir=out_dir, llm=LLMConfig(**llm), embed=EmbedConfig(**embed))
    return replace(config, **top)


INDEX_SCHEMES = ("s3", "gs", "az")


def _index_uri_problems(uri: str) -> list[str]:
    """What is wrong with an index URI (pure): a path, or s3://, gs://, az:// with a bucket."""
    if not uri or "://" not in uri:
        return []
    scheme, _, rest = uri.partition("://")
    if scheme.lower() not in INDEX_SCHEMES:
        return [f"config: index_uri {uri!r}: scheme must be one of {', '.join(INDEX_SCHEMES)} (or a path)"]
    if not rest.split("/", 1)[0]:
        return [f"config: index_uri {uri!r} names no bucket"]
    return []


def detached_state_dir(index_uri: str, env: Mapping[str, str] | None = None) -> Path:
    """Where a reader with no checkout keeps its answer cache and episodes: a private folder per user and
    per index URI ($XDG_STATE_HOME/sourcebook/detached/<digest>), created here."""
    import hashlib

    env = dict(os.environ) if env is None else dict(env)
    base = env.get("XDG_STATE_HOME") or (str(Path(env["HOME"]) / ".local" / "state") if env.get("HOME")
                                         else "")
    if not base:
        raise ConfigError("no checkout, and no $XDG_STATE_HOME or $HOME for the answer cache: set one")
    digest = hashlib.sha256(index_uri.encode("utf-8")).hexdigest()[:16]
    state = Path(base) / "sourcebook" / "detached" / digest
    try:
        state.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{state}: cannot create the answer state folder ({exc.strerror or exc})") from exc
    return state


def _merged(low: dict[str, Any], high: dict[str, Any]) -> dict[str, Any]:
    """`high` over `low`, table by table for [llm] and [embed]."""
    out = dict(low)
    for key, value in high.items():
        if key in {"llm", "embed"} and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


# What a URL may spell (RFC 3986's characters, without the quote '): the theme prints the repository link
# unescaped inside href="...", so a `"` in repo_url would end the attribute and start an `onmouseover`.
_URL_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&()*+,;=%]+")


def is_http_url(url: str) -> bool:
    """An http(s) URL with a host, spelled only with URL characters (no quotes, spaces, <> or backslashes)."""
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return (parts.scheme.lower() in {"http", "https"} and bool(parts.netloc)
            and _URL_CHARS.fullmatch(url) is not None)


def check_repo_out_dir(root: Path, out_dir: Path) -> None:
    """Refuse an output directory the repository chose that would send writes outside it.

    The default `.sourcebook` and a relative `out_dir` from the repository's config must resolve inside the
    repository through no symlink (a committed `.sourcebook -> /somewhere` would make the theme copy and
    mkdocs --clean delete files there), and hold no symlinked entry sourcebook writes to.
    """
    hint = "pass --out DIR to choose the output directory yourself"
    rel = os.path.relpath(out_dir, root)
    if rel in {os.curdir, os.pardir} or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        raise ConfigError(f"{out_dir}: the output directory must be inside the repository {root}; {hint}")
    current = root
    for part in Path(rel).parts:
        current = current / part
        if current.is_symlink():
            raise ConfigError(f"{current}: the output directory is a symlink (to {os.readlink(current)}); "
                              f"sourcebook will not write through it; {hint}")
    if current.resolve() != current:
        raise ConfigError(f"{out_dir}: the output directory resolves outside the repository; {hint}")
    link = _first_symlink(current)
    if link is not None:
        raise ConfigError(f"{link}: a symlink inside the output directory; sourcebook will "
                          f"not write through it; {hint}")


def _first_symlink(directory: Path) -> Path | None:
    """A symlink anywhere under `directory` (not followed), or None. Every level counts: a committed
    `.sourcebook/docs/files/pkg -> /home/you` would receive pages, and `assets/sourcebook -> …` the
    mermaid copy and the clean-up of older ones."""
    stack = [directory]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.is_symlink():
                        return Path(entry.path)
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
        except (FileNotFoundError, NotADirectoryError):
            continue
    return None
