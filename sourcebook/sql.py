"""Escaping of user strings before they reach a LanceDB where() filter (which is SQL).

Only these shapes are ever built: an exact string literal (alone, in a list, or searched for inside a
column) and a path-prefix LIKE. All are built here and nowhere else, so a scope such as `' OR 1=1 --` can
only ever match paths that literally start with it.
"""

from __future__ import annotations

LIKE_ESCAPE = "\\"


def quote(value: str) -> str:
    """A SQL string literal for `value` ('' doubles a quote; NUL cannot appear in a path)."""
    return "'" + value.replace("\x00", "").replace("'", "''") + "'"


def like_prefix_pattern(prefix: str) -> str:
    """The LIKE pattern matching strings that start with `prefix` literally (%, _ and \\ escaped)."""
    escaped = (prefix.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2)
               .replace("%", LIKE_ESCAPE + "%").replace("_", LIKE_ESCAPE + "_"))
    return escaped + "%"


def equals(column: str, value: str) -> str:
    """`column = 'value'` with the value escaped. `column` must be one of our own identifiers."""
    return f"{column} = {quote(value)}"


def in_list(column: str, values: list[str]) -> str:
    """`column IN ('a', 'b')` with every value escaped; an empty list matches nothing."""
    if not values:
        return "false"
    return f"{column} IN ({', '.join(quote(v) for v in values)})"


def prefix_filter(column: str, prefix: str | None) -> str | None:
    """A filter keeping rows whose `column` starts with `prefix`, or None when there is no scope."""
    if not prefix:
        return None
    return f"{column} LIKE {quote(like_prefix_pattern(prefix))} ESCAPE {quote(LIKE_ESCAPE)}"


def contains_any(column: str, values: list[str]) -> str:
    """Rows whose `column` holds any of `values` verbatim (case-sensitive, as Python's `in`); an empty list
    matches nothing."""
    if not values:
        return "false"
    return " OR ".join(f"strpos({column}, {quote(v)}) > 0" for v in values)
