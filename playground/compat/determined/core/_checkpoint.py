"""CheckpointContext as Determined 0.38.1 has it, on a directory: the trial's checkpoint_dir (cluster info:
checkpoint_storage's host path, else <run folder>/checkpoints), or the checkpoint_storage path given to
core.init(). A checkpoint is `<dir>/<storage_id>/` with the files and metadata.json; it is written under a
temporary name and renamed when complete, so a killed write never looks complete
(playground/determined/core_files.py), then listed in the trial's det_checkpoints.jsonl. Shared-file-system
semantics: restore_path() yields the checkpoint's own folder (nothing is copied), as Determined's shared_fs.
"""
from __future__ import annotations

import contextlib
import enum
import json
import logging
import os
import pathlib
import shutil
import uuid
from typing import Any, Callable, Dict, Iterator, Optional, Tuple, Union

from playground.compat.determined.core._reports import TrialReports, jsonable
from playground.determined import core_files
from playground.outputs.atomic_files import fsync_folder

logger = logging.getLogger("determined.core")


class DownloadMode(enum.Enum):
    LocalWorkersShareDownload = "LOCAL_WORKERS_SHARE_DOWNLOAD"
    NoSharedDownload = "NO_SHARED_DOWNLOAD"


def merge_metadata(all_metadata: list) -> Tuple[Dict[str, Any], Dict[str, list]]:
    """The union of every rank's metadata, and the keys ranks gave different values (with those ranks)."""
    merged: Dict[str, Any] = {}
    owners: Dict[str, list] = {}
    conflicts: Dict[str, list] = {}
    for rank, metadata in enumerate(all_metadata):
        for key, value in (metadata or {}).items():
            if key in merged and merged[key] != value:
                conflicts[key] = owners[key] + [rank]
            merged.setdefault(key, value)
            owners.setdefault(key, []).append(rank)
    return merged, conflicts


class CheckpointContext:
    def __init__(self, dist: Any, base_path: str, folder: TrialReports, require_steps: bool = True) -> None:
        self._dist, self._base = dist, os.path.abspath(base_path)
        self._folder, self._require_steps = folder, require_steps

    # storing -----------------------------------------------------------------------------------------------
    def _begin(self, storage_id: str) -> str:
        path = core_files.partial_path(self._base, storage_id)
        os.makedirs(path, exist_ok=True)
        return path

    def _finish(self, storage_id: str, metadata: Dict[str, Any]) -> None:
        """metadata.json, then the final name (one rename), then the trial's list."""
        if self._require_steps and "steps_completed" not in metadata:
            shutil.rmtree(core_files.partial_path(self._base, storage_id), ignore_errors=True)
            raise ValueError("metadata for reported checkpoints, in the current implementation, requires a "
                             "'steps_completed' item, which has not been provided")
        partial = core_files.partial_path(self._base, storage_id)
        with open(os.path.join(partial, "metadata.json"), "w", encoding="utf-8") as handle:
            json.dump(jsonable(metadata), handle, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(partial, os.path.join(self._base, storage_id))
        fsync_folder(self._base)
        self._folder.checkpoint_stored(storage_id, self._base, metadata)
        logger.info(f"saved checkpoint {storage_id}")

    def _abandon(self, storage_id: str) -> None:
        shutil.rmtree(core_files.partial_path(self._base, storage_id), ignore_errors=True)

    def store_path(self, metadata: Optional[Dict[str, Any]] = None, *,
                   shard: bool = False) -> contextlib.AbstractContextManager:
        """A context manager yielding (path, storage_id): save into path; the checkpoint is complete on exit.
        shard=False: the chief only; shard=True: every rank calls it and writes its files into the same path."""
        return self._store_sharded(metadata) if shard else self._store_single(metadata)

    @contextlib.contextmanager
    def _store_single(self, metadata: Optional[Dict[str, Any]]) -> Iterator[Tuple[pathlib.Path, str]]:
        if self._dist.rank != 0:
            raise RuntimeError("cannot call CheckpointContext.store_path(shard=False) from non-chief worker "
                               f"(rank={self._dist.rank})")
        storage_id = str(uuid.uuid4())
        path = self._begin(storage_id)
        try:
            yield pathlib.Path(path), storage_id
        except BaseException:
            self._abandon(storage_id)
            raise
        self._finish(storage_id, metadata or {})

    @contextlib.contextmanager
    def _store_sharded(self, metadata: Optional[Dict[str, Any]]) -> Iterator[Tuple[pathlib.Path, str]]:
        storage_id = self._dist.broadcast(str(uuid.uuid4()) if self._dist.rank == 0 else None)
        if self._dist.rank == 0:
            self._begin(storage_id)
        self._dist.allgather(None)          # the folder exists before any rank writes
        yield pathlib.Path(core_files.partial_path(self._base, storage_id)), storage_id
        merged = self._merged_metadata(metadata)
        if self._dist.rank == 0:
            self._finish(storage_id, merged)
        self._dist.allgather(None)

    def _merged_metadata(self, metadata: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        merged, conflicts = merge_metadata(self._dist.allgather(metadata or {}))
        if conflicts:
            lines = "\n".join(f"    {key} uploaded by ranks {ranks}" for key, ranks in sorted(conflicts.items()))
            raise RuntimeError(f"refusing to upload with metadata conflicts:\n{lines}")
        return merged

    def upload(self, ckpt_dir: Optional[Union[str, os.PathLike]], metadata: Optional[Dict[str, Any]] = None, *,
               shard: bool = False, selector: Optional[Callable[[str], bool]] = None) -> str:
        """Copy ckpt_dir's files (those `selector` accepts, by path relative to ckpt_dir) into a new
        checkpoint; its storage_id. shard=True: every rank calls it, ckpt_dir None for a rank with nothing."""
        if not shard:
            if self._dist.rank != 0:
                raise RuntimeError(f"cannot call .upload(shard=False) from non-chief worker (rank={self._dist.rank})")
            if ckpt_dir is None:
                raise RuntimeError("cannot call .upload(ckpt_dir=None, shard=False), which would result in doing "
                                   "nothing at all")
        store = self.store_path(metadata, shard=shard)
        with store as (path, storage_id):
            if ckpt_dir is not None:
                _copy_tree(os.fspath(ckpt_dir), os.fspath(path), selector)
        return storage_id

    # reading -----------------------------------------------------------------------------------------------
    def _existing(self, storage_id: str) -> str:
        path = os.path.join(self._base, storage_id)
        if not core_files.is_complete(self._base, storage_id):
            raise FileNotFoundError(f"checkpoint {storage_id!r}: no complete checkpoint at {path}")
        return path

    def download(self, storage_id: str, ckpt_dir: Union[str, os.PathLike],
                 download_mode: DownloadMode = DownloadMode.LocalWorkersShareDownload, *,
                 selector: Optional[Callable[[str], bool]] = None) -> None:
        """Copy the checkpoint's files into ckpt_dir (created if missing). LocalWorkersShareDownload: the local
        chief copies, the other local ranks wait for it (all must call it)."""
        download_mode = DownloadMode(download_mode)
        source = self._existing(storage_id) if self._dist.local_rank == 0 or \
            download_mode == DownloadMode.NoSharedDownload else None
        if source is not None:
            _copy_tree(source, os.fspath(ckpt_dir), selector)
        if download_mode == DownloadMode.LocalWorkersShareDownload:
            self._dist.allgather_local(None)

    def get_metadata(self, storage_id: str) -> Dict[str, Any]:
        with open(os.path.join(self._existing(storage_id), "metadata.json"), encoding="utf-8") as handle:
            return json.load(handle)

    @contextlib.contextmanager
    def restore_path(self, storage_id: str, download_mode: DownloadMode = DownloadMode.LocalWorkersShareDownload,
                     *, selector: Optional[Callable[[str], bool]] = None) -> Iterator[pathlib.Path]:
        """Yields the checkpoint's folder (shared file system: read it in place; do not write into it)."""
        DownloadMode(download_mode)
        yield pathlib.Path(self._existing(storage_id))

    def delete(self, storage_id: str) -> None:
        shutil.rmtree(self._existing(storage_id))
        logger.info(f"deleted checkpoint {storage_id}")


class DummyCheckpointContext(CheckpointContext):
    def __init__(self, dist: Any, base_path: str) -> None:
        super().__init__(dist, base_path, TrialReports(None, 0), require_steps=False)


def _copy_tree(source: str, target: str, selector: Optional[Callable[[str], bool]]) -> None:
    for folder, _dirs, files in os.walk(source):
        for name in files:
            relative = os.path.relpath(os.path.join(folder, name), source)
            if selector is None or selector(relative):
                os.makedirs(os.path.dirname(os.path.join(target, relative)), exist_ok=True)
                shutil.copy2(os.path.join(folder, name), os.path.join(target, relative))
