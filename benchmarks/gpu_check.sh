#!/usr/bin/env bash
# Everything that needs a CUDA GPU, in one command of at most 9 minutes: the first thing to run when a GPU is lent.
#
#     benchmarks/gpu_check.sh [OUT]        (OUT: the file for the numbers; default runs/gpu_check.txt)
#
# Steps, each under its own time limit (seconds), the sum 525:
#   gpu-tests     100   the tests marked gpu (pytest -m gpu, over the files that hold the mark: collecting the
#                       whole suite would need every optional extra)
#   parity-bf16    45   benchmarks/parity.py --case features on the GPU: bf16 autocast, accumulation, clipping, EMA
#   parity-fp16    45   the same with fp16 and a gradient scaler in both loops
#   parity-fp32    90   the plain case on the GPU (with PyTorch Lightning beside it when the bench extra is there:
#                       its start-up on a fresh machine took the plain case past 45 s once)
#   gpu-train     185   benchmarks/gpu_train.py: ResNet-50 on JPEGs from an LMDB, playground against a plain loop
#                       (the three arms took about 60 s on an H200 host; making the 2000 JPEGs took 78 s there
#                       in one process, now one process per core)
#   data-pipeline  60   benchmarks/data_pipeline.py, whose GPU section (e, g, f) runs only here
# Every step's output goes to OUT, then a summary of exit codes and seconds. A step that fails or runs out of
# time does not stop the others; the exit code is 1 when any did. Without a CUDA device it says so and exits 1
# at once. PYTHON (default .venv/bin/python) is the interpreter.
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
OUT=${1:-runs/gpu_check.txt}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu_check: no CUDA device here (nvidia-smi finds none); nothing was run" >&2
    exit 1
fi
if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    echo "gpu_check: nvidia-smi sees a GPU but torch does not (torch.cuda.is_available() is False); nothing was run" >&2
    exit 1
fi

mkdir -p "$(dirname "$OUT")"
DATA=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-data.XXXXXX")     # the JPEGs and LMDB, made once for both benchmarks
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-work.XXXXXX")
trap 'rm -rf "$DATA" "$WORK"' EXIT
{
    echo "gpu_check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname); $(nproc) CPU cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    "$PY" -c 'import torch; print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name()}")'
} | tee "$OUT"

. benchmarks/gpu_steps.sh     # step NAME SECONDS COMMAND..., summary

PARITY=(benchmarks/parity.py --device cuda --trials 1 --epochs 3 --samples 2048 --batch 64 --workdir "$WORK")
PEERS=()
"$PY" -c 'import pytorch_lightning' >/dev/null 2>&1 && PEERS=(--peers)

mapfile -t GPU_TESTS < <(grep -rl --include='test_*.py' 'mark.gpu' tests | sort)
step gpu-tests 100 "$PY" -m pytest -q -m gpu -n 4 -p no:cacheprovider -p no:benchmark "${GPU_TESTS[@]}"
step parity-bf16 45 "$PY" "${PARITY[@]}" --case features --precision bf16
step parity-fp16 45 "$PY" "${PARITY[@]}" --case features --precision fp16
step parity-fp32 90 "$PY" "${PARITY[@]}" "${PEERS[@]}"
step gpu-train 185 "$PY" benchmarks/gpu_train.py --images 2000 --batch 128 --steps 30 --warmup 5 --arm-timeout 60 --data "$DATA"
step data-pipeline 60 "$PY" benchmarks/data_pipeline.py --images 2000 --repeat 1 --data "$DATA"

summary
exit "$FAILED"
