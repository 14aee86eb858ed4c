"""Retrieval: the question parsed into what it names (query), the search tiers and their fusion (tiers, bm25),
get_context's packing, scope and path handling, and the evaluation that scores file rankings. The lowest layer
of answer/: it reads the index and imports nothing from answering or serving."""
