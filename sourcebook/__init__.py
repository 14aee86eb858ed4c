"""sourcebook: a repository turned into a wiki and a search index that answers agents' questions."""

__version__ = "0.1.0"
