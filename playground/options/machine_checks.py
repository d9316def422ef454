"""What the opts ask of this machine, checked by the launcher before anything starts: CUDA devices, and the
optional packages an output needs. Ranks re-resolve the launcher's opts without repeating these checks."""
from __future__ import annotations

import importlib.util


def check_machine(opts: dict, problems: list[str]) -> None:
    _check_devices(opts.get("distributed", {}), problems)
    _check_packages(opts, problems)


def _check_devices(dist: dict, problems: list[str]) -> None:
    gpus = dist.get("num_gpus")
    if not isinstance(gpus, int) or gpus <= 0:
        return
    import torch  # only when GPUs are asked for
    available = torch.cuda.device_count() if torch.cuda.is_available() else 0
    first = dist.get("first_gpu_id", 0) if isinstance(dist.get("first_gpu_id"), int) else 0
    if available == 0:
        problems.append(f"opts.distributed.num_gpus: {gpus} GPUs asked for, but this machine has no CUDA device. To "
                        "train on the CPU set num_gpus to 0 and num_cpus to the number of processes, e.g. "
                        "--set distributed.num_gpus=0 --set distributed.num_cpus=1")
    elif first + gpus > available:
        problems.append(f"opts.distributed: first_gpu_id {first} + num_gpus {gpus} needs {first + gpus} CUDA devices; "
                        f"this machine has {available}")


def _check_packages(opts: dict, problems: list[str]) -> None:
    if opts.get("output", {}).get("tensorboard") is True and importlib.util.find_spec("tensorboard") is None:
        problems.append("opts.output.tensorboard: true, but the tensorboard package is not installed here; "
                        "pip install tensorboard, or set output.tensorboard to false "
                        "(--set output.tensorboard=false)")
