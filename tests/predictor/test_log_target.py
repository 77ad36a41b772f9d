"""Models learned on log(y): a product of the options' effects (tokens x beams x cache) is a sum in log space."""

import numpy as np
import pandas as pd

from tuner.predictor.learn import cross_validate, make_model


def test_log_target_learns_a_product_that_ridge_misses():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.integers(0, 2, size=(60, 4)), columns=[f"f:{i}" for i in range(4)])
    y = pd.Series(100 * np.exp(X.to_numpy() @ np.array([1.4, 1.0, 0.7, 0.0])), name="e2el_ms")
    plain = cross_validate(X, y, "ridge", k=5)["r2"]["mean"]
    logged = cross_validate(X, y, "ridge_log", k=5)["r2"]["mean"]
    assert logged > 0.95 and logged > plain + 0.05, (logged, plain)  # additive in log space; scored on y
    pred = make_model("random_forest_log").fit(X, y).predict(X)
    assert (pred > 0).all() and np.allclose(pred, y, rtol=0.05)
