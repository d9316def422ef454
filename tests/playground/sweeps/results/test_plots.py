"""`sweep plots`' parallel coordinates: every parameter's axis carries its values and a colour bar reads the
objective (checked on the figure's objects, not on pixels)."""
from __future__ import annotations

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from playground.sweeps.inputs.space import Param  # noqa: E402
from playground.sweeps.inputs.spec import Objective  # noqa: E402
from playground.sweeps.results.plots import _parallel  # noqa: E402
from playground.sweeps.results.summary import TrialRow  # noqa: E402


def _row(number: int, value: float, lr: float, hidden: list, decay: float) -> TrialRow:
    return TrialRow(f"t{number:04d}", number, "complete", value, value, value, 1.0,
                    {"model_param.base_learning_rate": lr, "model_param.mlp_hidden": hidden,
                     "model_param.weight_decay": decay, "epoch_iter.num_epochs": 2})


def test_parallel_coordinates_label_each_axis_with_its_values_and_have_a_colour_bar():
    rows = [_row(0, 0.9, 0.001, [16], 0.0), _row(1, 0.4, 0.1, [8, 8], 0.003), _row(2, 0.6, 0.01, [16], 0.001),
            TrialRow("t0003", 3, "running", None, None, None, 0.0, {"model_param.base_learning_rate": 5.0})]
    spec = SimpleNamespace(objectives=[Objective("test_loss", "min")],
                           space=[Param("model_param.base_learning_rate", "log", minval=-3, maxval=-1),
                                  Param("model_param.mlp_hidden", "categorical", vals=([16], [8, 8])),
                                  Param("model_param.weight_decay", "double", minval=0.0, maxval=0.003),
                                  Param("epoch_iter.num_epochs", "const", val=2)])
    figure, axes = plt.subplots()
    try:
        assert _parallel(axes, rows, None, None, spec) == ""
        figure.canvas.draw()
        assert [t.get_text() for t in axes.get_xticklabels()] == ["base_learning_rate", "mlp_hidden", "weight_decay"]
        labels = [[t.get_text() for t in axis.get_yticklabels()] for axis in axes.child_axes]
        assert labels == [["0.001", "0.00316", "0.01", "0.0316", "0.1"],          # a log range, on a log axis
                          ["[16]", "[8, 8]"],                                     # every category
                          ["0", "0.00075", "0.0015", "0.00225", "0.003"]]         # a linear range
        bars = [a for a in figure.axes if a is not axes]
        assert len(bars) == 1 and bars[0].get_ylabel() == "test_loss"
        assert bars[0].get_ylim() == (0.4, 0.9)                                   # the finished trials' values
        assert len(axes.get_lines()) == 3                                         # one line per finished trial
    finally:
        plt.close(figure)


def test_plots_of_a_sweep_with_one_trial_say_why_there_are_no_importances_and_raise_no_warning(
        write_spec, tmp_path, capsys):
    """Optuna computes importances from one trial as all equal and warns (a raw UserWarning line): the importances
    panel is instead left out with the reason, and the other plots are drawn."""
    import warnings

    from playground.cli import main
    spec = write_spec({"name": "grid"}, {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.1]},
                                         "epoch_iter.num_epochs": 1})
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # any warning reaching the user fails the test
        assert main(["sweep", "plots", str(sweep)]) == 0
    out, err = capsys.readouterr()
    assert "importances.png: no importances: 1 completed trial(s); importances need at least 2 to compare" in err
    assert not (sweep / "plots" / "importances.png").exists()
    assert (sweep / "plots" / "history.png").is_file() and "history.png" in out
