"""Checkpoints: policy, files and pointers, what a run's state is, preemption, pretrained weights."""
