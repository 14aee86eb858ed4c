"""Which language a path is written in, by file name and extension."""

from __future__ import annotations

from pathlib import PurePosixPath

# language id -> the tree-sitter-language-pack grammar name
GRAMMARS: dict[str, str] = {
    "python": "python",
    "javascript": "javascript",
    "typescript": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "csharp": "csharp",
    "ruby": "ruby",
    "php": "php",
    "kotlin": "kotlin",
}

_EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".kt": "kotlin", ".kts": "kotlin",
    ".md": "markdown", ".markdown": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".toml": "toml", ".cfg": "ini", ".ini": "ini",
    ".yaml": "yaml", ".yml": "yaml",
    ".json": "json",
    ".sh": "shell", ".bash": "shell",
    ".html": "html", ".css": "css",
    ".sql": "sql",
}

_FILENAMES: dict[str, str] = {
    "README": "text", "LICENSE": "text", "CHANGES": "text", "AUTHORS": "text",
    "Makefile": "make", "Dockerfile": "docker",
}

DOC_LANGUAGES = frozenset({"markdown", "rst", "text"})


def detect_language(path: str) -> str | None:
    """Return the language id for `path`, or None when it is not a kind of file we read."""
    p = PurePosixPath(path)
    if p.name in _FILENAMES:
        return _FILENAMES[p.name]
    return _EXTENSIONS.get(p.suffix.lower())


def is_parsed(language: str | None) -> bool:
    """True when tree-sitter extracts symbols for this language."""
    return language in GRAMMARS
