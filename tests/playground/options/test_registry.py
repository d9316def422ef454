"""Resolving component names: module_map.py, dotted paths, kinds, suggestions (playground/options/registry.py)."""
from __future__ import annotations

import sys
import textwrap

import pytest

from playground.options.registry import ComponentError, module_map, resolve


def test_every_registered_name_resolves_to_a_module_of_a_known_kind():
    for name in module_map():
        component = resolve(name)
        assert component.kinds(), name
        assert component.description, f"{name} has no one-line docstring"


def test_unknown_name_lists_the_closest_registered_names():
    with pytest.raises(ComponentError) as err:
        resolve("small_cnn_foward", "forward_pass", where="opts.model.forward_pass_py")
    message = str(err.value)
    assert message.startswith("opts.model.forward_pass_py: unknown component 'small_cnn_foward'")
    assert "small_cnn_forward" in message


def test_a_component_of_the_wrong_kind_is_refused_with_what_it_lacks():
    with pytest.raises(ComponentError, match=r"is an optimizer component, not a forward pass component: it does "
                                             r"not define gen_forward_pass_builder_fun"):
        resolve("sgd_optimizer", "forward_pass")


def test_dotted_path_reaches_a_users_own_module(tmp_path, monkeypatch):
    package = tmp_path / "mylab"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tiny_forward.py").write_text(textwrap.dedent('''
        """A user's forward pass."""
        from torch import nn
        def gen_forward_pass_builder_fun(self, model, dataset, is_train):
            return nn.Linear(4, 2), nn.CrossEntropyLoss()
    '''))
    (package / "meters.py").write_text(textwrap.dedent('''
        """User meters."""
        from playground.trainer.meters import Meter
        class CountSamples(Meter):
            def Add(self, blobs):
                self.total = self.total + len(blobs["label"]); self.count = 1
    '''))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    component = resolve("mylab.tiny_forward", "forward_pass")
    assert component.file.endswith("tiny_forward.py")
    meter = resolve("mylab.meters.CountSamples", "meter")
    assert meter.meter_class().__name__ == "CountSamples"


def test_a_module_that_fails_to_import_is_reported_with_its_error(tmp_path, monkeypatch):
    (tmp_path / "broken_component.py").write_text("import not_a_real_dependency_xyz\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    with pytest.raises(ComponentError, match="broken_component.*failed to import.*not_a_real_dependency_xyz"):
        resolve("broken_component.x")


LINEAR_FORWARD = '''
"""{doc}"""
import math
from torch import nn
from playground.trainer.model import input_shape
additional_definitions = [{{"name": "model_param.{key}", "type": int, "default": 3, "help": "Unused width."}}]
def gen_forward_pass_builder_fun(self, model, dataset, is_train):
    features = math.prod(input_shape(dataset, self.opts))
    return nn.Sequential(nn.Flatten(), nn.Linear(features, self.opts["input"]["num_classes"])), nn.CrossEntropyLoss()
'''


def _user_folder(tmp_path, *, broken: bool = False):
    """A folder outside the repository with a user's forward pass and module map (and a broken entry). Its module
    is imported afresh: another test's module of the same name may still be in sys.modules."""
    sys.modules.pop("linear_forward_of_mine", None)
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "linear_forward_of_mine.py").write_text(LINEAR_FORWARD.format(doc="A user's linear model.",
                                                                           key="mine_width"))
    entries = {"my_linear": "linear_forward_of_mine"}
    if broken:
        entries["my_broken"] = "module_that_does_not_exist_xyz"
    (folder / "module_map.py").write_text(f"MODULE_MAP = {entries!r}\n")
    return folder


def test_a_module_map_beside_the_opts_names_the_users_components_for_a_run(tmp_path, monkeypatch, capsys):
    import json

    from playground.cli import main
    from tests.conftest import tiny_opts
    monkeypatch.setenv("PLAYGROUND_MODULE_MAP", "")     # unset, and restored after whatever the run sets
    monkeypatch.setattr(sys, "path", list(sys.path))
    folder = _user_folder(tmp_path)
    opts = tiny_opts(model={"forward_pass_py": "my_linear"})
    (folder / "exp.json").write_text(json.dumps({"opts": opts}))
    assert main(["run", "--parameters-file", str(folder / "exp.json"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "my_linear  (" in out and "linear_forward_of_mine.py" in out
    assert "model_param.mine_width" in out   # its declared key is known, with its default


def test_components_and_schema_list_a_named_module_map_and_report_an_unimportable_entry(tmp_path, monkeypatch,
                                                                                          capsys):
    from playground.cli import main
    monkeypatch.setenv("PLAYGROUND_MODULE_MAP", "")     # unset, and restored after whatever the run sets
    monkeypatch.setattr(sys, "path", list(sys.path))
    folder = _user_folder(tmp_path, broken=True)
    assert main(["components", "--module-map", str(folder / "module_map.py")]) == 0
    out, err = capsys.readouterr()
    assert "my_linear" in out and "A user's linear model." in out and "small_cnn_forward" in out
    assert "my_broken" in err and "module_that_does_not_exist_xyz" in err
    assert main(["schema", "--format", "markdown"]) == 0
    out, err = capsys.readouterr()
    assert "`mine_width`" in out and "my_broken" in err


@pytest.mark.slow
def test_an_installed_package_contributes_components_through_entry_points(tmp_path):
    import json
    import os
    import subprocess

    from tests.conftest import HANG, REPO, run_cli, tiny_opts
    # an installed distribution as pip leaves it (the package, and a dist-info folder naming its entry points), in
    # a folder of its own that the commands below have on their path: the shared environment, and every other test
    # running beside this one, never see it
    site = tmp_path / "site"
    (site / "pg_extra_components_test").mkdir(parents=True)
    (site / "pg_extra_components_test" / "__init__.py").write_text("")
    (site / "pg_extra_components_test" / "linear_forward.py").write_text(
        LINEAR_FORWARD.format(doc="An installed package's linear model.", key="extra_width"))
    info = site / "pg_extra_components_test-0.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pg-extra-components-test\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text("[playground.components]\n"
                                           "extra_linear = pg_extra_components_test.linear_forward\n")
    env = {"PYTHONPATH": str(site)}
    # the listing and the run are independent commands: the listing runs while the run trains
    listing = subprocess.Popen([sys.executable, "-m", "playground.cli", "components"], cwd=tmp_path, text=True,
                               env=dict(os.environ, **env), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    opts = tiny_opts(model={"forward_pass_py": "extra_linear"}, epoch_iter={"num_epochs": 1})
    (tmp_path / "exp.json").write_text(json.dumps({"opts": opts}))
    done = run_cli("--parameters-file", "exp.json", "--run-dir", "run", cwd=tmp_path, env=env)
    listed, listed_err = listing.communicate(timeout=HANG)
    assert listing.returncode == 0, listed_err
    assert any(line.startswith("extra_linear ") and "An installed package's linear model." in line
               for line in listed.splitlines()), listed
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "run" / "opts.json").read_text())["opts"]["model_param"]["extra_width"] == 3
    assert "extra_linear" not in (REPO / "module_map.py").read_text()


@pytest.mark.slow   # a 2-rank run, an eval and a predict, as real processes
def test_a_users_module_map_py_in_the_current_folder_extends_the_projects_in_ranks_eval_and_predict(tmp_path):
    import json

    from tests.conftest import run_cli, tiny_opts
    folder = _user_folder(tmp_path)          # module_map.py (my_linear) beside the opts, the folder we run in
    opts = tiny_opts(model={"forward_pass_py": "my_linear"}, epoch_iter={"num_epochs": 1})
    opts["distributed"]["num_cpus"] = 2
    opts["epoch_iter"]["batch_per_device"] = 8
    opts["output"]["plots"] = []
    (folder / "exp.json").write_text(json.dumps({"opts": opts}))
    env = {"PLAYGROUND_MODULE_MAP": ""}
    run_dir = tmp_path / "run"
    proc = run_cli("run", "--parameters-file", "exp.json", "--run-dir", str(run_dir), script="playground",
                   cwd=folder, env=env)
    assert proc.returncode == 0, proc.stderr    # the ranks knew basic_model, sgd_optimizer ... and my_linear
    assert json.loads((run_dir / "opts.json").read_text())["module_map"] == str(folder / "module_map.py")
    # elsewhere, without --module-map: the run folder says which map its components come from
    proc = run_cli("eval", str(run_dir), script="playground", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert list(run_dir.glob("eval-*/eval.json"))
    proc = run_cli("predict", str(run_dir), "--output", str(tmp_path / "p.npy"), script="playground", cwd=tmp_path,
                   env=env)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "p.npy").exists()


def test_resolved_opts_pickle_with_their_components_as_module_names_for_spawned_ranks():
    import pickle

    from playground.options.loader import resolve_opts
    from tests.conftest import tiny_opts

    resolved = resolve_opts([("test opts", tiny_opts())])
    again = pickle.loads(pickle.dumps(resolved))
    assert again.opts == resolved.opts
    assert {p: (c.name, c.module_path, c.module) for p, c in again.components.items()} == \
           {p: (c.name, c.module_path, c.module) for p, c in resolved.components.items()}
    assert {n: c.meter_class() for n, c in again.meters.items()} == {n: c.meter_class() for n, c in resolved.meters.items()}
