import numpy as np
import pandas as pd

from tuner.predictor.learn import cross_validate


def test_lasso_pairs_on_log_learns_an_effect_that_multiplies_only_together():
    # y = 10 * 2^a * 3^b * 4^(a*c): the a x c product is invisible to an additive model of log(y)
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.integers(0, 2, size=(80, 6)), columns=[f"f:x{i}" for i in range(6)])
    a, b, c = X["f:x0"], X["f:x1"], X["f:x2"]
    y = 10 * 2.0**a * 3.0**b * 4.0 ** (a * c) * np.exp(rng.normal(0, 0.02, 80))
    pairs = cross_validate(X, y, "lasso_pairs_log", 5, 0)["r2"]["mean"]
    additive = cross_validate(X, y, "ridge_log", 5, 0)["r2"]["mean"]
    assert pairs > 0.98
    assert additive < 0.9
