"""Keys name what lies under the served folders, and nothing else: `..`, absolute paths and links that lead out
resolve to None (the server's 404)."""
from __future__ import annotations

from playground.ui.files.roots import Roots


def test_a_key_resolves_inside_its_folder_and_every_escape_to_nothing(tmp_path):
    served = tmp_path / "served"
    (served / "run").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (served / "out").symlink_to(tmp_path / "outside")
    (served / "in").symlink_to(served / "run")
    roots = Roots([str(served)])
    assert roots.resolve("0/run") == str(served / "run") and roots.key_of(str(served / "run")) == "0/run"
    assert roots.resolve("0") == str(served) and roots.key_of(str(served)) == "0"
    assert roots.resolve("0/in") == str(served / "run")              # a link that stays inside is followed
    for key in ("0/../outside", "0/out", f"0/{tmp_path / 'outside'}", "1/run", "x/run", "0/run/../../outside",
                "0/missing", "0/run\x00"):
        assert roots.resolve(key) is None, key
    assert roots.key_of(str(tmp_path / "outside")) is None
