"""The typed, frozen configuration passed down through every stage.

Sources, lowest to highest precedence: defaults, `sourcebook.toml` (or `[tool.sourcebook]` in the target's
pyproject.toml), environment variables, CLI overrides. Every problem is reported at once.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from sourcebook.errors import ConfigError

DEFAULT_MAX_FILE_BYTES = 1_000_000


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
    index_uri: str = ""  # default <out_dir>/index; any URI LanceDB accepts
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
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


_ENV_LLM = {
    "base_url": ("SOURCEBOOK_LLM_BASE_URL", "OPENAI_BASE_URL"),
    "api_key": ("SOURCEBOOK_LLM_API_KEY", "OPENAI_API_KEY"),
    "model": ("SOURCEBOOK_LLM_MODEL",),
    "mode": ("SOURCEBOOK_LLM_MODE",),
    "context_tokens": ("SOURCEBOOK_LLM_CONTEXT_TOKENS",),
    "timeout_s": ("SOURCEBOOK_LLM_TIMEOUT",),
    "max_retries": ("SOURCEBOOK_LLM_MAX_RETRIES",),
    "max_reasks": ("SOURCEBOOK_LLM_MAX_REASKS",),
    "system_in_user": ("SOURCEBOOK_LLM_SYSTEM_IN_USER",),
    "tool_history": ("SOURCEBOOK_LLM_TOOL_HISTORY",),
    "concurrency": ("SOURCEBOOK_LLM_CONCURRENCY",),
    "max_output_tokens": ("SOURCEBOOK_LLM_MAX_OUTPUT_TOKENS",),
    "price_in_per_mtok": ("SOURCEBOOK_LLM_PRICE_IN_PER_MTOK",),
    "price_out_per_mtok": ("SOURCEBOOK_LLM_PRICE_OUT_PER_MTOK",),
}
_ENV_EMBED = {
    "provider": ("SOURCEBOOK_EMBEDDER",),
    "base_url": ("SOURCEBOOK_EMBED_BASE_URL",),
    "api_key": ("SOURCEBOOK_EMBED_API_KEY",),
    "model": ("SOURCEBOOK_EMBED_MODEL",),
}


def _read_file_settings(root: Path) -> dict[str, Any]:
    own = root / "sourcebook.toml"
    if own.is_file():
        with own.open("rb") as fh:
            return tomllib.load(fh)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            with pyproject.open("rb") as fh:
                data = tomllib.load(fh)
        except tomllib.TOMLDecodeError:
            return {}  # a broken pyproject belongs to the target repo, not to us
        tool = data.get("tool", {})
        if isinstance(tool, dict) and isinstance(tool.get("sourcebook"), dict):
            return dict(tool["sourcebook"])
    return {}


def _coerce(cls: type, values: dict[str, Any], where: str, problems: list[str]) -> dict[str, Any]:
    known = {f.name: f for f in fields(cls)}
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in known:
            problems.append(f"{where}: unknown setting {key!r}")
            continue
        default = getattr(cls(**({"root": Path("."), "out_dir": Path(".")} if cls is Config else {})), key)
        try:
            if isinstance(default, bool):
                out[key] = value if isinstance(value, bool) else str(value).lower() in {"1", "true", "yes"}
            elif isinstance(default, int):
                out[key] = int(value)
            elif isinstance(default, float):
                out[key] = float(value)
            elif isinstance(default, tuple):
                out[key] = tuple(value) if isinstance(value, list | tuple) else tuple(str(value).split(","))
            else:
                out[key] = value
        except (TypeError, ValueError):
            problems.append(f"{where}: {key} must be a {type(default).__name__}, got {value!r}")
    return out


def load_config(root: Path | str, overrides: dict[str, Any] | None = None,
                env: dict[str, str] | None = None) -> Config:
    """Build the Config for repository `root`. Raises ConfigError listing every problem."""
    env = dict(os.environ) if env is None else env
    overrides = dict(overrides or {})
    root = Path(root).resolve()
    problems: list[str] = []
    if not root.is_dir():
        raise ConfigError(f"{root}: not a directory")
    try:
        settings = _read_file_settings(root)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{root / 'sourcebook.toml'}: {exc}") from exc

    llm_values = dict(settings.pop("llm", {}) or {})
    embed_values = dict(settings.pop("embed", {}) or {})
    for key, names in _ENV_LLM.items():
        value = next((env[name] for name in names if env.get(name)), None)
        if value is not None:
            llm_values[key] = value
    for key, names in _ENV_EMBED.items():
        for name in names:
            if env.get(name):
                embed_values[key] = env[name]
                break
    llm_values.update(overrides.pop("llm", {}) or {})
    embed_values.update(overrides.pop("embed", {}) or {})
    settings.update({k: v for k, v in overrides.items() if v is not None})

    top = _coerce(Config, settings, "config", problems)
    llm = _coerce(LLMConfig, llm_values, "llm", problems)
    embed = _coerce(EmbedConfig, embed_values, "embed", problems)
    if llm.get("mode", "tools") not in {"tools", "json", "md_json"}:
        problems.append(f"llm: mode must be tools, json or md_json, got {llm['mode']!r}")
    if embed.get("provider", "default") not in {"default", "static", "minilm", "openai", "none"}:
        problems.append(
            f"embed: provider must be default, static, minilm, openai or none, got {embed['provider']!r}")
    if int(top.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)) <= 0:
        problems.append("config: max_file_bytes must be positive")
    if problems:
        raise ConfigError(problems)

    out_dir = Path(top.pop("out_dir", root / ".sourcebook"))
    if not out_dir.is_absolute():
        out_dir = root / out_dir
    top.pop("root", None)
    config = Config(root=root, out_dir=out_dir, llm=LLMConfig(**llm), embed=EmbedConfig(**embed))
    return replace(config, **top)
