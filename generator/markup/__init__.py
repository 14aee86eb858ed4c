"""Docstrings and the repository's documents (reST, Markdown) turned into safe Markdown and HTML."""
