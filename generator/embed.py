"""Text -> vectors. One Embedder interface; implementations are chosen once from config by `get_embedder`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

    from sourcebook.config import EmbedConfig


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    @property
    def id(self) -> str:
        """Stable identity (provider + model + version); an index built with another id is rebuilt."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim), dtype float32, rows L2-normalised."""
        ...


def get_embedder(config: EmbedConfig) -> Embedder | None:
    """The embedder the config asks for, or None for full-text only."""
    if config.provider == "none":
        return None
    # The offline default and the other providers are filled in by the embedding work (issue 3).
    return None
