"""The answer: get_answer's pipeline (retrieve -> enrich -> synthesize -> grade -> respond), its evidence,
synthesis, confidence grading, answer cache and episodes, and the public reply models (response). Built on
retrieval; knows nothing of the front ends that serve it."""
