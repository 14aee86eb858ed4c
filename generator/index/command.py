"""The `index` command's function: analyze the repository and update its index, without the wiki.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.index.refresh import Checkout, IndexUpdate, read_source, update_from
from generator.index.report import IndexReport
from generator.index.stored_analysis import indexed_facts
from generator.index.writer import recover_index

if TYPE_CHECKING:
    from generator.index.embed import Embedder
    from sourcebook.config import Config


def index_repository(config: Config, *, prune: bool = True, embedder: Embedder | str | None = "config",
                     lock_wait: float | None = None, reset: bool = False) -> IndexReport:
    """analyze + update_index without the wiki: what `sourcebook index` runs (pages are kept).

    Holds the output directory's lock like a build (sourcebook/lock.py): waits at most `lock_wait` seconds.
    `reset`: prune even from another checkout than the index's (see `check_source`).
    """
    from sourcebook.lock import output_lock

    with output_lock(config.out_dir, wait=lock_wait):
        return _index_repository(config, prune=prune, embedder=embedder, reset=reset)


def _index_repository(config: Config, *, prune: bool, embedder: Embedder | str | None,
                      reset: bool = False) -> IndexReport:
    if embedder == "config":
        from generator.index.embed import get_embedder

        embedder = get_embedder(config.embed)
    damage = recover_index(config)  # before anything reads it
    analysis = read_source(config, Checkout(known=indexed_facts(config)))
    report = update_from(config, analysis, None if isinstance(embedder, str) else embedder,
                         IndexUpdate(prune=prune, reset=reset))
    if damage:
        report.rebuilt = f"damaged index ({damage})"
    return report
