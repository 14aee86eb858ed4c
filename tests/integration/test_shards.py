"""Sharding a monorepo by top-level folder, as the README's "Past one machine" describes it: one build per
folder (`include`, its own output folder and index URI), one workspace that serves every shard by alias.
Each shard is a complete wiki, index and build cache of its folder; nothing is merged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from answer.serving.tools import Tools
from answer.serving.workspace import parse_workspace
from generator.build import build
from sourcebook.errors import NotFoundError

MONOREPO: dict[str, str | bytes] = {
    "README.md": "# Mono\n\nTwo services.\n",
    "billing/invoice.py": "def total(lines):\n    '''Sum the invoice lines.'''\n    return sum(lines)\n",
    "billing/tax.py": "from billing.invoice import total\n\n\ndef with_tax(lines):\n"
                      "    return total(lines) * 1.2\n",
    "search/query.py": "def parse_query(text):\n    '''Split a search query into terms.'''\n"
                       "    return text.split()\n",
}


def test_shards_build_apart_and_serve_together(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    root = make_repo(MONOREPO)
    shards = {name: {"path": str(root), "include": [f"{name}/**"], "out_dir": str(tmp_path / "out" / name),
                     "index_uri": str(tmp_path / "shared" / name), "embed": {"provider": "none"}}
              for name in ("billing", "search")}
    workspace = parse_workspace({"repos": shards}, tmp_path)
    for name in shards:  # on a real monorepo: one CI runner per folder, in parallel
        report = build(workspace.resolve(name), site=False, index=True)
        assert report.files == len([p for p in MONOREPO if p.startswith(name + "/")])
        assert report.index is not None
    tools = Tools(workspace)
    assert "query.py" in str(tools.get_symbol("parse_query", repo="search"))
    assert "tax.py" in str(tools.get_symbol("with_tax", repo="billing"))
    with pytest.raises(NotFoundError):  # each shard answers for its own folder only
        tools.get_symbol("parse_query", repo="billing")
    assert (tmp_path / "out" / "billing" / "docs" / "files" / "billing" / "tax.py.md").is_file()
    assert not (tmp_path / "out" / "billing" / "docs" / "files" / "search").exists()
