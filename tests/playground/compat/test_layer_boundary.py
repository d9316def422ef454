"""Compatibility layers map onto the product; the product never imports them (STYLE.md)."""
from __future__ import annotations

from tests.conftest import REPO
from tests.playground.test_package_layout import imports_of, sources


def test_the_core_never_imports_a_compatibility_layer():
    core = [p for p in sources(REPO / "playground") if "compat" not in p.relative_to(REPO / "playground").parts]
    bad = [f"{p.relative_to(REPO)} imports {name}" for p in core for name in imports_of(p)
           if name == "playground.compat" or name.startswith("playground.compat.")]
    assert bad == []


def test_the_candle_layer_uses_only_playgrounds_public_candle_surface():
    layer = sources(REPO / "playground" / "compat" / "candle")
    used = {name for p in layer for name in imports_of(p) if name.startswith("playground.")
            and not name.startswith("playground.compat")}
    # the exit codes and the user-error base class are every package's vocabulary (exit_codes.py imports nothing)
    assert used <= {"playground.candle", "playground.candle.CandleCheckpoint", "playground.processes.exit_codes",
                    "playground.processes.exit_codes.EXIT_USAGE", "playground.processes.exit_codes.UserError"}, used
