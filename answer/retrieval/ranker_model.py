"""The fitted coefficients of answer/retrieval/ranker.py (bench/fit_ranker.py writes them)."""

# fitted on the history TUNE split, L2 0.001:
# leave-one-repository-out MRR 0.707 -> 0.731, hit@5 0.852 -> 0.861
COEFFICIENTS: dict[str, float] = {
    "fused": 1.2633,
    "first": 0.6744,
    "top3": 0.4075,
    "rank:chunks": 2.7303,
    "rank:files": 1.4958,
    "rank:symbols": -0.1146,
    "rank:names": 0.9311,
    "rank:literal": 2.2312,
    "rank:phrases": 0.9162,
    "rank:substrings": -0.2628,
    "rank:paths": -1.1617,
    "many:chunks": 0.0057,
    "many:symbols": 0.1667,
    "many:substrings": 0.7049,
    "lists": -2.9052,
    "kind:test": -2.9934,
    "kind:doc": -3.7235,
    "kind:config": -3.2206,
    "kind:aux": 0.8753,
    "kind:changelog": -2.6057,
    "length": 0.1505,
    "test:asked": -1.1080,
    "lifted": 0.4274,
    "lender": -0.4827,
    "name": 0.3963,
    "folders": 1.3177,
}
