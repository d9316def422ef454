"""Determined's PyTorch Trial API (0.2x to 0.38) and 0.38's Trainer API, trained by playground's trainer.

`trial.py` (PyTorchTrial, Batch, Epoch), `context.py` (PyTorchTrialContext), `experimental.py`
(context.experimental, members not provided), `data_loader.py`, `lr_scheduler.py` and `scalar_writer.py` are
what a trial touches; `trainer_api.py` (init, Trainer) and `fit.py` start the run; `reducers.py` (Reducer,
MetricReducer), `callbacks.py` (PyTorchCallback); `loop.py` (the trainer's methods), `loop_hook.py` (Determined's
controller: windows, validations, checkpoints, callbacks, ranks), `boundaries.py` (where a window ends),
`trial_metrics.py` (names, meters, reducer values) and `components.py` run the trial in the AnyExp loop.
playground/compat/determined/pytorch/ re-exports the public names.
"""
