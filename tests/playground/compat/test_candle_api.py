"""playground's implementation of candle_lib's API (playground/compat/candle), called as benchmarks call it."""
from __future__ import annotations


import numpy as np
import pytest
import torch

import playground.compat.candle as candle

DEFAULTS = """[Global_Params]
model_name = 'toy'
epochs = 4
dense = [8, 4]
learning_rate = None
activation = 'relu'
shuffle = True
extra = 'from the file'
[Monitor_Params]
timeout = 3600
"""


class ToyBenchmark(candle.Benchmark):
    def set_locals(self):
        self.required = {"epochs", "dense", "activation"}
        self.additional_definitions = [{"name": "latent_dim", "type": int, "default": 2},
                                       {"name": "residual", "type": candle.str2bool, "default": False},
                                       {"name": "model", "default": "ae", "choices": ["ae", "vae"]}]


@pytest.fixture
def bench(tmp_path, monkeypatch):
    (tmp_path / "toy_default_model.txt").write_text(DEFAULTS)
    monkeypatch.setenv("CANDLE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("CANDLE_OUTPUT_DIR", raising=False)

    def finalize(*argv: str) -> dict:
        monkeypatch.setattr("sys.argv", ["toy_baseline.py", *argv])
        return candle.finalize_parameters(ToyBenchmark(str(tmp_path), "toy_default_model.txt", "pytorch",
                                                       prog="toy_baseline"))
    return finalize


def test_the_command_line_wins_over_the_file_which_wins_over_the_defaults(bench, tmp_path):
    params = bench("--epochs", "2", "--dense", "16", "8", "--residual", "yes", "--extra=typed", "--data_type", "f64")
    assert (params["epochs"], params["dense"], params["residual"], params["extra"]) == (2, [16, 8], True, "typed")
    assert (params["shuffle"], params["latent_dim"], params["model"], params["timeout"]) == (True, 2, "ae", 3600)
    assert params["learning_rate"] is None and params["rng_seed"] == 7102 and params["data_type"] is np.float64
    assert params["ckpt_keep_limit"] == 5 and params["ckpt_save_interval"] == 0        # candle_lib's defaults
    assert params["output_dir"] == str(tmp_path / "data" / "toy" / "Output" / "EXP000" / "RUN000")
    assert params["data_dir"] == str(tmp_path / "data" / "toy" / "Data")
    assert "'epochs': 2" in (tmp_path / "data" / "toy" / "Output" / "EXP000" / "RUN000" / "final_params.txt").read_text()


def test_an_absolute_output_dir_and_the_ids_place_the_output(bench, tmp_path):
    params = bench("--output_dir", str(tmp_path / "run" / "output"), "--experiment_id", "sweep", "--run_id", "t1")
    assert params["output_dir"] == str(tmp_path / "run" / "output" / "sweep" / "t1") and params["data_type"] is np.float32


def test_config_file_replaces_the_default_model_file(bench, tmp_path):
    (tmp_path / "other.txt").write_text(DEFAULTS.replace("epochs = 4", "epochs = 9"))
    assert bench("--config_file", str(tmp_path / "other.txt"))["epochs"] == 9
    with pytest.raises(Exception, match="Specified configuration file .*missing.txt not found"):
        bench("--config_file", str(tmp_path / "missing.txt"))


@pytest.mark.parametrize("argv, message", [
    (["--nonsense", "1"], "toy_baseline: error: unrecognized arguments: --nonsense"),
    (["--epochs", "ten"], "toy_baseline: error: argument --epochs: invalid int value"),
    (["--model", "gan"], "toy_baseline: error: argument --model: invalid choice"),
    (["--epochs", "1", "2"], "toy_baseline: error: argument --epochs: expected one argument"),
    (["stray"], "toy_baseline: error: unrecognized arguments: stray"),
])
def test_a_bad_command_line_exits_2_with_argparses_kind_of_message(bench, capsys, argv, message):
    with pytest.raises(SystemExit) as stop:
        bench(*argv)
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_required_keys_and_conflicting_flags_raise_as_candle_lib(tmp_path, monkeypatch):
    (tmp_path / "m.txt").write_text("[Global_Params]\nmodel_name = 'm'\nclr_flag = True\nwarmup_lr = True\n")
    monkeypatch.setenv("CANDLE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr("sys.argv", ["m.py"])
    with pytest.raises(Exception, match=r"required parameters have not been initialized: \['epochs'\]"):
        candle.finalize_parameters(candle.Benchmark(str(tmp_path), "m.txt", "pytorch", required=["epochs"]))
    with pytest.raises(Exception, match="should not be used together"):
        candle.finalize_parameters(candle.Benchmark(str(tmp_path), "m.txt", "pytorch"))
    monkeypatch.delenv("CANDLE_DATA_DIR")
    with pytest.raises(Exception, match="You must define CANDLE_DATA_DIR"):
        candle.Benchmark(str(tmp_path), "m.txt", "pytorch")


def test_str2bool_and_argument_struct():
    assert [candle.str2bool(v) for v in ("yes", "T", "1", "no", "F", "0")] == [True] * 3 + [False] * 3
    with pytest.raises(Exception, match="Boolean value expected"):
        candle.str2bool("maybe")
    assert candle.ArgumentStruct(epochs=3, dense=[1]).epochs == 3


def test_fetch_file_finds_local_files_and_their_unpacked_folders_and_never_downloads(tmp_path, monkeypatch):
    monkeypatch.setenv("CANDLE_DATA_DIR", str(tmp_path))
    (tmp_path / "Pilot1").mkdir()
    (tmp_path / "Pilot1" / "train.csv").write_text("x\n")
    (tmp_path / "Pilot1" / "bundle").mkdir()
    (tmp_path / "top.tsv").write_text("y\n")
    assert candle.fetch_file("http://x/P1B1/train.csv", "Pilot1") == str(tmp_path / "Pilot1" / "train.csv")
    assert candle.fetch_file("http://x/bundle.tar.gz", "Pilot1", unpack=True) == str(tmp_path / "Pilot1" / "bundle")
    assert candle.fetch_file("http://x/top.tsv", "Pilot1") == str(tmp_path / "top.tsv")
    with pytest.raises(candle.CandleDataMissing) as missing:
        candle.fetch_file("ftp://x/P1B1/absent.csv", "Pilot1")
    assert str(missing.value) == (f"candle.get_file: {tmp_path / 'Pilot1' / 'absent.csv'} is missing; playground's "
                                  "candle does not download: fetch http://x/P1B1/absent.csv by hand and put it there")
    assert isinstance(missing.value, FileNotFoundError) and "\n" not in str(missing.value)


def test_a_local_archive_is_unpacked_beside_itself_and_a_wrong_md5_is_named(tmp_path, monkeypatch):
    import hashlib
    import shutil
    monkeypatch.setenv("CANDLE_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "src" / "bundle").mkdir(parents=True)
    (tmp_path / "src" / "bundle" / "a.txt").write_text("inside\n")
    shutil.make_archive(str(tmp_path / "data" / "Pilot1" / "bundle"), "gztar", tmp_path / "src", "bundle")
    unpacked = candle.fetch_file("http://x/bundle.tar.gz", "Pilot1")
    assert unpacked == str(tmp_path / "data" / "Pilot1" / "bundle")
    assert (tmp_path / "data" / "Pilot1" / "bundle" / "a.txt").read_text() == "inside\n"
    (tmp_path / "data" / "Pilot1" / "t.csv").write_text("x\n1\n")
    right = hashlib.md5(b"x\n1\n").hexdigest()
    assert candle.get_file("t.csv", "http://x/t.csv", md5_hash=right, cache_subdir="Pilot1").endswith("t.csv")
    with pytest.raises(candle.CandleDataMissing, match=r"t.csv does not have the MD5 0+ .*fetch http://x/t.csv by "
                                                       "hand and replace it"):
        candle.get_file("t.csv", "http://x/t.csv", md5_hash="0" * 32, cache_subdir="Pilot1")


def test_the_pytorch_helpers_build_what_their_names_say():
    model = torch.nn.Linear(3, 2)
    defaults = candle.keras_default_config()
    assert isinstance(candle.build_pytorch_optimizer(model, "sgd", 0.1, defaults), torch.optim.SGD)
    assert isinstance(candle.build_pytorch_optimizer(model, "adam", 0.1, defaults), torch.optim.Adam)
    assert isinstance(candle.build_pytorch_activation("tanh"), torch.nn.Tanh)
    assert isinstance(candle.get_pytorch_function("mse"), torch.nn.MSELoss)
    candle.pytorch_initialize(model.bias, "constant", defaults, constant=0.5)
    assert torch.equal(model.bias, torch.full((2,), 0.5))
    with pytest.raises(Exception, match=r'No pytorch optimizer found for "lamb" \(known: sgd, rmsprop'):
        candle.build_pytorch_optimizer(model, "lamb", 0.1, defaults)


def test_a_member_playground_does_not_offer_is_named_in_one_line_and_is_an_attribute_error():
    with pytest.raises(candle.CandleMemberMissing) as missing:
        candle.plot_history
    assert str(missing.value).startswith("candle.plot_history: playground's candle (used because no other `candle` "
                                         "module could be imported) does not provide it")
    assert isinstance(missing.value, AttributeError) and "\n" not in str(missing.value)
    assert not hasattr(candle, "plot_history") and hasattr(candle, "load_csv_data")


def test_the_checkpoint_callback_alone_saves_in_ckpt_directory_and_restarts_with_the_rng(tmp_path):
    def train(folder, stop_after: int | None = None) -> tuple[dict | None, list[float]]:
        params = {"epochs": 2, "output_dir": str(folder), "ckpt_directory": None, "ckpt_save_interval": 1}
        torch.manual_seed(0)
        model = torch.nn.Linear(2, 1)
        ckpt = candle.CandleCkptPyTorch(params)
        ckpt.set_model({"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.1)})
        J = ckpt.restart(model)
        draws = []
        for epoch in range(J["epoch"] if J else 0, stop_after or params["epochs"]):
            draws.append(torch.rand(1).item())
            ckpt.ckpt_epoch(epoch, 1.0 / (epoch + 1))
        return J, draws

    _, whole = train(tmp_path / "whole")
    assert train(tmp_path / "parts", stop_after=1) == (None, whole[:1])
    J, rest = train(tmp_path / "parts")
    assert (J["epoch"], J["save_best_metric"], rest) == (1, "val_loss", whole[1:])
    assert sorted(p.name for p in (tmp_path / "parts" / "ckpts").glob("*.pt")) == [
        "model_checkpoint_epoch1.pt", "model_checkpoint_epoch2.pt"]
