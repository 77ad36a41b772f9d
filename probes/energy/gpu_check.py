"""Device check: NVML total-energy counter against integrated NVML power over the same window, under load.

    python -m probes.energy.gpu_check --seconds 30 --device 0

Prints one JSON object; the load is a CUDA matmul loop (torch) so no model weights are needed.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable

import numpy as np

from probes.core.measurement import Model
from probes.energy.nvml import NvmlBinding, NvmlEnergyChannel, NvmlPowerChannel, PynvmlBinding, discover_gpus


class CounterCheck(Model):
    device: str
    window_s: float
    counter_j: float
    integrated_power_j: float
    ratio_integrated_to_counter: float
    samples: int
    sample_interval_s: float


def compare(
    nvml: NvmlBinding,
    index: int,
    seconds: float,
    interval_s: float,
    *,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> CounterCheck:
    """Read the counter and the power of one device at the same instants for `seconds`."""
    nvml.init()
    gpu = discover_gpus(nvml)[index]
    counter = NvmlEnergyChannel(nvml, index, gpu.component)
    power = NvmlPowerChannel(nvml, index, gpu.component)
    times, counted, integrated = [], [], []
    t_end = clock() + seconds
    while True:
        t = clock()
        times.append(t)
        counted.append(counter.read(t))
        integrated.append(power.read(t))
        if t >= t_end:
            break
        sleep(interval_s)
    counter_j = counted[-1] - counted[0]
    power_j = integrated[-1] - integrated[0]
    return CounterCheck(
        device=gpu.component.label,
        window_s=times[-1] - times[0],
        counter_j=counter_j,
        integrated_power_j=power_j,
        ratio_integrated_to_counter=power_j / counter_j if counter_j else float("nan"),
        samples=len(times),
        sample_interval_s=float(np.diff(times).mean()) if len(times) > 1 else 0.0,
    )


def _matmul_load(device: int, stop: threading.Event) -> None:
    # deferred: torch (CUDA) is needed only for the load on a GPU host; the comparison is tested without it
    import torch

    a = torch.randn(8192, 8192, device=f"cuda:{device}", dtype=torch.float16)
    while not stop.is_set():
        (a @ a).sum().item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of load before the window")
    args = parser.parse_args()
    stop = threading.Event()
    load = threading.Thread(target=_matmul_load, args=(args.device, stop), daemon=True)
    load.start()
    time.sleep(args.warmup)
    try:
        result = compare(PynvmlBinding(), args.device, args.seconds, args.interval)
    finally:
        stop.set()
        load.join()
    print(result.model_dump_json(indent=1))


if __name__ == "__main__":
    main()
