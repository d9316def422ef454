"""Resolving component names: module_map.py, dotted paths, kinds, suggestions (playground/registry.py)."""
from __future__ import annotations

import sys
import textwrap

import pytest

from playground.registry import ComponentError, module_map, resolve


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
        from playground.meters import Meter
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
