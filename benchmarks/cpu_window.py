"""CPU seconds of a training process and of its loader workers over a timed window (Linux /proc).

CPU time, unlike wall time, is not distorted by other processes on a shared machine; on a host whose cores are
all busy, the cores each side keeps busy show whether the training process had to compete with its workers.
"""
from __future__ import annotations

import multiprocessing
import os
import time


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds used so far by the processes `pids` (every thread of each)."""
    ticks = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


class CpuWindow:
    """Started now: this process and its live child processes (a DataLoader's workers are multiprocessing
    children); `stop(images)` gives CPU microseconds per image and cores kept busy, of each side."""

    def __init__(self) -> None:
        self.workers = [child.pid for child in multiprocessing.active_children()]
        self.wall = time.perf_counter()
        self.train, self.loader = cpu_seconds([os.getpid()]), cpu_seconds(self.workers)

    def stop(self, images: int) -> dict:
        train, loader = cpu_seconds([os.getpid()]) - self.train, cpu_seconds(self.workers) - self.loader
        wall = time.perf_counter() - self.wall
        return {"workers": len(self.workers), "train_us": train / images * 1e6, "workers_us": loader / images * 1e6,
                "train_cores": train / wall, "workers_cores": loader / wall}


def describe(cpu: dict) -> str:
    """One line of a CpuWindow's result."""
    return (f"CPU per image: training process {cpu['train_us']:,.0f} us, {cpu['workers']} loader workers "
            f"{cpu['workers_us']:,.0f} us; cores busy {cpu['train_cores']:.1f} + {cpu['workers_cores']:.1f}")
