"""The run's ordered hook list: the built-in hooks the opts switch on, the user's `model.hooks_py`, and the
iteration checkpoints last (so a checkpoint holds every other hook's state after the iteration).

Order: pending checkpoint errors, interval timer, learning rate, mixed precision, gradient clipping, EMA,
profiler, record points, skipped records, early stopping, user hooks (in the order listed), the hooks the
rank's job brought (AnyExp.add_hook: a Determined trial's controller), a trial's build_hooks(), progress,
TensorBoard, iteration checkpoints. Each hook's state is saved under its name; resuming with a hook added or
removed warns by name and the new hook starts fresh.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Iterator

from playground.options.registry import ComponentError, resolve
from playground.trainer.hook import Hook


class HookList:
    """Hooks in call order; `call(stage, ...)` runs that stage of each hook that has it (overrides Hook's no-op).

    The hooks that have a stage are found once, at its first call: the loop calls five stages every iteration,
    and calling each hook's inherited no-ops there cost more than the hooks' own work (tens of microseconds a
    step, which a short GPU step shows). The list is fixed once built.
    """

    def __init__(self, hooks: list[Hook]) -> None:
        names = [h.name for h in hooks]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"opts.model.hooks_py: hook name(s) {', '.join(twice)} used twice; each hook's state "
                             "is saved under its name, so give each a distinct `name`")
        self.hooks = hooks
        self._stages: dict[str, list[Callable[..., None]]] = {}

    def call(self, stage: str, *args: Any) -> None:
        callers = self._stages.get(stage)
        if callers is None:
            callers = self._stages[stage] = [getattr(h, stage) for h in self.hooks if _has_stage(h, stage)]
        for method in callers:
            method(*args)

    def __iter__(self) -> Iterator[Hook]:
        return iter(self.hooks)

    def get(self, name: str) -> Hook | None:
        return next((h for h in self.hooks if h.name == name), None)

    def state_dict(self) -> dict[str, dict]:
        return {hook.name: hook.state_dict() for hook in self.hooks}

    def load_state_dict(self, states: dict[str, dict], log: logging.Logger) -> None:
        """Give each hook its saved state; name the hooks added or removed since the checkpoint (a warning when
        one of them carries state, an info line when it has none to lose)."""
        for hook in self.hooks:
            if hook.name in states:
                hook.load_state_dict(states[hook.name])
            else:
                say = log.warning if hook.state_dict() else log.info
                say("hook %s is not in the checkpoint (added since it was saved): it starts fresh", hook.name)
        mine = {h.name for h in self.hooks}
        for name, state in states.items():
            if name not in mine:
                say = log.warning if state else log.info
                say("the checkpoint holds hook %s, which this run does not have (removed from the opts?): its "
                    "state is dropped", name)


def _has_stage(hook: Any, stage: str) -> bool:
    """Whether calling `stage` on `hook` can do anything: not Hook's own no-op (a function set on the instance,
    or an object that is no Hook, counts as doing something)."""
    return getattr(getattr(hook, stage), "__func__", None) is not getattr(Hook, stage)


def build_hooks(trainer: Any) -> HookList:
    """The hooks of this run, from its opts (user hooks resolved by registered name or dotted path)."""
    from playground.trainer.hooks import (checkpoint_errors, early_stopping, ema, grad_clip, interval_timer,
                                          iteration_checkpoints, learning_rate, mixed_precision, profiler,
                                          progress_bar, record_points, skipped_records, tensorboard)
    opts = trainer.opts
    p, out = opts["model_param"], opts["output"]
    hooks: list[Hook] = [checkpoint_errors.CheckpointErrors(trainer), interval_timer.IntervalTimer(trainer),
                         learning_rate.LearningRate(trainer)]
    if p["precision"] != "fp32":
        hooks.append(mixed_precision.MixedPrecision(trainer))
    if p["grad_clip_norm"] > 0:
        hooks.append(grad_clip.GradClip(trainer))
    if p["ema_decay"] > 0:
        hooks.append(ema.WeightsEMA(trainer))
    if out["profile_num_iters"] > 0 and trainer.ctx.is_writer:
        hooks.append(profiler.Profiler(trainer))
    hooks += [record_points.RecordPoints(trainer), skipped_records.SkippedRecords(trainer)]
    if out["early_stopping"] is not None:
        hooks.append(early_stopping.EarlyStopping(trainer))
    hooks += [user_hook(trainer, name, index) for index, name in enumerate(opts["model"]["hooks_py"])]
    hooks += [*trainer.hooks, *trainer.trial_hooks()]  # the job's (add_hook), a trial class's build_hooks()
    hooks.append(progress_bar.ProgressBar(trainer))
    if out["tensorboard"] and trainer.ctx.is_writer:
        hooks.append(tensorboard.TensorBoard(trainer))
    hooks.append(iteration_checkpoints.IterationCheckpoints(trainer))
    return HookList(hooks)


def user_hook(trainer: Any, name: str, index: int) -> Hook:
    """Build the hook named `name` (registered name or dotted module path): its module's Hook subclass."""
    component = resolve(name, "hook", where=f"opts.model.hooks_py[{index}]")
    cls = component.hook_class()
    if cls is None:   # resolve() checked the kind; a module changed since would land here
        raise ComponentError(f"opts.model.hooks_py[{index}]: {name!r} defines no Hook subclass")
    hook = cls(trainer)
    if not hook.name:
        hook.name = name
    return hook
