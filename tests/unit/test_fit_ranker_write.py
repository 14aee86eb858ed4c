import importlib.util

import numpy as np

from answer.retrieval.ranker import FEATURES
from bench import fit_ranker


def _load(path):
    spec = importlib.util.spec_from_file_location("written_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_writing_one_coefficient_set_keeps_the_other(tmp_path, monkeypatch):
    model = tmp_path / "ranker_model.py"
    monkeypatch.setattr(fit_ranker, "MODEL", model)
    model.write_text('"""Coefficients."""\n\n# the plain model\nCOEFFICIENTS: dict[str, float] = {\n'
                     '    "name": 1.0,\n}\n', encoding="utf-8")
    w = np.zeros(len(FEATURES))
    w[FEATURES.index("rank:semantic")] = 2.0
    fit_ranker.write(w, 0.001, "a note", "default")
    written = _load(model)
    assert written.COEFFICIENTS == {"name": 1.0}
    assert written.SEMANTIC_COEFFICIENTS == {"rank:semantic": 2.0}
    assert "# the plain model" in model.read_text(encoding="utf-8")
    w[FEATURES.index("rank:semantic")] = 0.0
    w[FEATURES.index("folders")] = -0.5
    fit_ranker.write(w, 0.003, "another note", "none")  # the plain set rewritten, the semantic one kept
    written = _load(model)
    assert written.COEFFICIENTS == {"folders": -0.5}
    assert written.SEMANTIC_COEFFICIENTS == {"rank:semantic": 2.0}
    assert "# the plain model" not in model.read_text(encoding="utf-8")
