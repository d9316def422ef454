"""A trial program that hangs, for the hung-trial tests: on the attempts up to the base opts'
`model_param.hang_attempts` (default: every attempt) it prints one line and then makes no progress, as
`model_param.hang_mode` says: `ignore_term` sleeps for ever and ignores SIGTERM (only SIGKILL ends it), `handle_term`
sleeps and exits 75 on SIGTERM, `chatty` prints a line every 0.1 s for ever and exits 75 on SIGTERM (never stalled,
only too long). Later attempts are the ordinary contract trial (contract_trial.py), so a retried trial completes;
so are the trials whose `--set model_param.base_learning_rate` is not in `model_param.hang_learning_rates`, when
that is given (a sweep of hanging and ordinary trials).
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

CONTRACT = Path(__file__).resolve().parents[1] / "contract_trial.py"


def main() -> None:
    args = sys.argv[1:]
    with open(args[args.index("--parameters-file") + 1], encoding="utf-8") as handle:
        param = json.load(handle)["opts"]["model_param"]
    attempt = int(os.environ.get("PLAYGROUND_ATTEMPT", "1"))
    lr = next((json.loads(args[i + 1].partition("=")[2]) for i, arg in enumerate(args)
               if arg == "--set" and args[i + 1].startswith("model_param.base_learning_rate=")), None)
    if (param.get("hang_attempts") is not None and attempt > int(param["hang_attempts"])) or (
            "hang_learning_rates" in param and lr not in param["hang_learning_rates"]):
        os.execv(sys.executable, [sys.executable, str(CONTRACT), *args])
    mode = param.get("hang_mode", "ignore_term")
    if mode == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(75))
    print(f"hanging trial: attempt {attempt}, pid {os.getpid()}, {mode}", flush=True)
    while True:
        time.sleep(0.1)
        if mode == "chatty":
            print("still busy", flush=True)


if __name__ == "__main__":
    main()
