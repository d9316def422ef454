"""`playground predict` (playground/launch/predict.py): a run's network outputs for its test split, in dataset order, on 1
and 2 processes, as .npy or weights_only-loadable .pt."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from playground.api import run
from playground.checkpoints.files import load_state, read_pointer
from playground.cli import main as playground_main
from tests.conftest import REPO, load_experiment, run_cli


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("predict") / "run"
    opts = load_experiment("digits_mlp.json")
    opts["epoch_iter"].update(num_epochs=1)
    opts["output"].update(progress="none", plots=[])
    run(opts, run_dir=str(run_dir))
    return run_dir


def expected_outputs(run_dir) -> torch.Tensor:
    """The test digits, in order, through the checkpoint's network, computed here in one batch."""
    from components.inputs.digits_arrays import load_digits_split
    weights = load_state(read_pointer(str(run_dir / "checkpoints"), "last"))["model"]
    network = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    network.load_state_dict(weights)
    with torch.inference_mode():
        return network(torch.from_numpy(load_digits_split(0.2)[2]))


def test_predict_writes_the_test_outputs_in_dataset_order_as_a_weights_only_pt(trained, tmp_path):
    assert playground_main(["predict", str(trained), "--output", str(tmp_path / "out.pt")]) == 0
    outputs = torch.load(tmp_path / "out.pt", weights_only=True)["outputs"]
    expected = expected_outputs(trained)
    assert outputs.shape == expected.shape == (359, 10)
    assert torch.allclose(outputs, expected, atol=1e-5) and torch.equal(outputs.argmax(1), expected.argmax(1))


def test_predict_refuses_an_output_that_is_neither_npy_nor_pt(trained, tmp_path, capsys):
    assert playground_main(["predict", str(trained), "--output", str(tmp_path / "out.csv")]) == 2
    assert "name a .npy or .pt file" in capsys.readouterr().err
    assert playground_main(["predict", str(tmp_path / "nothing")]) == 2
    assert "is neither a checkpoint file nor a run folder" in capsys.readouterr().err


@pytest.mark.slow   # two spawned ranks
def test_predict_on_two_ranks_gives_the_one_rank_outputs_in_the_same_order(trained, tmp_path):
    checkpoint = read_pointer(str(trained / "checkpoints"), "last")
    done = run_cli("predict", checkpoint, "--output", str(tmp_path / "two.npy"), "--set", "distributed.num_cpus=2",
                   script="playground", cwd=REPO)
    assert done.returncode == 0, done.stderr
    two = torch.from_numpy(np.load(tmp_path / "two.npy"))
    assert torch.allclose(two, expected_outputs(trained), atol=1e-5)
