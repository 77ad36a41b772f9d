"""One measurement of one configuration, the same on every executor: build the measurer a campaign names,
measure a configuration once and shape its row. Both the runner (locally) and the Ray executor (in a
task) call these, so neither imports the other for them."""

from __future__ import annotations

import importlib
import platform
import time

from tuner.campaign.latency import LATENCY
from tuner.campaign.store import CampaignError


def build_measurer(factory: str, options: dict):
    mod, _, attr = factory.partition(":")
    try:
        return getattr(importlib.import_module(mod), attr)(**options)
    except (ImportError, AttributeError, ValueError) as exc:
        raise CampaignError(f"measurer: cannot build '{factory}': {exc}") from None


RECORDS = "records"


def measure_one(measurer, config: dict, rep: int, seed: int) -> dict:
    t0 = time.perf_counter()
    figures = dict(measurer.measure(config["kwargs"], seed=seed))
    row = {
        "config_id": config["id"],
        "repetition": rep,
        "node": platform.node(),
        "seconds": round(time.perf_counter() - t0, 4),
        "figures": figures,
    }
    # A measurer may return the raw records its figures rest on (e.g. per-task accuracy verdicts) under
    # RECORDS: kept in the measurement's file, out of the table.
    records = figures.pop(RECORDS, None)
    if records is not None:
        row[RECORDS] = records
    latency = figures.pop(
        LATENCY, None
    )  # the request records the latency figures rest on (the store files them)
    if latency is not None:
        row[LATENCY] = latency
    return row
