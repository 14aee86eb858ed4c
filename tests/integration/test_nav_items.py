"""generator/site/material/nav_items.py: Material's nav entries taken from the per-folder memo give every page
the bytes the
template renders without it: sourcebook's light nav pruned and not (its windows move a closed section's
place, which a section that is not pruned prints), Material's whole nav; and most entries are reused."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.site.material import nav_items
from tests.support.nav_trees import built_pages, nav_project


@pytest.mark.parametrize(("features", "hooks"), [
    (["navigation.prune", "navigation.indexes", "toc.integrate"], True),
    (["navigation.indexes"], False),
    (["navigation.indexes", "toc.integrate"], True),  # light nav windows, closed sections not pruned
])
def test_memo_renders_the_templates_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          features: list[str], hooks: bool) -> None:
    config = nav_project(tmp_path / "p", features=features, hooks=hooks)
    calls = {"memo": 0, "rendered": 0}
    key = nav_items._key

    def counted(context: object, args: tuple[object, ...]) -> object:
        found = key(context, args)
        calls["memo" if found is not None else "rendered"] += 1
        return found

    monkeypatch.setattr(nav_items, "_key", counted)
    with_memo = built_pages(config, tmp_path / "memo")
    assert calls["memo"] > calls["rendered"]  # most entries are the memo's to answer
    monkeypatch.setattr(nav_items, "install", lambda env: False)
    assert built_pages(config, tmp_path / "plain") == with_memo
    assert len(with_memo) > 40
