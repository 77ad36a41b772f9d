"""Run a campaign: plan it once, then measure what is missing, locally or on Ray, persisting each result."""

from __future__ import annotations

import hashlib
import json
import random
import time
from pathlib import Path

from probes.load.workers.ray_fleet import check_address
from tuner.campaign.measure import build_measurer, measure_one
from tuner.campaign.ray_executor import run_on_ray
from tuner.campaign.spec import CampaignSpec
from tuner.campaign.store import CampaignError, CampaignStore
from tuner.features import sampling
from tuner.features.configs import BUNDLED, kwargs_of, library_of, load_bundled
from tuner.features.space import FeatureSpace
from tuner.features.uvl import UVLError, parse_uvl


def load_model(ref: str):
    try:
        return load_bundled(ref) if ref in BUNDLED else parse_uvl(Path(ref).read_text(encoding="utf-8"))
    except (UVLError, OSError) as exc:
        raise CampaignError(f"feature_model: {ref}: {exc}") from None


def config_id(features) -> str:
    return hashlib.sha256("\n".join(sorted(features)).encode()).hexdigest()[:12]


def plan_configs(spec: CampaignSpec) -> tuple[list[dict], dict]:
    model = load_model(spec.feature_model)
    space = FeatureSpace(model)
    smp = (
        sampling.twise(space, spec.sample.t, spec.sample.seed)
        if spec.sample.method == "twise"
        else sampling.uniform(space, spec.sample.n, spec.sample.seed)
    )
    chosen = [(c, smp.method) for c in smp.configs]
    if spec.extra_uniform:
        chosen += [(c, "uniform") for c in sampling.uniform(space, spec.extra_uniform, spec.seed + 1).configs]
    seen, configs = set(), []
    for c, how in chosen:
        cid = config_id(c)
        if cid not in seen:
            seen.add(cid)
            configs.append(
                {"id": cid, "features": sorted(c), "kwargs": kwargs_of(model, c), "sampled_by": how}
            )
    if spec.max_configs:
        configs = configs[: spec.max_configs]
    lib, ver = library_of(model)
    meta = {
        "feature_model": spec.feature_model,
        "library": f"{lib} {ver}",
        "features": len(space.names),
        "constraints": len(model.constraints),
        "valid_configurations": space.count(),
        "sampling": {
            "method": smp.method,
            "t": smp.t,
            "seed": smp.seed,
            "n": len(smp.configs),
            "seconds": round(smp.seconds, 3),
            "coverage_2wise": round(sampling.coverage(space, [set(c["features"]) for c in configs], 2), 4),
        },
        "measurer": spec.measurer,
        "options": spec.options,
        "executor": spec.executor,
    }
    return configs, meta


def run_campaign(spec: CampaignSpec, root: Path, *, progress=None) -> CampaignStore:
    """Measure every pending (configuration, repetition); an interrupted run resumes where it stopped."""
    if spec.executor == "ray" and spec.ray_address:
        check_address(spec.ray_address)  # before the campaign's folder is made: refused, nothing written
    store = CampaignStore(root)
    # Locally the measurer is built first: one it refuses (e.g. an accuracy task id the dataset lacks) leaves
    # no plan behind, which a rerun would keep with the refused options in it.
    measurer = build_measurer(spec.measurer, spec.options) if spec.executor != "ray" else None
    t0, before, ended = time.perf_counter(), None, "interrupted"
    try:
        if (root / "plan.json").exists():
            plan = store.plan()
        else:
            configs, meta = plan_configs(spec)
            plan = store.create(configs, spec.repetitions, spec.seed, meta, spec.order)
        by_id = {c["id"]: c for c in plan["configs"]}
        pending = store.pending()
        before = len(store.done())
        t0 = time.perf_counter()
        if measurer is None:
            run_on_ray(spec, store, by_id, pending, progress=progress)
        else:
            for iid in pending:
                cid, _, rep = iid.rpartition("-r")
                seed = random.Random(f"{spec.seed}:{iid}").randrange(2**31)
                store.record(iid, measure_one(measurer, by_id[cid], int(rep), seed))
                if progress:
                    progress(iid)
        ended = "complete"
    finally:
        close = getattr(measurer, "close", None)
        if close:
            close()
        if before is not None:  # a run stopped by an exception (a budget, Ctrl-C) still counts its time
            run = {
                "executor": spec.executor,
                "measured": len(store.done()) - before,
                "wall_s": round(time.perf_counter() - t0, 3),
                "ended": ended,
            }
            with open(store.root / "runs.jsonl", "a", encoding="utf-8") as fh:  # append-only log of runs
                fh.write(json.dumps(run) + "\n")
    store.save_table()
    return store
