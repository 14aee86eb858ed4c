"""The fitted coefficients of answer/retrieval/ranker.py (bench/fit_ranker.py writes them)."""

# fitted on the history TUNE split, L2 0.003:
# leave-one-repository-out MRR 0.707 -> 0.729, hit@5 0.852 -> 0.861
COEFFICIENTS: dict[str, float] = {
    "fused": 1.5010,
    "first": 0.7218,
    "top3": 0.5361,
    "rank:chunks": 1.9736,
    "rank:files": 1.2382,
    "rank:symbols": -0.3894,
    "rank:names": 0.5025,
    "rank:literal": 1.6621,
    "rank:phrases": 0.3339,
    "rank:substrings": -0.2213,
    "rank:paths": -0.8519,
    "many:chunks": -0.1202,
    "many:symbols": 0.1683,
    "many:substrings": 0.1951,
    "lists": -1.4136,
    "kind:test": -2.0507,
    "kind:doc": -2.3886,
    "kind:config": -1.9834,
    "kind:aux": 1.0945,
    "kind:changelog": -1.3157,
    "length": 0.1301,
    "test:asked": -0.8428,
    "lifted": 0.3855,
    "lender": -0.3810,
    "name": 0.3161,
    "folders": 0.8648,
}
