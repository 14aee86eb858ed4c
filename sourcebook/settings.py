"""The one module that reads sourcebook's settings from the environment, and the typed object they make.

Every variable is a row of `ENV_VARS` (name -> setting). Two kinds of setting live there:
- a repository Config field (`llm.model`, `embed.provider`, `index_uri`, …): kept as the text the user
  gave in `Settings.config` and validated by `sourcebook.config.load_config` against the Config field's
  type, together with the config files' values, so that every problem is reported at once;
- a process setting (`site_workers`, `stall_seconds`, `trust_repo_config`, …): a typed field of `Settings`,
  validated here (every bad variable named in one ConfigError).

Precedence, lowest to highest: defaults, the user config file ($XDG_CONFIG_HOME/sourcebook/config.toml,
default ~/.config/sourcebook/config.toml), the repository's own sourcebook.toml or [tool.sourcebook] (only
what the trust boundary in config.py lets it decide), environment variables, CLI flags. The CLI reads the
environment once (`Settings.from_env`), lays its flags over it (`Settings.with_flags`) and passes the result
down as an argument; it never writes os.environ. Server worker processes get the same object serialized
(`ServeSettings`, JSON) through their factory, not through variables.

Deep readers that have no caller to hand them the object (the stall limit of a worker pool, the regex
budget of a search, the render budget inside the site engine's own process) call `current()`, which reads
the environment here too: a test (tests/integration/test_settings.py) fails on a sourcebook variable read
anywhere else.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

from sourcebook.errors import ConfigError


@dataclass(frozen=True)
class EnvVar:
    """One environment variable: the setting it gives. For a setting named by several variables, the first
    one set (in table order) wins."""

    name: str
    setting: str  # "llm.model" (a Config field, dotted for [llm]/[embed]) or a field of Settings
    config: bool = True  # a Config field (load_config validates it) rather than a process setting


def _llm(field: str, *names: str) -> tuple[EnvVar, ...]:
    return tuple(EnvVar(name, f"llm.{field}") for name in names)


TRUST_ENV = "SOURCEBOOK_TRUST_REPO_CONFIG"
INDEX_URI_ENV = "SOURCEBOOK_INDEX_URI"
TOKEN_ENV = "SOURCEBOOK_TOKEN"  # noqa: S105 (the name of the variable, not a secret)
SITE_WORKERS_ENV = "SOURCEBOOK_SITE_WORKERS"
PAGE_CPU_ENV = "SOURCEBOOK_PAGE_CPU_SECONDS"
SITE_ENGINE_ENV = "SOURCEBOOK_SITE_ENGINE"
STALL_ENV = "SOURCEBOOK_STALL_SECONDS"
REGEX_BUDGET_ENV = "SOURCEBOOK_REGEX_BUDGET_S"
MODEL_DIR_ENV = "SOURCEBOOK_MODEL_DIR"
DATA_DIR_ENV = "SOURCEBOOK_DATA_DIR"
WARM_DELAY_ENV = "SOURCEBOOK_TEST_WARM_DELAY"  # tests only: seconds added to each background warm-up

ENV_VARS: tuple[EnvVar, ...] = (
    *_llm("base_url", "SOURCEBOOK_LLM_BASE_URL", "OPENAI_BASE_URL"),
    *_llm("api_key", "SOURCEBOOK_LLM_API_KEY", "OPENAI_API_KEY"),
    *_llm("model", "SOURCEBOOK_LLM_MODEL"),
    *_llm("mode", "SOURCEBOOK_LLM_MODE"),
    *_llm("context_tokens", "SOURCEBOOK_LLM_CONTEXT_TOKENS"),
    *_llm("timeout_s", "SOURCEBOOK_LLM_TIMEOUT"),
    *_llm("max_retries", "SOURCEBOOK_LLM_MAX_RETRIES"),
    *_llm("max_reasks", "SOURCEBOOK_LLM_MAX_REASKS"),
    *_llm("system_in_user", "SOURCEBOOK_LLM_SYSTEM_IN_USER"),
    *_llm("tool_history", "SOURCEBOOK_LLM_TOOL_HISTORY"),
    *_llm("temperature", "SOURCEBOOK_LLM_TEMPERATURE"),
    *_llm("seed", "SOURCEBOOK_LLM_SEED"),
    *_llm("concurrency", "SOURCEBOOK_LLM_CONCURRENCY"),
    *_llm("max_output_tokens", "SOURCEBOOK_LLM_MAX_OUTPUT_TOKENS"),
    *_llm("price_in_per_mtok", "SOURCEBOOK_LLM_PRICE_IN_PER_MTOK"),
    *_llm("price_out_per_mtok", "SOURCEBOOK_LLM_PRICE_OUT_PER_MTOK"),
    EnvVar("SOURCEBOOK_EMBEDDER", "embed.provider"),
    EnvVar("SOURCEBOOK_EMBED_BASE_URL", "embed.base_url"),
    EnvVar("SOURCEBOOK_EMBED_API_KEY", "embed.api_key"),
    EnvVar("SOURCEBOOK_EMBED_MODEL", "embed.model"),
    EnvVar(INDEX_URI_ENV, "index_uri"),
    EnvVar("SOURCEBOOK_INDEX_REFRESH_S", "index_refresh_s"),
    EnvVar("SOURCEBOOK_INDEX_KEEP_S", "index_keep_s"),
    EnvVar("SOURCEBOOK_INDEX_SWAP_WAIT_S", "index_swap_wait_s"),
    EnvVar("SOURCEBOOK_ANN_MIN_ROWS", "ann_min_rows"),
    EnvVar(TRUST_ENV, "trust_repo_config", config=False),
    EnvVar(SITE_WORKERS_ENV, "site_workers", config=False),
    EnvVar("SOURCEBOOK_PARSE_WORKERS", "parse_workers", config=False),
    EnvVar(SITE_ENGINE_ENV, "site_engine", config=False),
    EnvVar(PAGE_CPU_ENV, "page_cpu_seconds", config=False),
    EnvVar(STALL_ENV, "stall_seconds", config=False),
    EnvVar(REGEX_BUDGET_ENV, "regex_budget_s", config=False),
    EnvVar(MODEL_DIR_ENV, "model_dir", config=False),
    EnvVar(DATA_DIR_ENV, "data_dir", config=False),
    EnvVar(TOKEN_ENV, "token", config=False),
    EnvVar(WARM_DELAY_ENV, "warm_delay_s", config=False),
)

_TRUE = {"1", "true", "yes"}


class Settings(BaseModel):
    """The user's settings for one process: the environment, with the CLI's flags laid over it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Config fields as given ({"llm": {"model": "…"}, "index_uri": "…"}): load_config validates them
    config: dict[str, Any] = Field(default_factory=dict)
    # obey the repository's own config where it chooses where data and keys go (config.py's trust boundary)
    trust_repo_config: bool = False
    user_config: str | None = None  # the user config file's path (from XDG_CONFIG_HOME / HOME)
    site_workers: PositiveInt | None = None  # processes rendering pages (Markdown and HTML)
    parse_workers: PositiveInt | None = None  # processes parsing files and making index rows
    site_engine: Literal["sourcebook", "mkdocs"] = "sourcebook"  # mkdocs: MkDocs' own page loop
    page_cpu_seconds: float | None = None  # the site engine's CPU budget per page
    stall_seconds: float | None = None  # how long a worker stage may finish nothing
    regex_budget_s: float | None = None  # CPU a regex search may take
    model_dir: str | None = None  # where the static embedding table is looked for first
    data_dir: str | None = None  # the data folder looked in first (offline assets)
    token: str | None = None  # the HTTP/MCP bearer token (under `serve` and `mcp`'s --token)
    warm_delay_s: float = 0.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, problems: list[str] | None = None) -> Settings:
        """The settings `env` (default: this process's environment) gives. A bad value raises one
        ConfigError naming every bad variable, or with `problems` is appended there (and left unset)."""
        environ: Mapping[str, str] = os.environ if env is None else env
        config: dict[str, Any] = {}
        process: dict[str, Any] = {}
        source: dict[str, str] = {}
        for var in ENV_VARS:
            value = environ.get(var.name, "")
            if not value or var.setting in source:
                continue
            source[var.setting] = var.name
            if var.config:
                table, _, key = var.setting.rpartition(".")
                (config.setdefault(table, {}) if table else config)[key] = value
            else:
                process[var.setting] = _process_value(var.setting, value)
        user = user_config_path(environ)
        found: list[str] = []
        settings = cls._validated(dict(process, config=config, user_config=str(user) if user else None),
                                  source, found)
        if found and problems is None:
            raise ConfigError(found)
        if problems is not None:
            problems.extend(found)
        return settings

    @classmethod
    def _validated(cls, values: dict[str, Any], source: Mapping[str, str], found: list[str]) -> Settings:
        try:
            return cls(**values)
        except ValidationError as exc:
            bad = set()
            for error in exc.errors():
                name = str(error["loc"][0]) if error["loc"] else ""
                bad.add(name)
                found.append(f"{source.get(name, name)}={values.get(name)!r}: {error['msg']}")
            return cls(**{k: v for k, v in values.items() if k not in bad})

    def with_flags(self, **flags: Any) -> Settings:
        """These settings with the CLI's flags laid over them (None: the flag was not given). A Config
        field (`index_uri`) goes to `config`, beside what the environment gave."""
        given = {k: v for k, v in flags.items() if v is not None}
        config = dict(self.config)
        for key in [k for k in given if k not in type(self).model_fields]:
            config[key] = given.pop(key)
        return type(self).model_validate({**self.model_dump(), **given, "config": config})  # validated too

    @property
    def index_uri(self) -> str:
        return str(self.config.get("index_uri") or "")


def _process_value(setting: str, value: str) -> Any:
    """A process setting's text, as its field reads it (validation is the model's)."""
    value = value.strip()
    if setting == "trust_repo_config":
        return value.lower() in _TRUE
    if setting == "site_engine":
        return value.lower()
    return value


def user_config_path(env: Mapping[str, str]) -> Path | None:
    """The user's own config file: $XDG_CONFIG_HOME/sourcebook/config.toml, else ~/.config/sourcebook/…"""
    base = env.get("XDG_CONFIG_HOME") or (str(Path(env["HOME"]) / ".config") if env.get("HOME") else "")
    return Path(base) / "sourcebook" / "config.toml" if base else None


def current(env: Mapping[str, str] | None = None) -> Settings:
    """This process's settings (or `env`'s), read now, for readers no caller can hand them to. A bad value
    is left at its default here, as those readers always did: the CLI reports it before any work starts."""
    return Settings.from_env(env, [])


class ServeSettings(BaseModel):
    """What a server worker process needs to build its app, serialized once by `sourcebook serve` and read
    by the worker factory (answer/serving/http_api.py's `app_from_settings`, orgs.py's
    `router_from_settings`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    settings: Settings = Field(default_factory=Settings)
    path: str | None = None  # the checkout or workspace served (None: the index URI alone)
    orgs_file: str | None = None  # `serve --orgs`: the organisations file
    host: str = "127.0.0.1"
    max_body: PositiveInt = 1_000_000
    local_only: bool = False
    token: str | None = None
