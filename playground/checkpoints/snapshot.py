"""The copy a checkpoint save takes of the state it is given, so training can go on while a thread writes it.

Tensors are copied into CPU buffers kept from one save to the next (pinned when the source is on a GPU), so
the training loop is blocked only for that copy. A dict or list given twice in the tree (an alias, such as the
checkpoint's `model` beside `models["model"]`) is copied once and stays one object, so the file holds it once.
"""
from __future__ import annotations

from typing import Any

import torch


class Snapshot:
    """Copies a nested state into CPU buffers kept between calls (pinned when the source is on a GPU)."""

    def __init__(self) -> None:
        self._buffers: dict[str, torch.Tensor] = {}

    def copy(self, tree: Any) -> Any:
        copied = self._copy(tree, "", {})
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return copied

    def _copy(self, node: Any, path: str, seen: dict[int, Any]) -> Any:
        if isinstance(node, torch.Tensor):
            return self._tensor(node, path)
        if not isinstance(node, (dict, list, tuple)):
            return node
        if id(node) in seen:
            return seen[id(node)]
        if isinstance(node, dict):
            copied = type(node)((k, self._copy(v, f"{path}/{k}", seen)) for k, v in node.items())
        else:
            copied = type(node)(self._copy(v, f"{path}/{i}", seen) for i, v in enumerate(node))
        seen[id(node)] = copied
        return copied

    def _tensor(self, tensor: torch.Tensor, path: str) -> torch.Tensor:
        tensor = tensor.detach()
        buffer = self._buffers.get(path)
        if buffer is None or buffer.shape != tensor.shape or buffer.dtype != tensor.dtype:
            buffer = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=tensor.is_cuda)
            self._buffers[path] = buffer
        buffer.copy_(tensor, non_blocking=tensor.is_cuda)
        return buffer
