"""`playground plot`: redraw one run's plots and overlay several runs."""
from __future__ import annotations

from playground.api import run
from playground.cli import main
from tests.conftest import tiny_opts


def test_plot_redraws_and_overlays_runs(tmp_path, capsys):
    for name, lr in (("a", 0.05), ("b", 0.2)):
        run(tiny_opts(model_param={"base_learning_rate": lr}), run_dir=str(tmp_path / name))
        for png in (tmp_path / name).glob("*.png"):
            png.unlink()
    assert main(["plot", str(tmp_path / "a")]) == 0
    assert sorted(p.name for p in (tmp_path / "a").glob("*.png")) == ["plot0_train_and_test_loss.png",
                                                                      "plot1_accuracy.png"]
    out = tmp_path / "compare"
    assert main(["plot", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out), "--ys", "test_loss"]) == 0
    [png] = out.glob("*.png")
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_plot_refuses_a_folder_that_is_not_a_run(tmp_path, capsys):
    assert main(["plot", str(tmp_path)]) == 2
    assert "is not a run folder: opts.json is missing" in capsys.readouterr().err
