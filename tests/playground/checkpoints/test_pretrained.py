"""model_param.pretrained_model: weights only, mismatches listed and skipped (playground/checkpoints/pretrained.py)."""
from __future__ import annotations

import logging

import pytest
import torch

from playground.api import run
from playground.checkpoints.pretrained import PretrainedError, load_pretrained
from tests.conftest import tiny_opts


def test_shape_mismatch_is_listed_and_the_rest_is_loaded(tmp_path):
    first = run(tiny_opts(), run_dir=str(tmp_path / "first"))
    trained = torch.load(first["model"], weights_only=True)["model"]

    opts = tiny_opts(input={"num_classes": 5}, epoch_iter={"num_epochs": 1},
                     model_param={"pretrained_model": first["model"], "reset_epoch": True, "base_learning_rate": 1e-9})
    opts["output"]["ckpt_restart_mode"] = "off"
    second = run(opts, run_dir=str(tmp_path / "second"))
    log = (tmp_path / "second" / "train.log").read_text()
    assert ("2 mismatched parameter(s) skipped: 8.weight (file (10, 8), network (5, 8)), 8.bias (file (10,), "
            "network (5,))") in log
    after = torch.load(second["model"], weights_only=True)["model"]
    # the convolutions came from the file (a tiny learning rate barely moves them), the new head did not
    assert torch.allclose(after["0.weight"], trained["0.weight"], atol=1e-6)
    assert after["8.weight"].shape == (5, 8)
    assert second["metrics"]["epochs"][-1] == 1.0     # reset_epoch: counting starts at 0


def test_without_reset_epoch_the_run_continues_from_the_files_epoch(tmp_path):
    first = run(tiny_opts(), run_dir=str(tmp_path / "first"))        # 2 epochs
    opts = tiny_opts(epoch_iter={"num_epochs": 3}, model_param={"pretrained_model": first["model"],
                                                               "reset_epoch": False})
    opts["output"]["ckpt_restart_mode"] = "off"
    second = run(opts, run_dir=str(tmp_path / "second"))
    assert second["metrics"]["epochs"][0] > 2.0 and second["metrics"]["epochs"][-1] == 3.0


def test_a_plain_state_dict_file_works_and_a_missing_file_is_an_error(tmp_path):
    net = torch.nn.Linear(4, 2)
    path = tmp_path / "weights.pt"
    torch.save({"module.weight": torch.ones(2, 4), "module.bias": torch.zeros(2)}, path)
    assert load_pretrained(net, str(path), logging.getLogger("t")) is None
    assert torch.equal(net.weight, torch.ones(2, 4))
    with pytest.raises(PretrainedError, match="does not exist"):
        load_pretrained(net, str(tmp_path / "nope.pt"), logging.getLogger("t"))


def test_a_pickled_object_is_refused_without_running_it(tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"weights": torch.ones(1), "payload": logging.getLogger("x")}, path)
    with pytest.raises(PretrainedError, match="cannot read .* as a weights file"):
        load_pretrained(torch.nn.Linear(1, 1), str(path), logging.getLogger("t"))


@pytest.mark.parametrize("layout", ["model", "state_dict", "bare"])
@pytest.mark.parametrize("prefix", ["", "module.", "model.", "_orig_mod.", "module._orig_mod."])
def test_common_layouts_and_wrapper_prefixes_load(tmp_path, layout, prefix):
    source = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    weights = {prefix + k: v for k, v in source.state_dict().items()}
    data = weights if layout == "bare" else {layout: weights, "iter_num": 7, "config": {"n_layer": 2}}
    torch.save(data, tmp_path / "w.pt")
    target = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    load_pretrained(target, str(tmp_path / "w.pt"), logging.getLogger("t"))
    assert all(torch.equal(a, b) for a, b in zip(target.state_dict().values(), source.state_dict().values()))


def test_a_file_with_no_matching_tensor_is_an_error_naming_both_sides(tmp_path):
    torch.save({"model": {"encoder.w": torch.ones(2), "encoder.b": torch.ones(2)}}, tmp_path / "w.pt")
    with pytest.raises(PretrainedError, match=r"no tensor .* matches.*File: encoder.b, encoder.w; network: bias, weight"):
        load_pretrained(torch.nn.Linear(4, 2), str(tmp_path / "w.pt"), logging.getLogger("t"))


def test_a_missing_refused_or_weightless_pretrained_file_is_an_opts_error_before_launch(tmp_path):
    from playground.options.layers import OptsError
    from playground.launch.prepare import prepare
    torch.save({"hook": logging.getLogger}, tmp_path / "refused.pt")   # a global weights_only refuses
    torch.save({"epoch": 3}, tmp_path / "empty.pt")
    for name, message in (("missing.pt", "does not exist"), ("refused.pt", "weights_only=True"),
                          ("empty.pt", "holds no state dict")):
        opts = tiny_opts(model_param={"pretrained_model": str(tmp_path / name)})
        with pytest.raises(OptsError, match=f"opts.model_param.pretrained_model: .*{message}"):
            prepare([("test", opts)], run_dir=str(tmp_path / "run"))


def test_a_run_that_resumes_from_its_own_checkpoint_does_not_need_the_pretrained_file_any_more(tmp_path):
    from playground.checkpoints.files import set_pointer
    from playground.options.layers import OptsError
    from playground.launch.prepare import prepare
    opts = tiny_opts(model_param={"pretrained_model": str(tmp_path / "deleted-since.pt")})
    folder = tmp_path / "run" / "checkpoints"
    folder.mkdir(parents=True)
    (folder / "model_checkpoint_epoch1.pt").write_bytes(b"its own checkpoint")
    set_pointer(str(folder), "last", str(folder / "model_checkpoint_epoch1.pt"))
    prepare([("test", opts)], run_dir=str(tmp_path / "run"))    # resumes: the pretrained file is not read
    opts["output"]["ckpt_restart_mode"] = "off"                  # starts afresh: the file must be there
    with pytest.raises(OptsError, match="does not exist"):
        prepare([("test", opts)], run_dir=str(tmp_path / "run"))
