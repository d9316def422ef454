#!/usr/bin/env bash
# One GPU run, about 5 minutes, that settles why playground trained ResNet-50 at 0.84-0.88 of the plain loop on
# the 2026-12-04 host (benchmarks/README.md, "Third run on a GPU"):
#
#     benchmarks/gpu_probe.sh [OUT]        (OUT: the file for the numbers; default runs/gpu_probe.txt)
#
# Steps, most telling first, each under its own limit (seconds; the sum 330). Every gpu_train.py step prints, per
# arm, images/s and the CPU per image of the training process and of its loader workers over the timed window,
# with the cores each kept busy:
#   same-window   100  the 2026-12-04 settings (2,000 JPEGs made first, 16 s there), both samplers endless. If
#                      plain falls to playground's rate, the gap was the plain arm's finite sampler: its workers
#                      had nothing left to decode in the window, so its training process had every core
#   finite-plain   35  the plain arm as it was (--finite-plain): its workers' cores busy in the window near 0
#   workers-14     55  --workers 14 (two cores for the training process): both near the resident rate if the
#                      16 workers' load on the training process (kernel launches, pinning) was the cost
#   steady         80  --warmup 80 --steps 120: the window after the prefetched batches (16 x 4) are used,
#                      the rate a long run keeps; the CPU per image says which loader costs the host more
#   pipeline       60  data_pipeline.py with 16 workers and enough passes that each worker fills its ring
#                      before the window (the 2026-12-04 run timed 31 batches, fewer than the 96 ring slots):
#                      c and p per image, and e and g (the same two loaders feeding the GPU)
# A step that fails or runs out of time does not stop the others. PYTHON (default .venv/bin/python) as gpu_check.sh.
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
OUT=${1:-runs/gpu_probe.txt}

if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    echo "gpu_probe: torch finds no CUDA device here; nothing was run" >&2
    exit 1
fi
mkdir -p "$(dirname "$OUT")"
DATA=$(mktemp -d "${TMPDIR:-/tmp}/gpu-probe-data.XXXXXX")
trap 'rm -rf "$DATA"' EXIT
echo "gpu_probe $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $(nproc) CPU cores; load average" \
     "$(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT"

. benchmarks/gpu_steps.sh     # step NAME SECONDS COMMAND..., summary

TRAIN=("$PY" benchmarks/gpu_train.py --images 2000 --batch 128 --data "$DATA" --arm-timeout 50)
step same-window 100 "${TRAIN[@]}" --steps 30 --warmup 5
step finite-plain 35 "${TRAIN[@]}" --steps 30 --warmup 5 --finite-plain --arms plain
step workers-14 55 "${TRAIN[@]}" --steps 30 --warmup 5 --workers 14 --arms plain,playground
step steady 80 "${TRAIN[@]}" --steps 120 --warmup 80 --arms plain,playground
step pipeline 60 "$PY" benchmarks/data_pipeline.py --images 2000 --passes 8 --repeat 1 --data "$DATA"
summary
exit "$FAILED"
