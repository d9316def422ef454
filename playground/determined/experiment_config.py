"""A Determined experiment configuration (YAML, recognised by its `entrypoint`), loaded and checked as
Determined's schema does: every problem at once, each naming its key path (and line), as one
`ExperimentConfigError` (exit 2). Imports nothing heavy: the sweep layer reads it.

Keys that mean nothing on a local run (images, bind mounts, pools, ...) are accepted and listed once in
`Experiment.notes`; a key whose meaning cannot be honoured (cloud checkpoint storage, a custom searcher, apex
mixed precision, ...) is an error naming it. docs/determined.md has the table of every key.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from typing import Any

from playground.determined.entrypoint import entrypoint_command, entrypoint_problem
from playground.determined.hyperparameters import check_hyperparameters, fixed_values, per_slot_batch_size
from playground.determined.searcher_config import check_length, check_searcher
from playground.options.did_you_mean import did_you_mean
from playground.options.layers import OptsError
from playground.options.user_input.user_files import read_yaml as read_user_yaml

DEFAULT_MAX_RESTARTS = 5          # Determined's default
IGNORED = {   # key -> why it means nothing here (listed once in a note)
    "bind_mounts": "the run sees this host's files",
    "data_layer": "removed from Determined", "debug": "Determined's own logging",
    "integrations": "no Pachyderm here", "internal": "Determined's internals",
    "pbs": "the run is local (`playground submit` makes a Slurm job)", "slurm": "the run is local "
    "(`playground submit` makes a Slurm job)", "preemption_timeout": "SIGTERM always checkpoints first",
    "profiling": "no master to collect profiles", "project": "no master", "workspace": "no master",
    "retention_policy": "logs are files in the run folder", "security": "no master",
    "tensorboard_storage": "TensorBoard files stay in the run folder",
    "log_policies": "a run's retries follow --max-restarts (a sweep's follow log_policies)",
}
HONOURED = {"entrypoint", "hyperparameters", "searcher", "max_restarts", "records_per_epoch", "min_validation_period",
            "min_checkpoint_period", "scheduling_unit", "resources", "checkpoint_storage", "name", "description",
            "labels", "data", "reproducibility", "perform_initial_validation", "environment", "optimizations",
            "checkpoint_policy"}
SUB_IGNORED = {
    "environment": {"image", "proxy_ports", "ports", "registry_auth", "force_pull_image", "pod_spec",
                    "add_capabilities", "drop_capabilities"},
    "resources": {"agent_label", "devices", "is_single_node", "max_slots", "native_parallel", "priority",
                  "resource_pool", "shm_size", "slots", "weight"},
    "optimizations": {"auto_tune_tensor_fusion", "average_aggregated_gradients", "average_training_metrics",
                      "gradient_compression", "grad_updates_size_file", "tensor_fusion_cycle_time",
                      "tensor_fusion_threshold"},
    "checkpoint_storage": {"propagation", "checkpoint_path", "tensorboard_path"},
}
SUB_HONOURED = {"environment": {"environment_variables"}, "resources": {"slots_per_trial"},
                "optimizations": {"aggregation_frequency", "mixed_precision"},
                "checkpoint_storage": {"type", "host_path", "storage_path", "container_path", "save_experiment_best",
                                       "save_trial_best", "save_trial_latest"},
                "reproducibility": {"experiment_seed"}}
CHECKPOINT_POLICIES = ("best", "all", "none")
SAVE_COUNTS = ("save_experiment_best", "save_trial_best", "save_trial_latest")

# min_validation_period / min_checkpoint_period stay absent unless written: the trial harness reads absent as
# "no minimum" (Determined's default, {batches: 0}, means the same)
DEFAULTS = {"max_restarts": DEFAULT_MAX_RESTARTS, "records_per_epoch": 0, "scheduling_unit": 100,
            "perform_initial_validation": False, "labels": [], "data": {}, "description": "", "debug": False}
SECTION_DEFAULTS = {"resources": {"slots_per_trial": 1},
                    "optimizations": {"aggregation_frequency": 1, "mixed_precision": "O0"}}


class ExperimentConfigError(OptsError):
    """One line per problem, each naming the file, the line and the key path."""

    heading = "problems in the experiment configuration"


@dataclass
class Experiment:
    path: str                     # the YAML, absolute
    config: dict                  # as loaded, Determined's defaults filled in
    searcher: dict
    hyperparameters: dict
    max_restarts: int
    slots_per_trial: int
    records_per_epoch: int | None
    checkpoint_dir: str | None    # checkpoint_storage's host path, or None (the run folder's checkpoints/)
    environment_variables: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def context_dir(self) -> str:
        """Determined's context directory: the YAML's folder (the command's cwd, first on its path)."""
        return os.path.dirname(self.path)

    @property
    def name(self) -> str:
        return str(self.config.get("name") or os.path.splitext(os.path.basename(self.path))[0])

    def command(self) -> list[str]:
        return entrypoint_command(self.config["entrypoint"])

    def max_length(self) -> dict | None:
        """searcher.max_length (0.2x), the length the Trial API trains for; None for 0.38's time_metric +
        max_time, where the script's own fit(max_length) decides, as on Determined (the sweep ranks by it)."""
        length = self.searcher.get("max_length")
        return dict(length) if isinstance(length, dict) else None


def is_experiment(data: Any) -> bool:
    """Whether a parsed file is a Determined experiment configuration (it has `entrypoint`)."""
    return isinstance(data, dict) and "entrypoint" in data


def read_yaml(path: str) -> tuple[Any, str]:
    """(the parsed YAML, its text), read by the one reader of user files (bounded size and alias expansion,
    UTF-8); a file that cannot be read or parsed is an ExperimentConfigError with its line and column."""
    return read_user_yaml(path, "the experiment configuration", path, ExperimentConfigError)


def load_experiment(path: str) -> Experiment:
    data, text = read_yaml(path)
    return parse_experiment(data, path, text)


def parse_experiment(data: Any, path: str, text: str = "") -> Experiment:
    """The checked experiment; every problem at once as an ExperimentConfigError."""
    path = os.path.abspath(path)
    if not is_experiment(data):
        raise ExperimentConfigError(f"{path}: not a Determined experiment configuration (no `entrypoint` key); "
                                    "an opts file is run with --parameters-file")
    problems: list[str] = []
    config = _named_keys({k: v for k, v in data.items() if v is not None}, problems)
    ignored = _check_keys(config, problems)
    searcher = check_searcher(config.get("searcher"), problems)
    check_hyperparameters(config.get("hyperparameters"), problems, grid=searcher.get("name") == "grid")
    max_restarts = _whole(config, "max_restarts", DEFAULT_MAX_RESTARTS, 0, problems)
    records = _whole(config, "records_per_epoch", 0, 0, problems)
    slots = max(_whole(_mapping(config, "resources"), "slots_per_trial", 1, 0, problems, "resources."), 1)
    hparams = config.get("hyperparameters") if isinstance(config.get("hyperparameters"), dict) else {}
    _check_batch_size(hparams, slots, problems)
    checkpoint_dir = _checkpoint_dir(config.get("checkpoint_storage"), os.path.dirname(path), problems)
    env = _environment_variables(_mapping(config, "environment").get("environment_variables"), problems)
    if problems:
        lines = _key_lines(text)
        raise ExperimentConfigError([_located(path, p, lines) for p in problems])
    notes = [f"{path}: ignored on a local run: " + ", ".join(ignored)] if ignored else []
    return Experiment(path, with_defaults(config, searcher), searcher, hparams, max_restarts, slots, records or None,
                      checkpoint_dir, env, notes)


def _check_keys(config: dict, problems: list[str]) -> list[str]:
    """Unknown keys, the entrypoint, the sections and the plain values; returns the keys accepted but ignored."""
    for key in sorted(set(config) - HONOURED - set(IGNORED)):
        hint = did_you_mean(key, sorted(HONOURED | set(IGNORED)))
        problems.append(f"{key}: not a key of Determined's experiment configuration{'; ' + hint if hint else ''}")
    ignored = [key for key in sorted(set(config) & set(IGNORED)) if key != "debug" or config[key]]
    problem = entrypoint_problem(config.get("entrypoint"))
    if problem:
        problems.append(problem)
    for section in SUB_HONOURED:
        ignored += _check_section(config, section, problems)
    _whole(config, "scheduling_unit", 100, 1, problems)
    policy = config.get("checkpoint_policy", "best")
    if not isinstance(policy, str) or policy not in CHECKPOINT_POLICIES:
        problems.append(f"checkpoint_policy: {policy!r}; use one of {', '.join(CHECKPOINT_POLICIES)} (checkpoint "
                        "after a validation when it is the trial's best, after each, or never)")
    for key in ("min_validation_period", "min_checkpoint_period"):
        if key in config:
            check_length(config[key], key, problems)
    _check_metadata(config, problems)
    return ignored


def _named_keys(config: dict, problems: list[str]) -> dict:
    """The configuration less every key that is not a name (at the top and in each section), each a problem:
    a number or null as a key would reach the checks below as a key they cannot compare or spell-check."""
    def named(mapping: dict, prefix: str) -> dict:
        problems.extend(f"{prefix}{key!r}: a key must be a name (a string), got {key!r}" for key in mapping
                        if not isinstance(key, str))
        return {key: value for key, value in mapping.items() if isinstance(key, str)}
    out = named(config, "")
    for section in ("searcher", *SUB_HONOURED):
        if isinstance(out.get(section), dict):
            out[section] = named(out[section], f"{section}.")
    return out


def _mapping(config: dict, section: str) -> dict:
    """The section when it is a mapping, else {} (_check_section names a section of another type)."""
    value = config.get(section)
    return value if isinstance(value, dict) else {}


def _check_batch_size(hparams: dict, slots: int, problems: list[str]) -> None:
    """A constant global_batch_size must give every slot at least one record (a sampled one is checked per trial)."""
    fixed = fixed_values(hparams)
    if "global_batch_size" in fixed:
        _, problem = per_slot_batch_size(fixed, slots)
        if problem:
            problems.append(problem)


def with_defaults(config: dict, searcher: dict) -> dict:
    """The configuration as Determined's get_experiment_config() returns it: its defaults filled in for every
    key a trial may read (the searcher's too)."""
    out = {**DEFAULTS, **config, "searcher": searcher}
    for section, defaults in SECTION_DEFAULTS.items():
        out[section] = {**defaults, **(config.get(section) or {})}
    return out


def _whole(config: dict, key: str, default: int, least: int, problems: list[str], prefix: str = "") -> int:
    value = config.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        problems.append(f"{prefix}{key}: expected a whole number >= {least}, got {value!r}")
        return default
    return value


def _check_section(config: dict, section: str, problems: list[str]) -> list[str]:
    """Check a mapping section's keys; returns the dotted keys that are accepted but ignored."""
    raw = config.get(section)
    if raw is None:
        return []
    if not isinstance(raw, dict):
        problems.append(f"{section}: expected a mapping, got {raw!r}")
        return []
    known = SUB_HONOURED[section] | SUB_IGNORED.get(section, set())
    for key in sorted(set(raw) - known):
        hint = did_you_mean(key, sorted(known))
        problems.append(f"{section}.{key}: not a key of {section}{'; ' + hint if hint else ''}")
    if section == "optimizations":
        if raw.get("mixed_precision") not in (None, "O0"):
            problems.append(f"optimizations.mixed_precision: {raw['mixed_precision']!r} is NVIDIA apex's AMP, which "
                            "playground does not provide; use O0 (or torch.autocast in the trial)")
        frequency = raw.get("aggregation_frequency", 1)
        if isinstance(frequency, bool) or not isinstance(frequency, int) or frequency < 1:
            problems.append(f"optimizations.aggregation_frequency: expected a whole number >= 1, got {frequency!r}")
    if section == "reproducibility":
        _whole(raw, "experiment_seed", 0, 0, problems, "reproducibility.")
    if section == "checkpoint_storage":
        for key in SAVE_COUNTS:      # how many checkpoints a trial keeps (checkpoint_retention.py)
            _whole(raw, key, 0, 0, problems, "checkpoint_storage.")
    return [f"{section}.{key}" for key in sorted(set(raw) & SUB_IGNORED.get(section, set()))
            if raw[key] not in (None, [], {}, "")]


def _check_metadata(config: dict, problems: list[str]) -> None:
    for key in ("name", "description"):
        if key in config and not isinstance(config[key], str):
            problems.append(f"{key}: expected a string, got {config[key]!r}")
    labels = config.get("labels", [])
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        problems.append(f"labels: expected a list of strings, got {labels!r}")
    if "perform_initial_validation" in config and not isinstance(config["perform_initial_validation"], bool):
        value = config["perform_initial_validation"]
        problems.append(f"perform_initial_validation: expected true or false, got {value!r}")


def _checkpoint_dir(raw: Any, root: str, problems: list[str]) -> str | None:
    """checkpoint_storage as a local folder: shared_fs host_path[/storage_path], or directory container_path;
    None for the run folder (no checkpoint_storage, or one without a type: on Determined, the cluster's default
    storage with the experiment's save_* counts)."""
    if not isinstance(raw, dict):
        return None
    kind = raw.get("type")
    if kind in ("s3", "gcs", "azure"):
        problems.append(f"checkpoint_storage.type: {kind} stores checkpoints in a cloud bucket, which a local run "
                        "does not do; remove checkpoint_storage (checkpoints go to the run folder) or use shared_fs "
                        "with host_path")
        return None
    if kind is None:     # the cluster's default storage, on Determined: here the run folder
        return None
    if kind == "directory":
        folder = raw.get("container_path")
    elif kind == "shared_fs":
        folder = raw.get("host_path")
        if isinstance(folder, str) and isinstance(raw.get("storage_path"), str):
            folder = os.path.join(folder, raw["storage_path"])
    else:
        problems.append(f"checkpoint_storage.type: {kind!r}; use shared_fs (host_path) or directory (container_path)")
        return None
    if not isinstance(folder, str) or not folder:
        key = "container_path" if kind == "directory" else "host_path"
        problems.append(f"checkpoint_storage.{key}: required for type {kind}, a folder on this host")
        return None
    return os.path.normpath(os.path.join(root, os.path.expanduser(folder)))


def _environment_variables(raw: Any, problems: list[str]) -> dict[str, str]:
    """environment_variables (a list of NAME=VALUE, or per device type {cpu, cuda, rocm}) for this host."""
    if raw is None:
        return {}
    where = "environment.environment_variables"
    if isinstance(raw, dict):
        for key in sorted(set(raw) - {"cpu", "cuda", "rocm"}):
            problems.append(f"{where}.{key}: not a device type (cpu, cuda, rocm)")
        raw = raw.get("cuda" if glob.glob("/dev/nvidia[0-9]*") else "cpu") or []
    if not isinstance(raw, list) or not all(isinstance(item, str) and "=" in item for item in raw):
        problems.append(f"{where}: expected a list of NAME=VALUE strings, got {raw!r}")
        return {}
    return dict(item.split("=", 1) for item in raw)


def _key_lines(text: str) -> dict[str, int]:
    """Dotted key path -> the line (1-based) where it is written, for naming a problem's place."""
    import yaml
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    lines: dict[str, int] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                path = f"{prefix}{key.value}"
                lines[path] = key.start_mark.line + 1
                walk(value, path + ".")
    walk(root, "")
    return lines


def _located(path: str, problem: str, lines: dict[str, int]) -> str:
    """`FILE, line N: PROBLEM`, N the line of the longest key path the problem starts with."""
    head = problem.split(":", 1)[0]
    parts = head.split(".")
    for n in range(len(parts), 0, -1):
        line = lines.get(".".join(parts[:n]))
        if line:
            return f"{path}, line {line}: {problem}"
    return f"{path}: {problem}"
