"""The Core API's members one by one, on 2 ranks through the runner (collectives, sharded checkpoints, upload,
download, delete, metric groups, the modes' rules) and off-cluster in this process."""
from __future__ import annotations

import json
import textwrap

import pytest

from playground.determined import core_files
from playground.processes.exit_codes import EXIT_DONE
from tests.determined.det_runs import checkpoint_entries, cluster_info, records, run

MEMBERS = textwrap.dedent('''
    import json, os, pathlib, tempfile
    import determined as det
    from determined import core

    dist = core.DistributedContext.from_torch_distributed()
    rank = dist.rank
    with core.init(distributed=dist, preempt_mode=core.PreemptMode.ChiefOnly) as ctx:
        out = {"rank": rank, "size": dist.get_size(), "local": [dist.local_rank, dist.local_size],
               "cross": [dist.cross_rank, dist.cross_size, dist.get_num_agents()],
               "env": [os.environ[name] for name in ("GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE")]}
        out["allgather"] = ctx.distributed.allgather({"r": rank})
        out["gather"] = ctx.distributed.gather(rank * 10)
        out["broadcast"] = ctx.distributed.broadcast("from chief" if rank == 0 else None)
        out["allgather_local"] = ctx.distributed.allgather_local(rank)
        out["gather_local"] = ctx.distributed.gather_local(rank)
        out["broadcast_local"] = ctx.distributed.broadcast_local("local chief" if rank == 0 else None)

        with ctx.checkpoint.store_path({"steps_completed": 5, f"rank{rank}": True}, shard=True) as (path, sid):
            (path / f"part{rank}").write_text(str(rank))
        out["sharded"] = sid
        if rank == 0:
            source = pathlib.Path(tempfile.mkdtemp())
            (source / "sub").mkdir()
            (source / "sub" / "kept.txt").write_text("kept")
            (source / "skipped.txt").write_text("skipped")
            uploaded = ctx.checkpoint.upload(source, {"steps_completed": 6}, selector=lambda p: p.startswith("sub"))
        else:
            uploaded = None
            try:
                ctx.preempt.should_preempt()
            except RuntimeError as err:
                out["chief_only"] = "ChiefOnly" in str(err)
            try:
                ctx.checkpoint.upload("/tmp", {"steps_completed": 1})
            except RuntimeError as err:
                out["upload_worker"] = "non-chief" in str(err)
        uploaded = ctx.distributed.broadcast(uploaded)
        shared = pathlib.Path("downloaded")       # the local chief downloads, the other local ranks wait for it
        ctx.checkpoint.download(uploaded, shared)
        out["downloaded"] = sorted(str(p.relative_to(shared)) for p in shared.rglob("*") if p.is_file())
        own = pathlib.Path(f"own{rank}")          # each rank downloads itself
        ctx.checkpoint.download(uploaded, own, core.DownloadMode.NoSharedDownload, selector=lambda p: "kept" in p)
        out["own"] = sorted(str(p.relative_to(own)) for p in own.rglob("*") if p.is_file())
        out["metadata"] = ctx.checkpoint.get_metadata(sid)
        ctx.distributed.allgather(None)
        if rank == 0:
            ctx.train.report_metrics("inference", 3, {"latency": 0.5})
            ctx.train.report_validation_metrics(6, {"val_loss": 0.25})
            out["best"] = ctx.train.get_experiment_best_validation()
            ctx.checkpoint.delete(uploaded)
            try:
                ctx.checkpoint.get_metadata(uploaded)
            except FileNotFoundError:
                out["deleted"] = True
            try:
                with ctx.checkpoint.store_path({"no": "steps"}) as (path, _):
                    (path / "x").write_text("x")
            except ValueError as err:
                out["needs_steps"] = "steps_completed" in str(err)
        print("OUT " + json.dumps(out), flush=True)
''')


def test_every_core_member_on_two_ranks(tmp_path):
    context = tmp_path / "context"
    context.mkdir()
    (context / "members.py").write_text(MEMBERS)
    run_dir = tmp_path / "run"
    info = cluster_info({"x": 1})
    info["experiment_config"]["searcher"]["metric"] = "val_loss"
    code, output = run(["python3", "-m", "determined.launch.torch_distributed", "python3", "members.py"], context, run_dir, info,
                       slots=2)
    assert code == EXIT_DONE, output
    found = sorted((json.loads(line.split("OUT ", 1)[1]) for line in output.splitlines() if "OUT " in line),
                   key=lambda out: out["rank"])
    chief, worker = found
    for out in found:
        assert out["size"] == 2 and out["local"] == [out["rank"], 2] and out["cross"] == [0, 1, 1]
        assert out["env"] == ["0", "1", str(out["rank"]), "2"]      # one node; the role is the rank among slots
        assert out["allgather"] == [{"r": 0}, {"r": 1}] and out["allgather_local"] == [0, 1]
        assert out["broadcast"] == "from chief" and out["broadcast_local"] == "local chief"
        assert out["downloaded"] == ["metadata.json", "sub/kept.txt"]     # metadata.json is a file of it
        assert out["own"] == ["sub/kept.txt"]
        assert out["metadata"] == {"steps_completed": 5, "rank0": True, "rank1": True}
    assert chief["gather"] == [0, 10] and worker["gather"] is None
    assert chief["gather_local"] == [0, 1] and worker["gather_local"] is None
    assert worker["chief_only"] and worker["upload_worker"]
    assert chief["deleted"] and chief["needs_steps"] and chief["best"] == 0.25
    sharded = run_dir / "checkpoints" / chief["sharded"]
    assert sorted(p.name for p in sharded.iterdir()) == ["metadata.json", "part0", "part1"]
    assert len(checkpoint_entries(run_dir)) == 2
    assert [e["storage_id"] for e in core_files.checkpoints(str(run_dir))] == [chief["sharded"]]   # one was deleted
    assert [(r["kind"], r["iteration"]) for r in records(run_dir)] == [("inference", 3), ("epoch", 6)]
    assert not [p for p in (run_dir / "checkpoints").iterdir() if p.name.startswith(".partial-")]


def test_invalid_hp_ends_the_trial_done(tmp_path):
    context = tmp_path / "context"
    context.mkdir()
    (context / "main.py").write_text("import determined as det\nwith det.core.init():\n"
                                     "    raise det.InvalidHP('filters must be even')\n")
    code, output = run(["python3", "main.py"], context, tmp_path / "run", cluster_info())
    assert code == EXIT_DONE, output


@pytest.mark.filterwarnings("ignore:SearcherContext.operations")
def test_off_cluster_init_is_determineds_local_context(tmp_path, monkeypatch):
    import playground.compat.determined as det
    monkeypatch.delenv("PLAYGROUND_DETERMINED", raising=False)
    assert det.get_cluster_info() is None
    with det.core.init(checkpoint_storage=str(tmp_path / "store")) as ctx:
        with ctx.checkpoint.store_path({"steps_completed": 1}) as (path, storage_id):
            (path / "w").write_text("1")
        with ctx.checkpoint.restore_path(storage_id) as path:
            assert (path / "w").read_text() == "1"
        assert ctx.checkpoint.get_metadata(storage_id) == {"steps_completed": 1}
        lengths = []
        for op in ctx.searcher.operations():     # one operation of length 1, as Determined off-cluster
            lengths.append(op.length)
            op.report_completed(0.1)
        assert lengths == [1]
        assert ctx.preempt.should_preempt() is False
        ctx.train.report_training_metrics(1, {"loss": 1.0})
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == [storage_id]
    assert json.loads((tmp_path / "store" / storage_id / "metadata.json").read_text()) == {"steps_completed": 1}


SURFACE = textwrap.dedent('''
    import json, logging, os, signal, time
    import determined as det
    from determined import core

    logging.basicConfig(level=logging.INFO, format=det.LOG_FORMAT)      # as Determined's scripts do
    info = det.get_cluster_info()
    out = {"version": det.__version__, "log_format": det.LOG_FORMAT,
           "classes": [c.__name__ for c in (det.TrialInfo, det.RendezvousInfo, det.ResourcesInfo)],
           "info": [info.task_type, info.container_rank, info.container_addrs, info.container_slot_counts,
                    info.slot_ids, info.master_url, info.cluster_id, info.task_id, info.session_token,
                    info.gpu_uuids, info.trial.trial_seed, info.trial._config["searcher"]["metric"],
                    info.agent_id == os.uname().nodename, info.allocation_id.startswith("1.1.")],
           "enums": {e.__name__: [m.name for m in e] for e in (core.DownloadMode, core.PreemptMode,
                                                              core.SearcherMode, core.Unit, core.TensorboardMode,
                                                              core.EarlyExitReason)}}
    for name in ("errors", "import_from_path", "keras", "ExperimentConfig", "TrialContext", "LegacyTrial", "util",
                 "lightning", "transformers", "experimental", "common", "cli", "estimator"):
        try:
            getattr(det, name)
        except AttributeError as err:
            out.setdefault("not_provided", []).append(name if "docs/determined.md" in str(err) else str(err))
    for module in ("determined.keras", "determined.experimental", "determined.pytorch.deepspeed",
                   "determined.pytorch.lightning"):
        try:
            __import__(module)
        except ImportError as err:
            out.setdefault("not_importable", []).append(module if "docs/determined.md" in str(err) else str(err))
    out["env"] = [os.environ.get(name) for name in ("GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE")]
    out["exchange_port"] = int(os.environ["PLAYGROUND_DETERMINED_PORT"]) != int(os.environ["MASTER_PORT"])
    try:
        core.DistributedContext.from_tf_config()
    except NotImplementedError as err:
        out["tf_config"] = "TensorFlow" in str(err)
    os.environ.update(LOCAL_SIZE="1", CROSS_RANK="0", CROSS_SIZE="1")    # what deepspeed's launcher adds
    deepspeed = core.DistributedContext.from_deepspeed()
    out["deepspeed"] = [deepspeed.rank, deepspeed.size, deepspeed.local_rank, deepspeed.cross_size]

    class Horovod:      # horovod's rank functions, as hvd has them after hvd.init()
        rank = local_rank = cross_rank = staticmethod(lambda: 0)
        size = local_size = cross_size = staticmethod(lambda: 1)
    horovod = core.DistributedContext.from_horovod(Horovod())
    out["horovod"] = [horovod.rank, horovod.size, horovod.get_num_agents()]
    with core.init(tensorboard_mode=core.TensorboardMode.MANUAL) as ctx:
        ctx.alert(title="hello", description="an alert is a log line")
        ctx.profiler.on()
        ctx.profiler.off()
        out["context"] = [ctx.info.trial.trial_id, ctx.distributed.get_size()]
        out["units"], out["lengths"] = ctx.searcher.get_configured_units().name, []
        for op in ctx.searcher.operations(core.SearcherMode.ChiefOnly, auto_ack=True):
            out["lengths"].append(op.length)
            for step in range(1, op.length + 1):
                ctx.train.report_progress(step / op.length)
                ctx.train.report_training_metrics(step, {"loss": 1.0 / step}, batch_metrics=[{"loss": 1.0}])
                op.report_progress(step)
            ctx.train.report_validation_metrics(op.length, {"val": 0.5})
            op.report_completed(0.5)
        ctx.searcher.acknowledge_out_of_ops()
        for bad in (lambda: ctx.train.report_progress(1.5), lambda: ctx.train.report_metrics("a.b", 1, {"x": 1})):
            try:
                bad()
            except ValueError as err:
                out.setdefault("refused", []).append(str(err).split(":")[0])
        ctx.train.set_status("evaluating")
        ctx.train.report_early_exit(core.EarlyExitReason.USER_REQUESTED_STOP)
        ctx.train.set_metadata({"note": "kept"})
        out["metadata"] = ctx.train.get_metadata()
        out["tensorboard"] = str(ctx.train.get_tensorboard_path())
        ctx.train.upload_tensorboard_files()
        os.kill(os.getpid(), signal.SIGTERM)     # as the runner passes one on; acknowledged by the script itself
        deadline = time.time() + 30
        while not ctx.preempt.should_preempt(auto_ack=False) and time.time() < deadline:
            time.sleep(0.05)
        ctx.preempt.acknowledge_preemption_signal()
        print("OUT " + json.dumps(out), flush=True)
''')


def test_the_rest_of_the_core_surface_on_one_slot_and_an_acknowledged_preemption_exits_75(tmp_path):
    """What no other test reaches: the top level's facts and constants, the names not provided, the enums, the
    DistributedContext constructors, the variables the processes get, the searcher, train and profiler calls;
    after a SIGTERM, should_preempt(auto_ack=False) sees it, acknowledge_preemption_signal() acknowledges it and
    the script's exit 0 becomes 75 (re-run to resume)."""
    context = tmp_path / "context"
    context.mkdir()
    (context / "surface.py").write_text(SURFACE)
    run_dir = tmp_path / "run"
    info = cluster_info({"x": 1}, max_length={"batches": 3})
    info["experiment_config"]["reproducibility"] = {"experiment_seed": 4}
    code, output = run(["python3", "surface.py"], context, run_dir, info, env={"CUDA_VISIBLE_DEVICES": "GPU-a,GPU-b"})
    assert code == 75, output
    out = json.loads(output.split("OUT ", 1)[1].splitlines()[0])
    assert out["version"] == "0.38.1+playground" and out["log_format"].startswith("%(levelname)s")
    assert out["classes"] == ["TrialInfo", "RendezvousInfo", "ResourcesInfo"]
    assert out["info"] == ["TRIAL", 0, ["127.0.0.1"], [1], [0], f"local://{run_dir}", "playground", "1.1", "",
                           ["GPU-a", "GPU-b"], 5, "test_loss", True, True]
    assert out["enums"] == {
        "DownloadMode": ["LocalWorkersShareDownload", "NoSharedDownload"],
        "PreemptMode": ["WorkersAskChief", "ChiefOnly", "WorkersAskMaster"],
        "SearcherMode": ["WorkersAskChief", "ChiefOnly"], "Unit": ["EPOCHS", "RECORDS", "BATCHES"],
        "TensorboardMode": ["AUTO", "MANUAL"],
        "EarlyExitReason": ["INVALID_HP", "USER_REQUESTED_STOP"]}
    assert out["not_provided"] == ["errors", "import_from_path", "keras", "ExperimentConfig", "TrialContext",
                                   "LegacyTrial", "util", "lightning", "transformers", "experimental", "common", "cli",
                                   "estimator"]
    assert out["not_importable"] == ["determined.keras", "determined.experimental", "determined.pytorch.deepspeed",
                                     "determined.pytorch.lightning"]
    assert out["env"] == ["0", "1", "0", "1"] and out["exchange_port"]
    assert out["tf_config"] and out["deepspeed"] == [0, 1, 0, 1] and out["horovod"] == [0, 1, 1]
    assert out["context"] == [1, 1] and out["units"] == "BATCHES" and out["lengths"] == [3]
    assert out["refused"] == ["Progress should be between 0 and 1, not 1.5", "metrics group name cannot contain '.'"]
    assert out["metadata"] == {"note": "kept"}
    assert json.loads((run_dir / "det_trial_metadata.json").read_text()) == {"note": "kept"}
    assert out["tensorboard"] == str(run_dir / "tensorboard")
    assert [(r["kind"], r["iteration"]) for r in records(run_dir)] == [("train", 1), ("train", 2), ("train", 3),
                                                                       ("epoch", 3)]
    assert "batch_metrics" not in records(run_dir)[0]
    said = (run_dir / "train.log").read_text()
    assert "alert: hello: an alert is a log line" in said and "status: evaluating" in said
    assert "report_early_exit(EarlyExitReason.USER_REQUESTED_STOP)" in said
