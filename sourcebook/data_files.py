"""Where sourcebook's own data folders (templates, the site theme layer) are installed."""

from __future__ import annotations

from pathlib import Path


def data_dir(name: str) -> Path:
    """`templates` or `site`: from the source tree (editable install) or the wheel's bundled copy."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / name, here.parent / "sourcebook" / "_data" / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"sourcebook data directory {name!r} is missing from the installation")
