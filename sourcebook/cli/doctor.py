"""What this installation can do for a repository's config: `sourcebook doctor`'s checks, and the one-line
notes a build's or an answer's summary shows when a search tier is off.

Each check says what is there and, when something is missing, the one command that adds it. A missing piece
is `required` when the config asks for it (the default embedder's table, a configured endpoint's model, the
chosen index location): doctor then exits non-zero. Offline Mermaid, an LLM and chromium are reported but
never required: without them a build still does all the config asks, with less (CDN diagrams, extracted
prose, no browser tests).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path

from sourcebook.config import Config, EmbedConfig, LLMConfig
from sourcebook.data_home import writable

SETUP = "sourcebook setup"
REMOTE_INDEX_TIMEOUT_S = 15.0
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = False  # missing, and the config asks for it

    @property
    def failed(self) -> bool:
        return not self.ok and self.required


def install_hint(packages: str) -> str:
    """The command that adds Python packages to the environment sourcebook runs in."""
    parts = Path(sys.prefix).parts
    if "pipx" in parts:
        return f"pipx inject sourcebook {packages}"
    if "uv" in parts and "tools" in parts:
        return f"uv tool install sourcebook --with {packages}"
    return f"{sys.executable} -m pip install {packages}"


def semantic_check(embed: EmbedConfig) -> Check:
    """The semantic tier: which embedder the config asks for and whether this installation has it."""
    name = "semantic tier"
    provider = embed.provider
    if provider == "none":
        return Check(name, False, "off: the config sets embed.provider = none (full-text and symbols only)",
                     "unset SOURCEBOOK_EMBEDDER / embed.provider (the default embedder)")
    if provider in {"default", "static"}:
        from generator.index import static_model

        table = static_model.find_table()
        if table is not None:
            return Check(name, True, f"static:{table.name} ({table.parent})")
        if static_model.source_model_dir() is not None:
            return Check(name, True, "the table is distilled on first use from the installed weights "
                         "(about a minute)", SETUP)
        return Check(name, False, "off: no offline embedding table (searches are full-text and symbols only)",
                     SETUP, required=True)
    if provider == "minilm":
        if importlib.util.find_spec("sentence_transformers") is not None:
            return Check(name, True, "minilm (sentence-transformers)")
        return Check(name, False, "off: embed.provider = minilm needs sentence-transformers",
                     install_hint("torch==2.13.0 sentence-transformers"), required=True)
    if provider == "openai":
        if embed.base_url and embed.model:
            return Check(name, True, f"openai-compatible {embed.model} at {embed.base_url}")
        return Check(name, False, "off: embed.provider = openai needs an endpoint and a model",
                     "set SOURCEBOOK_EMBED_BASE_URL and SOURCEBOOK_EMBED_MODEL", required=True)
    return Check(name, False, f"unknown embed.provider {provider!r}", "set embed.provider = default",
                 required=True)


def mermaid_check() -> Check:
    from sourcebook.cli.offline_assets import MERMAID_SHA256, MERMAID_VERSION, mermaid_path, sha256_of

    name = "diagrams"
    found = mermaid_path()
    if found is not None:
        pinned = sha256_of(found) == MERMAID_SHA256
        return Check(name, True, f"mermaid.js offline ({found})"
                     + ("" if pinned else f"; not the pinned mermaid@{MERMAID_VERSION}"),
                     "" if pinned else f"{SETUP} --force")
    fix = SETUP if shutil.which("npm") else f"install npm (Node.js), then {SETUP}"
    return Check(name, False, "mermaid.js from the CDN: offline, diagrams show as source text", fix)


def llm_check(llm: LLMConfig) -> Check:
    name = "LLM"
    if llm.configured:
        where = f" at {llm.base_url}" if llm.base_url else ""
        return Check(name, True, f"{llm.model}{where}")
    if llm.base_url or llm.model:  # half a configuration: the user meant to use one
        missing = "SOURCEBOOK_LLM_MODEL" if not llm.model else "SOURCEBOOK_LLM_BASE_URL (or an API key)"
        return Check(name, False, "configured in part: pages fall back to extracted prose", f"set {missing}",
                     required=True)
    return Check(name, False, "not configured: pages are extracted from the code, `ask` returns ranked "
                 "evidence", "set SOURCEBOOK_LLM_BASE_URL and SOURCEBOOK_LLM_MODEL")


def index_check(config: Config) -> Check:
    """Whether the index location can be read (and, for a local one not made yet, written)."""
    from generator.index.store import read_index_state

    name = "index"
    uri = config.index_location
    build = f"sourcebook build {config.root}"
    if "://" not in uri and not Path(uri).exists():
        if writable(Path(uri)):
            return Check(name, False, f"none yet at {uri}", build)
        return Check(name, False, f"{uri} cannot be created (no write access)", "choose --index-uri or --out",
                     required=True)
    # a remote store may not answer at all: a thread keeps the screen from hanging on it
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        state = pool.submit(read_index_state, uri).result(timeout=REMOTE_INDEX_TIMEOUT_S)
    except FutureTimeout:
        return Check(name, False, f"{uri} did not answer in {REMOTE_INDEX_TIMEOUT_S:.0f} s",
                     "check the storage credentials and network", required=True)
    except Exception as exc:  # noqa: BLE001 - any storage failure is what this check reports
        text = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        return Check(name, False, f"{uri} unreadable: {text}", build, required=True)
    finally:
        pool.shutdown(wait=False)
    if state is None:
        return Check(name, False, f"{uri} holds no complete index yet", build)
    vectors = f"vectors from {state.get('embedder_id')}" if state.get("dim") else "no vectors"
    return Check(name, True, f"{uri} ({vectors})")


def browser_check() -> Check:
    found = next((path for path in map(shutil.which, BROWSERS) if path), None)
    if found:
        return Check("chromium", True, f"{found} (the browser tests' headless browser)")
    return Check("chromium", False, "not found: only the browser tests (`make test`) need it",
                 "apt-get install chromium")


def checks(config: Config) -> list[Check]:
    """Every check, in the order doctor shows them."""
    from sourcebook import __version__
    from sourcebook.data_home import write_home

    return [
        Check("install", True, f"sourcebook {__version__} in {sys.prefix}; data folder {write_home()}"),
        Check("lexical tier", True, "full-text (BM25) over code, files and wiki pages"),
        Check("symbolic tier", True, "symbol names and definitions"),
        semantic_check(config.embed),
        mermaid_check(),
        llm_check(config.llm),
        index_check(config),
        browser_check(),
    ]


def semantic_off_note(embed: EmbedConfig, index_has_vectors: bool) -> str:
    """The one line a build or an answer shows when the semantic tier is off: why, and what adds it."""
    check = semantic_check(embed)
    if check.ok and not index_has_vectors:  # the embedder is there now; the index predates it
        return "off: the index has no vectors; `sourcebook index` rebuilds it with them"
    reason = check.detail.removeprefix("off: ")
    if embed.provider == "none":
        return f"off ({reason})"
    return f"off: {reason}" + (f"; `{check.fix}`, then build again" if check.fix else "")
