"""What one index run did (update_index's result): counts of files, rows and embeddings, and why it rebuilt.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class IndexReport:
    files_total: int = 0
    files_indexed: int = 0  # new or changed
    files_unchanged: int = 0
    files_deleted: int = 0
    chunks_written: int = 0
    symbols_written: int = 0
    pages_written: int = 0
    embedded: int = 0  # texts actually sent to the embedder
    embed_reused: int = 0  # vectors taken from the cache
    embedder: str = "none"
    rebuilt: str = ""  # why the whole index was rebuilt, if it was
    unchanged: bool = False  # nothing opened or written: the inputs are those the last publish recorded
    cache_written: int = 0  # shared build cache rows added or replaced
    cache_deleted: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
