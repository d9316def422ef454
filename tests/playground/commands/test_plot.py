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


def colored_pixels(png) -> int:
    """Pixels whose channels differ: plotted lines and markers (axes, text and grid are gray)."""
    import matplotlib.image
    image = matplotlib.image.imread(str(png))[:, :, :3]
    return int(((image.max(axis=2) - image.min(axis=2)) > 0.25).sum())


def test_plot_ys_draws_any_recorded_series_such_as_lr(tmp_path):
    run(tiny_opts(), run_dir=str(tmp_path / "a"))
    out = tmp_path / "lr"
    assert main(["plot", str(tmp_path / "a"), "--out", str(out), "--ys", "lr", "samples"]) == 0
    [png] = out.glob("*.png")
    assert colored_pixels(png) > 200


def test_plot_ys_with_an_unknown_name_is_an_error_naming_the_closest(tmp_path, capsys):
    run(tiny_opts(), run_dir=str(tmp_path / "a"))
    assert main(["plot", str(tmp_path / "a"), "--out", str(tmp_path / "o"), "--ys", "test_los"]) == 2
    err = capsys.readouterr().err
    assert "--ys test_los: no values recorded under that name" in err and "did you mean test_loss" in err
    assert not (tmp_path / "o").exists()


def test_plots_tell_full_test_passes_from_interval_points(tmp_path, monkeypatch):
    from matplotlib.figure import Figure
    legends: list[list[str]] = []
    save = Figure.savefig

    def record_legend(figure, *args, **kwargs):
        legends.append([t.get_text() for axes in figure.axes if axes.get_legend() for t in axes.get_legend().get_texts()])
        return save(figure, *args, **kwargs)
    monkeypatch.setattr(Figure, "savefig", record_legend)
    run(tiny_opts(), run_dir=str(tmp_path / "a"))
    assert legends[0] == ["train_loss", "test_loss (full test pass)", "test_loss (interval: a few test batches)"]
