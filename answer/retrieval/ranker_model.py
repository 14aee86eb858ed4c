"""The fitted coefficients of answer/retrieval/ranker.py (bench/fit_ranker.py writes them)."""

COEFFICIENTS: dict[str, float] = {}
