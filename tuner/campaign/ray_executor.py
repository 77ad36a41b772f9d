"""Ray executor: one task per measurement, each declaring a whole node's CPUs (or `task_cpus`) so that two
measurements never share the hardware they measure; the driver persists each result as it arrives, and a
task whose worker dies is retried by Ray (max_retries), so a killed worker loses nothing."""

from __future__ import annotations

import random

from probes.load.workers.ray_fleet import join_cluster
from tuner.campaign.measure import build_measurer, measure_one
from tuner.campaign.store import CampaignError


def _measure_task(factory: str, options: dict, config: dict, rep: int, seed: int) -> dict:
    measurer = build_measurer(factory, options)
    try:
        return measure_one(measurer, config, rep, seed)
    finally:
        close = getattr(measurer, "close", None)
        if close:
            close()


def run_on_ray(spec, store, by_id: dict, pending: list[str], *, progress=None) -> None:
    try:
        # deferred: ray is the optional `ray` extra, imported only by this executor
        import ray
    except ImportError:
        raise CampaignError("executor: ray is not installed (pip install 'llm-factsheet[ray]')") from None
    started = False
    if not ray.is_initialized():
        if spec.ray_address:
            join_cluster(ray, spec.ray_address)  # bounded: ray.init alone retries for minutes
        else:
            ray.init(include_dashboard=False, object_store_memory=80 * 1024 * 1024, num_cpus=2)
        started = True
    try:
        cpus = spec.task_cpus or min(n["Resources"].get("CPU", 1) for n in ray.nodes() if n["Alive"])
        task = ray.remote(num_cpus=cpus, max_retries=5, retry_exceptions=False)(_measure_task)
        refs = {}
        for iid in pending:
            cid, _, rep = iid.rpartition("-r")
            seed = random.Random(f"{spec.seed}:{iid}").randrange(2**31)
            refs[task.remote(spec.measurer, spec.options, by_id[cid], int(rep), seed)] = iid
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1)
            for ref in ready:
                iid = refs.pop(ref)
                store.record(iid, ray.get(ref))
                if progress:
                    progress(iid)
    finally:
        if started:
            ray.shutdown()
