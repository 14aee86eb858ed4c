"""bench/corpus.py's rule for the symlinks a checkout leaves out: those whose target leaves the repository."""

from __future__ import annotations

import pytest

from bench.corpus import leaves_checkout


@pytest.mark.parametrize(("path", "target", "leaves"), [
    ("os/test/resources/test/misc/broken-abs-symlink", "/doesnt/exist", True),
    ("a/link", "../../etc/passwd", True),
    ("link", "..", True),
    ("a/b/link", "../../lib.py", False),  # climbs to the root, not above it
    ("a/link", "sibling.txt", False),
    ("a/link", "./b/../c", False),
    ("a/link", "../..x", False),  # a name starting with dots is not a climb
])
def test_leaves_checkout(path: str, target: str, leaves: bool) -> None:
    assert leaves_checkout(path, target) is leaves
