"""Finished trials made without running them, for scale tests and `benchmarks/sweep.py --scale`.

`add_finished_trials` copies a real finished trial folder of a contract-trial sweep (tests/playground/sweeps/
contract_trial.py) into `count` new ones, numbered on from the highest, each with its own learning rate: the
files the agent leaves (trial.json, attempts.jsonl, claim-1) and the contract program's (opts.json,
metrics.jsonl with its full test passes, results.json, contract_times.json), values from the contract's curve.
The study learns of them through `sweep summary --rebuild`, as it would of folders whose journal was lost.
"""
from __future__ import annotations

import json
import os
import random

from tests.playground.sweeps.contract_trial import curve

KEY = "model_param.base_learning_rate"


def add_finished_trials(sweep_dir: str, count: int, seed: int = 0) -> list[str]:
    """`count` complete trials after the highest-numbered one of `sweep_dir`, which is their template; their ids."""
    trials = os.path.join(sweep_dir, "trials")
    template = max((_read_json(os.path.join(trials, t, "trial.json")) for t in os.listdir(trials)),
                   key=lambda r: r.get("number", -1))
    source = os.path.join(trials, template["id"])
    opts = _read_json(os.path.join(source, "opts.json"))
    attempts = [json.loads(line) for line in open(os.path.join(source, "attempts.jsonl"), encoding="utf-8")]
    claim = open(os.path.join(source, "claim-1"), encoding="utf-8").read()
    epochs = int(opts["opts"]["epoch_iter"]["num_epochs"])
    samples_per_epoch = template["last_reported_step"] // epochs
    rng = random.Random(seed)
    made = []
    for number in range(template["number"] + 1, template["number"] + 1 + count):
        trial_id = f"t{number:04d}"
        lr = 10 ** rng.uniform(-3, 0)
        folder = os.path.join(trials, trial_id)
        os.makedirs(folder)
        opts["opts"]["model_param"]["base_learning_rate"] = lr
        _write(folder, "opts.json", json.dumps(opts))
        records = []
        for epoch in range(epochs):
            loss = curve(lr, 0.0, epoch + 1)
            for kind in ("interval", "epoch"):
                records.append({"index": len(records), "kind": kind, "epoch": epoch, "iteration": 4 * (epoch + 1),
                                "epochs": float(epoch + 1), "lr": lr, "wall_time": 0.0, "test_loss": loss,
                                "test_accuracy_top1": 1.0 - loss / 4.0})
        _write(folder, "metrics.jsonl", "".join(json.dumps(r) + "\n" for r in records))
        _write(folder, "results.json", json.dumps({"metrics": {"test_loss": [r["test_loss"] for r in records]}}))
        start = attempts[0]["start"] + number
        _write(folder, "contract_times.json", json.dumps({"began": start + 0.2, "finished": start + 0.3}))
        lines = [{**a, "start": start, **({"end": start + 0.4} if "end" in a else {})} for a in attempts]
        _write(folder, "attempts.jsonl", "".join(json.dumps(line) + "\n" for line in lines))
        _write(folder, "claim-1", claim)
        record = {**template, "id": trial_id, "number": number, "params": {**template["params"], KEY: lr},
                  "values": [records[-1]["test_loss"]], "last_reported_step": samples_per_epoch * epochs}
        _write(folder, "trial.json", json.dumps(record, indent=2) + "\n")
        made.append(trial_id)
    return made


def _read_json(path: str) -> dict:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def _write(folder: str, name: str, text: str) -> None:
    with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
        handle.write(text)
