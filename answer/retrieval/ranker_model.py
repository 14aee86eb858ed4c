"""The fitted coefficients of answer/retrieval/ranker.py (bench/fit_ranker.py writes them)."""

# fitted on the history TUNE split, L2 0.01:
# leave-one-repository-out MRR 0.707 -> 0.720, hit@5 0.852 -> 0.859
COEFFICIENTS: dict[str, float] = {
    "fused": 1.4202,
    "first": 0.7727,
    "top3": 0.7172,
    "rank:chunks": 1.2152,
    "rank:files": 0.9087,
    "rank:symbols": -0.3233,
    "rank:names": 0.2904,
    "rank:literal": 1.1843,
    "rank:phrases": 0.0945,
    "rank:substrings": -0.1203,
    "rank:paths": -0.3488,
    "many:chunks": -0.0672,
    "many:symbols": 0.1201,
    "many:substrings": 0.0340,
    "lists": -0.3827,
    "kind:test": -1.2613,
    "kind:doc": -1.2571,
    "kind:config": -0.9538,
    "kind:aux": 0.9982,
    "kind:changelog": -0.4769,
    "length": 0.1096,
    "test:asked": -0.5530,
    "lifted": 0.3359,
    "lender": -0.2722,
    "name": 0.2348,
    "folders": 0.4999,
}
