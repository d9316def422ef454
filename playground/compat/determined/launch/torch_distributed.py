"""`python3 -m determined.launch.torch_distributed [TORCHRUN OPTIONS --] CMD...`, run by a process started once
per node: one worker per slot of this node (the cluster info's slot_ids), each with torchrun's variables, its
output prefixed with its rank (wrap_rank), through torch.distributed.run on this host (`--standalone`: a free
rendezvous port). A leading `python`/`python3` of CMD is this interpreter. Options before `--` go to
torch.distributed.run (those that set the node count, the processes per node or the rendezvous are the launch
layer's own and are refused)."""
from __future__ import annotations

import sys

from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_USAGE

USAGE = "usage: python3 -m determined.launch.torch_distributed [TORCHRUN OPTIONS --] CMD..."
OWN = ("--nnodes", "--nproc_per_node", "--nproc-per-node", "--rdzv_endpoint", "--rdzv-endpoint", "--master_addr",
       "--master-addr", "--master_port", "--master-port", "--node_rank", "--node-rank", "--standalone")


def launch_args(argv: list[str], slots: int) -> list[str] | str:
    """torch.distributed.run's arguments for CMD on `slots` workers, or why `argv` cannot be run."""
    overrides, command = ([], argv) if "--" not in argv else (argv[:argv.index("--")], argv[argv.index("--") + 1:])
    if overrides and any(o.split("=")[0] in OWN for o in overrides):
        return f"torch_distributed: the launch layer sets {', '.join(OWN[:2])} and the rendezvous itself"
    if not command:
        return "torch_distributed: no command to launch"
    if command[0].rsplit("/", 1)[-1].startswith("python"):
        command = [sys.executable, *command[1:]]
    wrapped = [sys.executable, "-m", "determined.launch.wrap_rank", "RANK", "--", *command]
    return ["--standalone", "--nnodes", "1", "--nproc_per_node", str(slots), *overrides, "--no-python", *wrapped]


def main(argv: list[str]) -> int:
    import determined as det
    from torch.distributed import run
    info = det.get_cluster_info()
    slots = len(info.slot_ids) if info is not None else 1
    args = launch_args(argv, slots)
    if isinstance(args, str):
        print(f"{args}\n{USAGE}", file=sys.stderr)
        return EXIT_USAGE
    try:
        run.main(args)
    except SystemExit as ended:
        return ended.code if isinstance(ended.code, int) else EXIT_FAILED
    except Exception as err:    # noqa: BLE001 - torchrun's ChildFailedError: a worker failed (its output says how)
        print(f"torch_distributed: {type(err).__name__}: a worker failed", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_DONE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
