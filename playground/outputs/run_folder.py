"""The layout of a run folder: every file a run keeps in it, and every file what runs it keeps there (a sweep's
agent, Determined's runner, `playground submit`), named once. Nothing else joins one of these names to a folder;
the sweep layer and `playground ui`, which read run folders without importing the trainer, name them here too.

    <run>/opts.json  metrics.jsonl  results.json  train.log  plot<i>_<title>.png  run.lock   any run
          checkpoints/  earlier/<stamp>/  tensorboard/  profile/                       (output.* of the opts)
          attempts.jsonl  claim-<n>                         the attempts and their fence (restarts/)
          trial.json  warm_start.json  sweep-trial.log      a sweep's trial (its agent's record, its output)
          det_cluster.json  det_checkpoints.jsonl  det_searcher.jsonl        a Determined trial (its runner's,
          det_preempted  det_trial_metadata.json                                 its Core API script's)
          output/                                           a CANDLE script's output_dir
          slurm/                                            `playground submit`'s scripts, the job's log
          eval-<stamp>/  eval.json                          `playground eval` of the run; an evaluation's result

Imports only the standard library and restarts/ (which names attempts.jsonl and the claims, a floor below):
anything may import it, torch or not.
"""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

from playground.restarts.attempts import attempts_path
from playground.restarts.fence import claim_path


@dataclass(frozen=True)
class RunFolder:
    """The paths of one run folder's files. `path` is the folder (as given: relative stays relative)."""
    path: str

    OPTS = "opts.json"
    METRICS = "metrics.jsonl"
    RESULTS = "results.json"
    LOG = "train.log"
    LOCK = "run.lock"
    CHECKPOINTS = "checkpoints"
    TRIAL = "trial.json"
    WARM_START = "warm_start.json"
    TERMINAL_LOG = "sweep-trial.log"
    DET_CLUSTER = "det_cluster.json"
    DET_CHECKPOINTS = "det_checkpoints.jsonl"
    DET_SEARCHER = "det_searcher.jsonl"
    DET_PREEMPTED = "det_preempted"
    DET_TRIAL_METADATA = "det_trial_metadata.json"
    EVAL_RESULTS = "eval.json"
    # The files that tell a run folder from any other folder (the page's and the sweep's discovery).
    MARKS = (OPTS, METRICS)

    def _file(self, name: str) -> str:
        return os.path.join(self.path, name)

    # ------------------------------------------------------------------ every run
    @property
    def opts(self) -> str:
        """The resolved opts (`{"opts": ...}`; a CANDLE run's params, a Determined experiment's configuration)."""
        return self._file(self.OPTS)

    @property
    def metrics(self) -> str:
        """One JSON line per record point."""
        return self._file(self.METRICS)

    @property
    def results(self) -> str:
        """The result dict, written last: a run that wrote it ran to its end."""
        return self._file(self.RESULTS)

    @property
    def log(self) -> str:
        return self._file(self.LOG)

    @property
    def lock(self) -> str:
        """The flock of the run that owns the folder (run_folder_lock.py)."""
        return self._file(self.LOCK)

    @property
    def checkpoints(self) -> str:
        """Where checkpoints go when output.checkpoint_folder names no other folder."""
        return self._file(self.CHECKPOINTS)

    def plot(self, index: int, spec: dict) -> str:
        """The PNG of entry `index` of output.plots (`spec`), named by its title."""
        title = spec.get("y_title") or "_".join(spec["ys"])
        slug = re.sub(r"[^A-Za-z0-9]+", "_", title).strip("_").lower()[:60] or "metrics"
        return self._file(f"plot{index}_{slug}.png")

    def plots(self) -> list[str]:
        """The plots drawn so far, by name."""
        return sorted(glob.glob(self._file("plot*.png")))

    def pictures(self) -> list[str]:
        """Every PNG in the folder (the plots, and any an override drew there), by name."""
        return sorted(glob.glob(self._file("*.png")))

    def earlier(self, stamp: str) -> str:
        """Where an earlier run's outputs are set aside when a run starts afresh (earlier_outputs.py)."""
        return os.path.join(self.path, "earlier", stamp)

    @property
    def tensorboard(self) -> str:
        return self._file("tensorboard")

    @property
    def profile(self) -> str:
        """The profiler's trace and TensorBoard files (output.profile_num_iters)."""
        return self._file("profile")

    @property
    def attempts(self) -> str:
        """One line per attempt (restarts/attempts.py)."""
        return attempts_path(self.path)

    def claim(self, attempt: int) -> str:
        """The claim file of attempt `attempt` (restarts/fence.py)."""
        return claim_path(self.path, attempt)

    # ------------------------------------------------------------------ what starts the run keeps here
    @property
    def trial(self) -> str:
        """A sweep trial's record: its number, parameters, state (sweeps/files/sweep_folder.py)."""
        return self._file(self.TRIAL)

    @property
    def warm_start(self) -> str:
        """The checkpoint a sweep trial starts from (sweeps/agents/warm_start.py)."""
        return self._file(self.WARM_START)

    @property
    def terminal_log(self) -> str:
        """A sweep trial's terminal output, as its agent saw it."""
        return self._file(self.TERMINAL_LOG)

    @property
    def det_cluster(self) -> str:
        """What a process started for a Determined trial learns about it (determined/cluster_file.py)."""
        return self._file(self.DET_CLUSTER)

    @property
    def det_checkpoints(self) -> str:
        """A Determined trial's complete checkpoints, oldest first (determined/core_files.py)."""
        return self._file(self.DET_CHECKPOINTS)

    @property
    def det_searcher(self) -> str:
        """A Core API script's completed searcher operations."""
        return self._file(self.DET_SEARCHER)

    @property
    def det_preempted(self) -> str:
        """The mark of a preemption a Core API script acknowledged."""
        return self._file(self.DET_PREEMPTED)

    @property
    def det_trial_metadata(self) -> str:
        """What a Core API script gave `core.train.set_metadata`."""
        return self._file(self.DET_TRIAL_METADATA)

    @property
    def script_output(self) -> str:
        """A CANDLE script's output_dir."""
        return self._file("output")

    @property
    def slurm(self) -> str:
        """`playground submit`'s folder: its sbatch scripts and the job's log."""
        return self._file("slurm")

    def sbatch_script(self, stamp: str) -> str:
        return os.path.join(self.slurm, f"run-{stamp}.sbatch")

    @property
    def slurm_job_log(self) -> str:
        """The job's output, as sbatch's --output pattern (%j: the job id)."""
        return os.path.join(self.slurm, "job-%j.log")

    def evaluation(self, stamp: str) -> str:
        """The run folder of a `playground eval` of this run's checkpoint."""
        return self._file(f"eval-{stamp}")

    @property
    def eval_results(self) -> str:
        """The metrics of an evaluation (in the evaluation's own folder)."""
        return self._file(self.EVAL_RESULTS)
