"""A trial module importing a member of determined.pytorch that playground does not provide."""
from determined.pytorch import load_trial_from_checkpoint_path  # noqa: F401

from mnist_trial import MNistTrial  # noqa: F401
