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
               "cross": [dist.cross_rank, dist.cross_size, dist.get_num_agents()]}
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
