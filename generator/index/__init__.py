"""The search index: chunks, code-aware tokens, vectors and LanceDB tables."""
