"""The prompt templates: versioned Jinja files in `prompts/`, their version (part of the writer id), and
rendering them into the one user message a call sends.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

PROMPTS_DIR = Path(__file__).parent / "prompts"
TEMPLATES = {"file": "file_page.v1.j2", "file_part": "file_part.v1.j2", "module": "module_page.v1.j2",
             "module_part": "module_part.v1.j2", "overview": "overview.v1.j2", "section": "section.v2.j2",
             "symbol": "symbol.v1.j2"}
_SHORT = {"file": "f", "file_part": "fp", "module": "m", "module_part": "mp", "overview": "o", "section": "s",
          "symbol": "y"}


def prompt_version() -> str:
    """The versions of all prompt templates ("f1.fp1.m1.mp1.o1" = file_page.v1, file_part.v1, ...): part of
    the writer id, so editing a template under a new version rewrites the pages."""
    versions = (name.removesuffix(".j2").rsplit(".v", 1)[1] for name in TEMPLATES.values())
    return ".".join(_SHORT[kind] + v for kind, v in zip(TEMPLATES, versions, strict=True))


@cache
def _environment() -> jinja2.Environment:
    # Prompts are plain text sent to a model, never HTML: escaping would corrupt the code they quote.
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(PROMPTS_DIR), undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False,
        autoescape=False)  # noqa: S701


def of_repository(name: str) -> str:
    """`the repository "name"`, or `the repository` when nothing names the project (prompts never name the
    checkout folder: generator/analyze/manifests.py project_name)."""
    return f'the repository "{name}"' if name else "the repository"


def render_prompt(kind: str, **values: Any) -> str:
    text = _environment().get_template(TEMPLATES[kind]).render(**values)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def user_messages(text: str) -> list[dict[str, str]]:
    # One user message: some local chat formats (Gemma's) drop system messages entirely.
    return [{"role": "user", "content": text}]
