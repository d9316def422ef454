"""Run many experiments: a upf file of parameter sets, a grid, or a hyperparameter search, each trial a run.

  playground sweep run SPEC [--workers N]            run (or resume) a sweep; SPEC is JSON or YAML
  playground sweep run --upf FILE --base OPTS         CANDLE's upf: one JSON object per line, run in parallel
  playground sweep agent DIR [--workers N]            one more agent on an existing sweep (any host, Slurm task)
  playground sweep preview SPEC                       the planned grid or ASHA brackets, nothing run
  playground sweep status DIR | summary DIR [--rebuild] | plots DIR
  playground sweep pause DIR | resume DIR              stop running trials after a checkpoint / allow them again
  playground sweep continue DIR ID --set KEY=VALUE     a new trial continuing trial ID from its latest checkpoint
  playground sweep submit DIR [--spec SPEC] --slurm   one sbatch job array of agents, submitted (returns at
                                                      once; --allow-failed-trials is passed on to every agent)
  playground sweep serve DIR [--host H] [--port P]     serve the study to agents on other hosts (gRPC proxy)

Exit codes: 0 done, every trial complete or pruned; 1 done with failed trials (0 with --allow-failed-trials), or
a failure while it ran; 2 unusable spec, upf or opts (nothing was started); 75 stopped (re-run to continue).
"""
from __future__ import annotations

import argparse
import os
import sys

from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_USAGE


REPORTS = ("status", "summary", "plots", "preview")   # commands whose stdout is a report, read or cut by a pipe


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="sweep_command", metavar="ACTION", required=True)
    run = sub.add_parser("run", help="run or resume a sweep", description="Run or resume a sweep.")
    run.add_argument("spec", nargs="?", metavar="SPEC", help="the sweep spec (JSON or YAML)")
    run.add_argument("--upf", metavar="FILE", help="CANDLE upf file: one JSON object per line with a unique id")
    run.add_argument("--base", metavar="OPTS", help="with --upf: the opts file every line starts from")
    run.add_argument("--script", metavar="PY", help="with --upf: a CANDLE benchmark script instead of --base")
    run.add_argument("--objective", metavar="METRIC[:min|max]",
                     help="the metric trials are ranked by (a key of their metrics), :min or :max (default: min "
                          "for names with loss or error, else max); needed with --script, replaces a spec's")
    run.add_argument("--restart-file", metavar="CSV", help="earlier evaluations (header y,<param>,...)")
    run.add_argument("--sweep-dir", metavar="DIR", help="the sweep folder (default sweeps/<name>)")
    run.add_argument("--workers", type=int, metavar="N", help="agent slots on this host (default: "
                     "searcher.max_concurrent_trials, else 1)")
    run.add_argument("--test", action="store_true",
                     help="run the whole machinery on one tiny trial in a temporary folder and check the objective")
    run.add_argument("--quiet", action="store_true", help="no progress lines")
    add_allow_failed_argument(run)
    add_storage_argument(run)
    add_sweep_module_map_argument(run)
    agent = sub.add_parser(
        "agent", help="work on an existing sweep as one more agent (another host, a Slurm array task)",
        description="Work on an existing sweep folder as one more agent: N slots that claim trials until the "
                    "budget is spent and nothing is left to adopt. The spec comes from DIR/sweep.json; any number "
                    "of agents may run at once, on any host that sees DIR and the study's storage. A trial whose "
                    "agent is gone (its heartbeat unchanged for agents.grace_seconds, or its process dead on this "
                    "host) is adopted and resumes its own run folder. Exit codes as `sweep run`.")
    agent.add_argument("sweep_dir", metavar="DIR", help="the sweep folder (created by `sweep run` or `sweep submit`)")
    agent.add_argument("--workers", type=int, default=1, metavar="N", help="agent slots in this process (default 1)")
    add_storage_argument(agent)
    add_sweep_module_map_argument(agent)
    agent.add_argument("--quiet", action="store_true", help="no progress lines")
    add_allow_failed_argument(agent)
    serve = sub.add_parser("serve", help="serve the sweep's journal to agents on other hosts (gRPC proxy)",
                           description="Serve DIR's study journal to agents on other hosts through Optuna's gRPC "
                           "storage proxy, as the journal's single writer; prints the URL to give them "
                           "(--storage grpc://host:port) and records it in DIR/control/serve.json.")
    serve.add_argument("sweep_dir", metavar="DIR")
    serve.add_argument("--host", default="0.0.0.0", help="address to listen on (default: every interface)")
    serve.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    preview = sub.add_parser("preview", help="show the planned trials without running anything",
                             description="Show the planned grid, the ASHA brackets x rungs x trials, or the space.")
    preview.add_argument("spec", metavar="SPEC")
    for name, text in (("status", "trials by state and the best so far"),
                       ("summary", "rewrite summary.csv, summary.md, best.json, output.csv and result.txt"),
                       ("plots", "draw history, parallel coordinates, importances, timeline and learning curves"),
                       ("pause", "stop the sweep's running trials after a checkpoint and start nothing new"),
                       ("resume", "allow a paused sweep to run again (then re-run `sweep run`)")):
        command = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        command.add_argument("sweep_dir", metavar="DIR")
        if name in ("status", "summary", "plots"):
            add_storage_argument(command)
        if name == "summary":
            command.add_argument("--rebuild", action="store_true",
                                 help="first rebuild the study from the run folders alone (trial.json, "
                                      "attempts.jsonl, metrics.jsonl); an existing study.journal is kept, renamed")
            add_sweep_module_map_argument(command)
    extend = sub.add_parser(
        "continue", help="add a trial that continues trial ID from its latest checkpoint with changed settings",
        description="Add a trial that continues trial ID's training from its latest checkpoint (weights, optimizer, "
                    "position, records) with the source's settings changed by --set, e.g. more epochs or another "
                    "learning rate. It gets the next trial number, is an extra trial outside the budget, and is "
                    "run by the `sweep run` working on DIR, else by the next one.")
    extend.add_argument("sweep_dir", metavar="DIR")
    extend.add_argument("trial", metavar="ID", help="the trial to continue (its folder name, e.g. t0003)")
    extend.add_argument("--set", metavar="SECTION.KEY=VALUE", action="append", default=[], dest="sets",
                        help="a setting that differs from the source trial's (JSON value); repeatable")
    add_storage_argument(extend)
    add_sweep_module_map_argument(extend)
    _add_submit(sub)


def _add_submit(sub: argparse._SubParsersAction) -> None:
    submit = sub.add_parser("submit", help="submit sweep agents to a scheduler (Slurm) and return at once",
                            description="Write DIR/slurm/agents-<time>.sbatch, one job array of `sweep agent DIR` "
                                        "tasks, submit it with sbatch and print the job id (no polling).")
    submit.add_argument("sweep_dir", metavar="DIR")
    submit.add_argument("--spec", metavar="SPEC", help="create DIR from this spec first, validated as `sweep run` "
                        "does (an existing DIR must hold the same sweep; only the budget may change)")
    submit.add_argument("--slurm", action="store_true", required=True, help="submit to Slurm (sbatch job array)")
    submit.add_argument("--agents", type=int, default=1, metavar="N", help="array tasks, one agent each (default 1)")
    submit.add_argument("--workers-per-agent", type=int, default=1, metavar="K",
                        help="trials each agent runs at once (default 1); a task asks for K x slots_per_trial "
                             "CPU cores, or GPUs with --gpus")
    submit.add_argument("--gpus", action="store_true",
                        help="the trials use GPUs: each task asks for K x slots_per_trial of them (--gres=gpu:N)")
    submit.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG", dest="sbatch_args",
                        help="an sbatch option for every task, e.g. --sbatch-arg=--partition=gpu (repeatable; "
                             "replaces a default of the same option)")
    submit.add_argument("--dry-run", action="store_true", help="print the script; write and submit nothing")
    add_allow_failed_argument(submit, "each agent exits 0 (its array task COMPLETED) when the sweep is done even "
                                      "if some trials failed (by default it exits 1: the task ends FAILED)")
    add_storage_argument(submit)
    add_sweep_module_map_argument(submit)


def add_allow_failed_argument(parser: argparse.ArgumentParser, text: str | None = None) -> None:
    """--allow-failed-trials, for the commands that run trials (run, agent) or start agents (submit)."""
    parser.add_argument("--allow-failed-trials", action="store_true",
                        help=text or "exit 0 when the sweep is done even if some trials failed (by default it exits 1, "
                                     "its last line naming them)")


def add_storage_argument(parser: argparse.ArgumentParser) -> None:
    """--storage URL, for every command that opens a sweep's study (run, agent) or starts agents (submit)."""
    parser.add_argument("--storage", metavar="URL",
                        help="where the study lives: journal (the file in the sweep folder, default), "
                             "postgresql://user@host:port/db (password from PGPASSWORD or ~/.pgpass), or "
                             "grpc://host:port (a `playground sweep serve`); default: the spec's storage, else "
                             "the one the sweep began with")


def add_sweep_module_map_argument(parser: argparse.ArgumentParser) -> None:
    """--module-map FILE after the action too (`playground sweep --module-map FILE ACTION` takes it as well)."""
    parser.add_argument("--module-map", metavar="FILE", default=argparse.SUPPRESS,
                        help="your own module map (MODULE_MAP = {name: dotted module path}); recorded in sweep.json "
                             "and used by every agent and trial; default: PLAYGROUND_MODULE_MAP, else the one the "
                             "sweep recorded, else a module_map.py beside the base opts")


def _check_storage_argument(args: argparse.Namespace) -> None:
    """A bad --storage stops before anything runs (exit 2)."""
    if args.storage:
        from playground.sweeps.errors import SweepError
        from playground.sweeps.inputs.storage_url import parse_storage
        try:
            parse_storage(args.storage)
        except ValueError as err:
            raise SweepError(f"--storage: {err}") from None


def main(args: argparse.Namespace) -> int:
    from playground.options.layers import OptsError  # SweepError is one
    try:
        code = _dispatch(args)
        sys.stdout.flush()   # here, so that a reader gone away (`| head`) is seen inside the try
        return code
    except OptsError as err:
        print(f"playground sweep: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:   # the reader has what it wanted (`| head`): end quietly, as Unix tools do
        if args.sweep_command not in REPORTS:
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # nothing left to flush at exit
        return EXIT_DONE
    except OSError as err:   # the machine's, not the input's (a full disk): one line, not a traceback
        from playground.sweeps.errors import described
        print(f"playground sweep: failed: {described(err)}. Mend the cause, then re-run the same command to "
              f"continue. Exit code {EXIT_FAILED}.", file=sys.stderr)
        return EXIT_FAILED


def _dispatch(args: argparse.Namespace) -> int:
    from playground.sweeps.inputs import environment
    from playground.sweeps.operations import reports
    if args.sweep_command not in ("preview", "pause", "resume"):   # the commands that may open the study
        environment.check()
    if args.sweep_command == "run":
        return _run(args)
    if args.sweep_command == "agent":
        return _agent(args)
    if args.sweep_command == "preview":
        from playground.sweeps.operations.preview import preview
        print(preview(_spec(args)))
        return EXIT_DONE
    if args.sweep_command == "continue":
        from playground.sweeps.agents.warm_start import continue_trial
        _check_storage_argument(args)
        return continue_trial(args.sweep_dir, args.trial, args.sets, storage=args.storage)
    if args.sweep_command == "serve":
        from playground.sweeps.operations.serve import serve
        return serve(args.sweep_dir, args.host, args.port)
    if args.sweep_command in ("pause", "resume"):
        from playground.sweeps.agents import control
        return getattr(control, args.sweep_command)(args.sweep_dir)
    if args.sweep_command == "submit":
        from playground.sweeps.operations.slurm import SlurmRequest, submit
        _check_storage_argument(args)
        request = SlurmRequest(args.agents, args.workers_per_agent, args.gpus, args.sbatch_args,
                               allow_failed_trials=args.allow_failed_trials)
        return submit(args.sweep_dir, request, dry_run=args.dry_run, spec_file=args.spec, storage=args.storage)
    if args.sweep_command in ("status", "summary", "plots"):
        _check_storage_argument(args)
    if args.sweep_command == "summary":
        return reports.summary(args.sweep_dir, rebuild=args.rebuild, storage=args.storage)
    return {"status": reports.status, "plots": reports.plots}[args.sweep_command](args.sweep_dir, storage=args.storage)


def _spec(args: argparse.Namespace):
    from playground.sweeps.errors import SweepError
    from playground.sweeps.inputs.spec import load_spec, parse_spec, read_spec_file, upf_spec
    objective = _objective_argument(args.objective) if getattr(args, "objective", None) else None
    if getattr(args, "upf", None):
        if args.spec:
            raise SweepError("give a spec or --upf, not both")
        raw = upf_spec(args.upf, args.base, args.script, objective=objective)
        return parse_spec(raw, os.getcwd(), origin="--upf")
    if not args.spec:
        raise SweepError("give a sweep spec (sweep run SPEC), or --upf FILE --base OPTS")
    if objective is None:
        return load_spec(args.spec)
    return parse_spec({**read_spec_file(args.spec), "objective": objective},
                      os.path.dirname(os.path.abspath(args.spec)), origin=args.spec)


def _objective_argument(text: str) -> dict:
    """`--objective val_loss[:min|max]` as the spec's objective; a malformed one is a SweepError."""
    from playground.sweeps.errors import SweepError
    metric, _, mode = text.partition(":")
    if not metric or mode not in ("", "min", "max"):
        raise SweepError(f"--objective {text!r}: expected METRIC, METRIC:min or METRIC:max (e.g. val_loss:min)")
    lowered = metric.lower()
    return {"metric": metric, "mode": mode or ("min" if "loss" in lowered or "error" in lowered else "max")}


def _run(args: argparse.Namespace) -> int:
    from dataclasses import replace
    from playground.sweeps.errors import SweepError
    from playground.sweeps.inputs.prepare import prepare_sweep
    from playground.sweeps.agents.runner import run_sweep
    from playground.sweeps.files.module_maps import use_sweep_module_map
    from playground.sweeps.files.sweep_folder import SweepFolder
    spec = _spec(args)
    if args.restart_file:
        spec = replace(spec, restart_file=os.path.abspath(args.restart_file),
                       raw={**spec.raw, "restart_file": os.path.abspath(args.restart_file)})
    if args.workers is not None and args.workers < 1:
        raise SweepError("--workers must be at least 1")
    _check_storage_argument(args)
    sweep_dir = args.sweep_dir or os.path.join("sweeps", spec.name)
    use_sweep_module_map(None if args.test else SweepFolder(sweep_dir), spec.base)
    if args.test:
        from playground.sweeps.operations.selftest import self_test
        return self_test(spec)
    prepared = prepare_sweep(spec)
    workers = args.workers or spec.searcher.get("max_concurrent_trials") or 1
    return run_sweep(prepared, sweep_dir, workers, quiet=args.quiet, storage=args.storage,
                     allow_failed=args.allow_failed_trials)


def _agent(args: argparse.Namespace) -> int:
    from playground.sweeps.errors import SweepError
    from playground.sweeps.agents.runner import run_agent
    if args.workers < 1:
        raise SweepError("--workers must be at least 1")
    _check_storage_argument(args)
    return run_agent(args.sweep_dir, args.workers, quiet=args.quiet, storage=args.storage,
                     allow_failed=args.allow_failed_trials)
