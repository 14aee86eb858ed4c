"""generator/site/material/nav_items.py: Material's nav entries taken from the per-folder memo give every page
the bytes the
template renders without it: sourcebook's light nav pruned and not (its windows move a closed section's
place, which a section that is not pruned prints), Material's whole nav; and most entries are reused."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from generator.pages.render_markdown import HOOKS_FILE
from generator.site.material import engine as site_engine
from generator.site.material import nav_items
from generator.site.publish import install_theme
from tests.nav_trees import write_nav_tree

HOOKS = Path(HOOKS_FILE)


def _project(root: Path, *, features: list[str], hooks: bool) -> Path:
    nav = write_nav_tree(root / "docs", big=30, areas=8, sub=True, label=" <b>&amp;</b>", list_loose=True,
                         body="# {page}\n\nText.\n\n## A part\n\nMore.\n")
    theme: dict[str, object] = {"name": "material", "features": features}
    if hooks:  # sourcebook's theme layer: the audit passes only its own scripts
        theme["custom_dir"] = install_theme(root).name
    config = {"site_name": "t", "use_directory_urls": False, "docs_dir": "docs", "nav": nav,
              "theme": theme, "plugins": ["search"],
              "markdown_extensions": [{"toc": {"permalink": True}}]}
    if hooks:
        config["hooks"] = [str(HOOKS)]
    (root / "mkdocs.yml").write_text(json.dumps(config), encoding="utf-8")
    return root / "mkdocs.yml"


def _site(config: Path, into: Path) -> dict[str, bytes]:
    site_engine._here.relay = site_engine._Relay(io.StringIO())
    site_engine.build(config, into, None, workers=1)
    return {p.relative_to(into).as_posix(): p.read_bytes() for p in sorted(into.rglob("*.html"))}


@pytest.mark.parametrize(("features", "hooks"), [
    (["navigation.prune", "navigation.indexes", "toc.integrate"], True),
    (["navigation.indexes"], False),
    (["navigation.indexes", "toc.integrate"], True),  # light nav windows, closed sections not pruned
])
def test_memo_renders_the_templates_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          features: list[str], hooks: bool) -> None:
    config = _project(tmp_path / "p", features=features, hooks=hooks)
    calls = {"memo": 0, "rendered": 0}
    key = nav_items._key

    def counted(context: object, args: tuple[object, ...]) -> object:
        found = key(context, args)
        calls["memo" if found is not None else "rendered"] += 1
        return found

    monkeypatch.setattr(nav_items, "_key", counted)
    with_memo = _site(config, tmp_path / "memo")
    assert calls["memo"] > calls["rendered"]  # most entries are the memo's to answer
    monkeypatch.setattr(nav_items, "install", lambda env: False)
    assert _site(config, tmp_path / "plain") == with_memo
    assert len(with_memo) > 40
