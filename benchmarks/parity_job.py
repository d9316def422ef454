"""The job benchmarks/parity.py trains three ways (its hand-written loop, playground, and PyTorch Lightning in
parity_lightning.py): the playground opts that describe it and the deterministic kernels every loop uses. Both
benchmark modules import it; it imports neither."""
from __future__ import annotations

import os


def playground_opts(c: dict) -> dict:
    return {
        "input": {"input_name_py": "synthetic_input", "num_classes": c["classes"], "synthetic_shape": c["shape"],
                  "synthetic_train_size": c["samples"], "synthetic_test_size": 64, "decode_threads": 0},
        "model": {"model_name_py": "parity_components", "forward_pass_py": "parity_components",
                  "optimizer_py": "sgd_optimizer", "rendezvous_py": "rendezvous_env",
                  "additional_override_py": "parity_timing"},
        "model_param": {"pretrained_model": None, "memonger": False, "combine_spatial_bn": None,
                        "max_concurrent_distributed_ops": None, "base_learning_rate": c["lr"],
                        "momentum": c["momentum"], "weight_decay": c["weight_decay"], "seed": c["seed"],
                        "precision": c["precision"], "grad_accum_steps": c["accum"], "grad_clip_norm": c["clip"],
                        "ema_decay": c["ema"], "deterministic": c["deterministic"]},
        "epoch_iter": {"num_train_sample_per_epoch": c["samples"], "num_test_sample": 0, "num_epochs": c["epochs"],
                       "num_epochs_per_flow_schedule": 1, "num_train_iteration_per_test": 1_000_000,
                       "batch_per_device": c["batch"], "num_test_iter": 0},
        "distributed": {"num_shards": 1, "num_gpus": 1 if c["device"] == "cuda" else 0, "first_gpu_id": 0,
                        "num_cpus": 1, "first_cpu_id": 0},
        "output": {"gen_output_py": "output_generator", "metrics": [
            {"name": "train_loss", "meter_py": "ComputeLoss", "meter_kargs": {"blob_name": "loss"}, "is_train": True}],
            "ckpt_save_interval": 0, "ckpt_save_best": False, "ckpt_restart_mode": "off", "progress": "none"},
    }


def deterministic_kernels(c: dict) -> None:
    """What model_param.deterministic does in a playground rank, for the loops written by hand."""
    import torch
    if c["deterministic"]:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.benchmark = False
