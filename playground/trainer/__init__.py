"""The trainer's parts beside the AnyExp loop (playground/trainer/anyexp.py): the hook base class and stage order
(hook.py), the ordered hook list a run builds from its opts (hook_list.py), the training step with its
precision and accumulation (train_step.py), the trainer's state as a unit (trainer_state.py; its file layout is
playground/checkpoints/state_layout.py), and one built-in hook per file in hooks/.

User hooks subclass `playground.trainer.Hook` and are named in `model.hooks_py` (docs/hooks.md).
"""
from playground.trainer.hook import STAGES, Hook

__all__ = ["Hook", "STAGES"]
