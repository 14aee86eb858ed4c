"""Typed memos of an open index: what readers derive from one pinned version and keep while it is open.

An IndexStore (generator/index/store.py) reads every table at one version, so a row count, a symbol table or
an
in-memory ranking derived from it never goes stale. The answer side's modules keep those in the store's
`memos`, each under a `Memo` key declared next to the code that fills it, with the type of its value
(before: one string-keyed dict shared by three modules, read back as Any). Kept free of imports, so a
module can declare its keys at import time without loading the index.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Memo(Generic[T]):
    """The typed key of one thing a reader derives from an open index and keeps (IndexStore.memos): a row
    count, a symbol table, an in-memory ranking. Declared next to the code that fills it, with the type of
    its value; `name` tells keys apart (one per table: the table is part of the name)."""

    name: str


class Memos:
    """What readers derive from one open index, kept as long as the store: the store is pinned to one
    version, so nothing derived from it goes stale. Typed keys (Memo) instead of a string-keyed dict shared
    by several modules: a value is read back as the type it was declared with."""

    def __init__(self) -> None:
        self._values: dict[Memo[Any], Any] = {}

    def get(self, key: Memo[T]) -> T | None:
        value: T | None = self._values.get(key)
        return value

    def put(self, key: Memo[T], value: T) -> T:
        self._values[key] = value
        return value

    def setdefault(self, key: Memo[T], value: T) -> T:
        kept: T = self._values.setdefault(key, value)
        return kept

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __iter__(self) -> Iterator[Memo[Any]]:
        return iter(list(self._values))
