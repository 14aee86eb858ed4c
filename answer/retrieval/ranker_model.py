"""The fitted coefficients of answer/retrieval/ranker.py (bench/fit_ranker.py writes them)."""

# fitted on the history TUNE split, L2 0.003:
# 21 repositories; leave-one-repository-out MRR 0.652 -> 0.665, hit@5 0.795 -> 0.808
COEFFICIENTS: dict[str, float] = {
    "fused": 1.0144,
    "first": 0.6494,
    "top3": 0.4482,
    "rank:chunks": 1.7973,
    "rank:files": 0.8428,
    "rank:symbols": 0.3713,
    "rank:names": 0.2742,
    "rank:literal": 1.7723,
    "rank:phrases": 0.4041,
    "rank:substrings": 0.1501,
    "rank:paths": -0.6220,
    "many:chunks": -0.3257,
    "many:symbols": 0.3886,
    "many:substrings": 0.1535,
    "lists": -1.5533,
    "kind:test": -2.0739,
    "kind:doc": -2.1717,
    "kind:config": -1.6147,
    "kind:aux": 0.6343,
    "kind:changelog": -1.0409,
    "length": 0.2883,
    "test:asked": -0.4618,
    "lifted": 0.3053,
    "lender": -0.4155,
    "name": 0.4858,
    "folders": 0.8522,
}
