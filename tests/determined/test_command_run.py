"""The runner of an entrypoint command (playground.determined.command_run): torchrun's environment on N
ranks, exit codes, a failing rank stopping the others, restarts with det_cluster.json rewritten, SIGTERM
passed on, the run folder's contract."""
from __future__ import annotations

import json
import signal
import sys
import textwrap
import time

from playground.determined.command_run import ON_PATH
from playground.determined.entrypoint import TRIAL_MAIN, entrypoint_command as normalized_command
from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_STOPPED, EXIT_USAGE
from tests.determined.det_runs import cluster_info, kill_group, lines, run, start, wait_for


# Determined's launch layer prefix: the command once per slot (without it, once per node: test_launch_layer.py)
LAUNCHED = ["python3", "-m", "determined.launch.torch_distributed"]

# a Core API script's start: the latest checkpoint it is given, printed; its body follows, inside core.init()
LATEST = """
        import os, signal
        import determined as det
        info = det.get_cluster_info()
        print("LATEST", info.latest_checkpoint)
        with det.core.init() as core_context:"""


def script(tmp_path, text: str, name: str = "main.py"):
    context = tmp_path / "context"
    context.mkdir(exist_ok=True)
    (context / name).write_text(textwrap.dedent(text))
    return context


def test_each_rank_gets_torchruns_variables_and_determined_first_on_its_path(tmp_path):
    context = script(tmp_path, """
        import json, os, sys
        keys = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
                "MASTER_ADDR", "PLAYGROUND_DETERMINED"]
        print("ENV " + json.dumps({k: os.environ[k] for k in keys} | {"path": os.environ["PYTHONPATH"],
                                  "cwd": os.getcwd(), "port": os.environ["MASTER_PORT"]}))
    """)
    run_dir = tmp_path / "run"
    code, output = run(LAUNCHED + ["python3", "main.py"], context, run_dir, cluster_info(), slots=2)
    assert code == EXIT_DONE, output
    seen = sorted((json.loads(line.split("ENV ", 1)[1]) for line in output.splitlines() if "ENV " in line),
                  key=lambda env: env["RANK"])
    assert [(e["RANK"], e["LOCAL_RANK"], e["WORLD_SIZE"], e["LOCAL_WORLD_SIZE"], e["GROUP_RANK"],
             e["GROUP_WORLD_SIZE"], e["MASTER_ADDR"]) for e in seen] == [
        ("0", "0", "2", "2", "0", "1", "127.0.0.1"), ("1", "1", "2", "2", "0", "1", "127.0.0.1")]
    assert seen[0]["port"] == seen[1]["port"]
    assert all(e["path"].split(":")[:2] == [ON_PATH, str(context)] and e["cwd"] == str(context) for e in seen)
    assert seen[0]["PLAYGROUND_DETERMINED"] == str(run_dir / "det_cluster.json")
    log = (run_dir / "train.log").read_text()
    assert "[rank 1] ENV " in log and "\nENV " in "\n" + log
    opts = json.loads((run_dir / "opts.json").read_text())
    assert opts["determined"] is True and "epoch_iter" not in opts["opts"]
    assert opts["opts"]["hparams"] == cluster_info()["hparams"]


def test_usage_errors_exit_2_before_anything_runs(tmp_path, capsys):
    from playground.determined.command_run import run_command
    assert run_command(["python3", "x.py"], str(tmp_path / "nowhere"), str(tmp_path / "run"), {}, 1, 0, False) == EXIT_USAGE
    assert "context directory" in capsys.readouterr().err
    assert run_command([], str(tmp_path), str(tmp_path / "run"), {}, 1, 0, False) == EXIT_USAGE
    assert run_command(["python3"], str(tmp_path), str(tmp_path / "run"), {}, 0, 0, False) == EXIT_USAGE
    assert "slots_per_trial" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    code, output = run(["no-such-program-here"], tmp_path, tmp_path / "run", cluster_info())
    assert code == EXIT_USAGE and "cannot start it" in output
    context = script(tmp_path, "import argparse; argparse.ArgumentParser().parse_args()\n")
    code, output = run(["python3", "main.py", "--no-such-flag"], context, tmp_path / "run2", cluster_info())
    assert code == EXIT_USAGE and "unrecognized arguments" in output


def test_a_failing_rank_stops_the_others_and_the_run_fails_naming_it(tmp_path):
    context = script(tmp_path, """
        import os, time
        if os.environ["RANK"] == "1":
            raise SystemExit("rank 1 gives up")
        time.sleep(600)
    """)
    code, output = run(LAUNCHED + ["python3", "main.py"], context, tmp_path / "run", cluster_info(), slots=2)
    assert code == EXIT_FAILED
    assert "rank 1 gives up" in output and "playground: rank 1 (pid" in output
    assert "it stored no checkpoint (a re-run starts afresh)" in output and "are kept" not in output


def test_failures_are_restarted_up_to_max_restarts_with_the_latest_checkpoint_given_again(tmp_path):
    context = script(tmp_path, LATEST + """
            if info.latest_checkpoint is None:
                with core_context.checkpoint.store_path({"steps_completed": 1}) as (path, storage_id):
                    (path / "weights").write_text("1")
                raise RuntimeError("first attempt fails after its checkpoint")
            with core_context.checkpoint.restore_path(info.latest_checkpoint) as path:
                print("RESTORED", (path / "weights").read_text(), core_context.checkpoint.get_metadata(info.latest_checkpoint))
    """)
    run_dir = tmp_path / "run"
    code, output = run(["python3", "main.py"], context, run_dir, cluster_info(), max_restarts=1)
    assert code == EXIT_DONE, output
    storage_id = lines(run_dir / "det_checkpoints.jsonl")[0]["storage_id"]
    assert "LATEST None" in output and f"LATEST {storage_id}" in output
    assert "RESTORED 1 {'steps_completed': 1}" in output
    ended = [a for a in lines(run_dir / "attempts.jsonl") if "end" in a]
    assert [(a["attempt"], a["exit_code"], a["restart_consumed"]) for a in ended] == [(1, 1, True), (2, 0, False)]
    code, output = run(["python3", "main.py"], context, tmp_path / "run2", cluster_info(), max_restarts=0)
    assert code == EXIT_FAILED and "first attempt fails" in output
    assert not (tmp_path / "run2" / "attempts.jsonl").exists()      # one attempt: a sweep's agent keeps that file


def test_sigterm_is_passed_on_and_a_script_that_ignores_the_core_api_ends_stopped(tmp_path):
    context = script(tmp_path, """
        import time
        print("STARTED", flush=True)
        time.sleep(600)
    """)
    process = start(LAUNCHED + ["python3", "main.py"], context, tmp_path / "run", cluster_info(), slots=2)
    try:
        wait_for(lambda: (tmp_path / "run" / "train.log").exists() and
                 (tmp_path / "run" / "train.log").read_text().count("STARTED") == 2, process, "two ranks started")
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=120)
    finally:
        kill_group(process)
    assert process.returncode == EXIT_STOPPED, output


def test_a_second_sigterm_stops_ranks_that_do_not_stop_on_the_first(tmp_path):
    context = script(tmp_path, """
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("STARTED", flush=True)
        time.sleep(600)
    """)
    process = start(["python3", "main.py"], context, tmp_path / "run", cluster_info())
    try:
        wait_for(lambda: "STARTED" in ((tmp_path / "run" / "train.log").read_text()
                                       if (tmp_path / "run" / "train.log").exists() else ""), process, "the rank started")
        process.send_signal(signal.SIGTERM)
        time.sleep(1)
        assert process.poll() is None            # the rank ignores it: still running
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=120)
    finally:
        kill_group(process)
    assert process.returncode == EXIT_STOPPED, output


def test_determineds_launch_layer_and_python_become_this_interpreter():
    python = sys.executable
    assert normalized_command(["python3", "train.py", "--epochs", "1"]) == [python, "train.py", "--epochs", "1"]
    assert normalized_command(["python3", "-m", "determined.launch.torch_distributed", "python3", "m.py"]) == \
        [python, "m.py"]
    assert normalized_command(["python3", "-m", "determined.launch.torch_distributed", "--trial", "model_def:Trial"]) \
        == [python, "-m", TRIAL_MAIN, "model_def:Trial"]
    assert normalized_command(["python3", "-m", "determined.launch.torch_distributed", "--", "python", "m.py"]) == \
        [python, "m.py"]
    assert normalized_command(["sh", "run.sh"]) == ["sh", "run.sh"]


def test_a_checkpoint_whose_write_was_killed_never_looks_complete(tmp_path):
    context = script(tmp_path, LATEST + """
            if info.latest_checkpoint is None:
                with core_context.checkpoint.store_path({"steps_completed": 1}) as (path, storage_id):
                    (path / "weights").write_text("complete")
                with core_context.checkpoint.store_path({"steps_completed": 2}) as (path, storage_id):
                    (path / "weights").write_text("half")
                    os.kill(os.getpid(), signal.SIGKILL)
    """)
    run_dir = tmp_path / "run"
    code, output = run(["python3", "main.py"], context, run_dir, cluster_info())
    assert code == EXIT_FAILED and "killed by SIGKILL" in output
    entries = lines(run_dir / "det_checkpoints.jsonl")
    assert len(entries) == 1
    assert [p.name.startswith(".partial-") for p in sorted((run_dir / "checkpoints").iterdir())].count(True) == 1
    code, output = run(["python3", "main.py"], context, run_dir, cluster_info())
    assert code == EXIT_DONE and f"LATEST {entries[0]['storage_id']}" in output


def test_a_process_that_reports_nothing_through_the_core_api_leaves_metrics_jsonl_alone(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    written = '{"index": 0, "kind": "epoch", "iteration": 4, "loss": 1.0}\n'    # as playground's trainer writes it
    (run_dir / "metrics.jsonl").write_text(written)
    context = script(tmp_path, LATEST + """
            print("PREEMPT", core_context.preempt.should_preempt())
    """)
    code, output = run(["python3", "main.py"], context, run_dir, cluster_info())
    assert code == EXIT_DONE and "PREEMPT False" in output, output
    assert (run_dir / "metrics.jsonl").read_text() == written
