"""Feature models: exact count and its time, t-wise sampling time and size, coverage per sample size.

    python bench/features_bench.py   (writes bench/features_results.txt)

Baseline in the same process: uniform samples of the same size as the t-wise one (coverage of valid pairs).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tuner.features import sampling  # noqa: E402
from tuner.features.configs import load_bundled  # noqa: E402
from tuner.features.space import FeatureSpace  # noqa: E402


def main() -> None:
    lines = ["# python bench/features_bench.py", ""]
    for name in ("generation_config", "vllm_serving"):
        t0 = time.perf_counter()
        model = load_bundled(name)
        space = FeatureSpace(model)
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        exact = space.count()
        count_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        walk = space.count_walk()
        walk_s = time.perf_counter() - t0
        lib = f"{model.root.attributes.get('library')} {model.root.attributes.get('library_version')}"
        lines.append(f"## {name} ({lib})")
        lines.append(
            f"features {len(space.names)}, constraints {len(model.constraints)}, dead {space.dead_features()}"
        )
        lines.append(
            f"valid configurations {exact} (dd count {count_s * 1000:.1f} ms; own walk {walk} in "
            f"{walk_s * 1000:.1f} ms; parse + BDD build {build_s:.2f} s, {len(space.root)} nodes)"
        )
        for t in (2, 3) if name == "vllm_serving" else (2,):
            t0 = time.perf_counter()
            valid = sampling.valid_tuples(space, t)
            tuples_s = time.perf_counter() - t0
            for seed in (0, 1, 2):
                tw = sampling.twise(space, t, seed)
                lines.append(
                    f"{t}-wise seed {seed}: {len(tw.configs)} configurations in {tw.seconds:.2f} s, "
                    f"coverage of {len(valid)} valid {t}-tuples {sampling.coverage(space, tw.configs, t, valid):.4f}"
                    f" (valid tuples enumerated in {tuples_s:.2f} s)"
                )
            n_tw = len(sampling.twise(space, t, 0).configs)
            for n in sorted({5, 10, 20, n_tw, 2 * n_tw, 4 * n_tw}):
                covs = [
                    sampling.coverage(space, sampling.uniform(space, n, s).configs, t, valid)
                    for s in (0, 1, 2)
                ]
                un = sampling.uniform(space, n, 0)
                lines.append(
                    f"  uniform n={n}: {t}-wise coverage {min(covs):.4f}-{max(covs):.4f} (3 seeds), "
                    f"sampled in {un.seconds * 1000:.1f} ms"
                )
        lines.append("")
    out = Path(__file__).with_name("features_results.txt")
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
