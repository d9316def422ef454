"""det.get_cluster_info() and its classes as Determined 0.38.1 has them (determined/_info.py), answered from
the trial's det_cluster.json (playground/determined/cluster_file.py) instead of a master's files: None in a
process playground did not start for a Determined experiment, as off-cluster.

What a local run has no use for gets a plain value: master_url `local://<run folder>`, cluster_id
"playground", session_token "", gpu_uuids of the GPUs this process sees.
"""
from __future__ import annotations

import os
import socket
from typing import Any, Dict, List, Optional, Union

from playground.determined import cluster_file
from playground.distribution.launcher_vars import torchrun_ranks


class RendezvousInfo:
    """Where the containers (here: the one machine) of the allocation are."""

    def __init__(self, container_addrs: List[str], container_rank: int, container_slot_counts: List[int]):
        self.container_addrs = container_addrs
        self.container_rank = container_rank
        self.container_slot_counts = container_slot_counts


class TrialInfo:
    def __init__(self, trial_id: int, experiment_id: int, trial_seed: int, hparams: Dict[str, Any],
                 config: Dict[str, Any], steps_completed: int, trial_run_id: int, debug: bool,
                 inter_node_network_interface: Optional[str]):
        #: The Trial ID for the current task.
        self.trial_id = trial_id
        #: The Experiment ID for the current task.
        self.experiment_id = experiment_id
        #: The random seed for the current Trial.
        self.trial_seed = trial_seed
        #: The hyperparameter values selected for the current Trial.
        self.hparams = hparams
        self._config = config
        self._steps_completed = steps_completed
        self._trial_run_id = trial_run_id
        self._debug = debug
        self._inter_node_network_interface = inter_node_network_interface


class ResourcesInfo:
    def __init__(self, gpu_uuids: List[str]) -> None:
        self._gpu_uuids = gpu_uuids

    @property
    def gpu_uuids(self) -> List[str]:
        return self._gpu_uuids


class ClusterInfo:
    """What a task learns of its cluster; see Determined's docs. `.trial` only for task_type "TRIAL" (always,
    here)."""

    def __init__(self, master_url: str, cluster_id: str, agent_id: str, slot_ids: List[int], task_id: str,
                 allocation_id: str, session_token: str, task_type: str, master_cert_name: Optional[str] = None,
                 master_cert_file: Optional[str] = None, latest_checkpoint: Optional[str] = None,
                 trial_info: Optional[TrialInfo] = None, rendezvous_info: Optional[RendezvousInfo] = None,
                 resources_info: Optional[ResourcesInfo] = None):
        self.master_url = master_url
        self.cluster_id = cluster_id
        self.agent_id = agent_id
        self.slot_ids = slot_ids
        self.task_id = task_id
        self.allocation_id = allocation_id
        self.session_token = session_token
        self.task_type = task_type
        self.master_cert_name = master_cert_name
        self.master_cert_file = master_cert_file
        self._latest_checkpoint = latest_checkpoint
        self._trial_info = trial_info
        self._rendezvous_info = rendezvous_info
        self._resources_info = resources_info

    @property
    def latest_checkpoint(self) -> Optional[str]:
        """The storage id of the trial's newest complete checkpoint when this attempt started, or None."""
        return self._latest_checkpoint if self.task_type == "TRIAL" else None

    @property
    def user_data(self) -> Dict[str, Any]:
        """The experiment configuration's `data` field."""
        if self.task_type != "TRIAL":
            return {}
        return self.trial._config.get("data") or {}

    @property
    def trial(self) -> TrialInfo:
        if self.task_type != "TRIAL":
            raise RuntimeError(f'you cannot use the .trial property when .task_type ("{self.task_type}") != "TRIAL"')
        assert self._trial_info is not None
        return self._trial_info

    @property
    def container_addrs(self) -> List[str]:
        return self._rendezvous_info.container_addrs if self._rendezvous_info else ["127.0.0.1"]

    @property
    def container_slot_counts(self) -> List[int]:
        return self._rendezvous_info.container_slot_counts if self._rendezvous_info else [len(self.slot_ids)]

    @property
    def container_rank(self) -> int:
        return self._rendezvous_info.container_rank if self._rendezvous_info else 0

    @property
    def gpu_uuids(self) -> List[str]:
        assert self._resources_info is not None
        return self._resources_info.gpu_uuids


def from_cluster_file(record: Dict[str, Any]) -> ClusterInfo:
    """A ClusterInfo of the trial det_cluster.json describes."""
    from playground.determined import core_files
    config = record.get("experiment_config") or {}
    trial_id, experiment_id = int(record.get("trial_id") or 1), int(record.get("experiment_id") or 1)
    slots = int(record.get("slots_per_trial") or 1)
    latest = record.get("latest_checkpoint")
    entry = core_files.find_entry(record.get("run_dir"), latest)
    trial = TrialInfo(trial_id=trial_id, experiment_id=experiment_id,
                      trial_seed=cluster_file.trial_seed(config, trial_id),
                      hparams=record.get("hparams") or {}, config=config,
                      steps_completed=int((entry or {}).get("steps_completed") or 0),
                      trial_run_id=int(os.environ.get("PLAYGROUND_ATTEMPT", "") or record.get("attempt") or 1),
                      debug=bool(config.get("debug", False)), inter_node_network_interface=None)
    addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
    task_id = f"{experiment_id}.{trial_id}"
    return ClusterInfo(master_url=f"local://{record.get('run_dir')}", cluster_id="playground",
                       agent_id=socket.gethostname(), slot_ids=list(range(slots)), task_id=task_id,
                       allocation_id=f"{task_id}.{trial._trial_run_id}", session_token="", task_type="TRIAL",
                       latest_checkpoint=latest, trial_info=trial,
                       rendezvous_info=RendezvousInfo([addr], torchrun_ranks(os.environ, alone=True).group_rank, [slots]),
                       resources_info=ResourcesInfo(_gpu_uuids()))


def _gpu_uuids() -> List[str]:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    return [item for item in visible.split(",") if item.strip()]


_info: Union[ClusterInfo, str, None] = "unloaded"


def get_cluster_info() -> Optional[ClusterInfo]:
    """The ClusterInfo of this task, or None when this process was not started for a Determined experiment."""
    global _info
    if isinstance(_info, str):
        record = cluster_file.read_cluster_file()
        _info = None if record is None else from_cluster_file(record)
    return _info


def cluster_record() -> Optional[Dict[str, Any]]:
    """The det_cluster.json record itself (for the Core API), or None off-cluster."""
    return cluster_file.read_cluster_file()
