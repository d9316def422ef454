"""`import determined` in the processes playground's runner starts gives playground's modules, one module
object per name, whether or not another `determined` package comes first on the path; other processes are
unaffected. With the real package (0.38.1, the `determined` extra) installed, the same holds for it."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

from playground.processes.exit_codes import EXIT_DONE
from tests.conftest import REPO
from tests.determined.det_runs import cluster_info, run

CHECKS = textwrap.dedent('''
    import sys
    import determined
    import determined as det
    import determined.core
    from determined import core
    import determined.core._context as context_module
    import playground.compat.determined as implementation
    import playground.compat.determined.core._context as implementation_context

    assert det is determined is implementation is sys.modules["determined"]
    assert core is determined.core is implementation.core is sys.modules["determined.core"]
    assert sys.modules["playground.compat.determined.core"] is core
    assert context_module is implementation_context and context_module.__spec__.name.startswith("playground.")
    assert not hasattr(det, "THE_OTHER_PACKAGE"), "the other determined package was imported"

    class Mine(det.core.DistributedContext):      # user code subclassing the API's classes
        pass
    assert issubclass(Mine, implementation.core.DistributedContext)

    by_file = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if "compat/determined" in path:
            by_file.setdefault(path, set()).add(id(module))
    assert by_file and all(len(ids) == 1 for ids in by_file.values()), by_file   # no file loaded twice

    try:
        from determined import pytorch
    except ImportError as err:
        print("pytorch:", err)
    else:
        assert pytorch is implementation.pytorch is sys.modules["determined.pytorch"]
        print("pytorch: playground's")
    try:
        import determined.common
    except ModuleNotFoundError as err:
        print("common:", err)
    info = det.get_cluster_info()
    print("trial", info.trial.trial_id, info.trial.experiment_id, info.trial.hparams, info.user_data,
          info.latest_checkpoint, info.container_rank, info.task_type, info.cluster_id)
    print("checks passed")
''')


def other_determined(tmp_path):
    """A package named determined, first on PYTHONPATH: what an installed real package would be."""
    site = tmp_path / "site"
    (site / "determined" / "core").mkdir(parents=True)
    (site / "determined" / "__init__.py").write_text("THE_OTHER_PACKAGE = True\n")
    (site / "determined" / "core" / "__init__.py").write_text("THE_OTHER_PACKAGE = True\n")
    return site


def test_in_the_runners_processes_determined_is_playgrounds_one_module_per_name(tmp_path):
    context = tmp_path / "context"
    context.mkdir()
    (context / "checks.py").write_text(CHECKS)
    site = other_determined(tmp_path)
    info = cluster_info({"lr": 0.1}, trial_id=7, experiment_id=3)
    info["experiment_config"]["data"] = {"url": "local"}
    code, output = run(["python3", "checks.py"], context, tmp_path / "run", info, slots=1,
                       env={"PYTHONPATH": str(site)})
    assert code == EXIT_DONE, output
    assert "checks passed" in output
    assert "trial 7 3 {'lr': 0.1} {'url': 'local'} None 0 TRIAL playground" in output
    assert "common: No module named 'determined.common': playground's implementation" in output


def test_other_processes_are_unaffected(tmp_path):
    site = other_determined(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(site))
    plain = subprocess.run([sys.executable, "-c", "import determined; print(determined.THE_OTHER_PACKAGE)"],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert plain.stdout.strip() == "True", plain.stderr
    # importing playground's implementation by its own name changes nothing of `determined`
    mixed = subprocess.run([sys.executable, "-c", "import playground.compat.determined as d, determined; "
                            "print(d.get_cluster_info(), determined.THE_OTHER_PACKAGE)"],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert mixed.stdout.strip() == "None True", mixed.stderr
    assert "determined" not in sys.modules


REAL = importlib.util.find_spec("determined")


@pytest.mark.skipif(REAL is None, reason="the determined package (0.38.1, setup.cfg's optional extra `determined`) "
                                         "is not installed; the test of playground's modules winning over it "
                                         "needs it")
def test_with_the_real_package_installed_the_runners_processes_still_get_playgrounds(tmp_path):
    context = tmp_path / "context"
    context.mkdir()
    (context / "checks.py").write_text(CHECKS.replace('assert not hasattr(det, "THE_OTHER_PACKAGE")',
                                                      'assert det.__version__.endswith("+playground")'))
    code, output = run(["python3", "checks.py"], context, tmp_path / "run", cluster_info(), slots=1)
    assert code == EXIT_DONE, output
    assert "checks passed" in output
    # elsewhere the real one: its version where its dependencies are installed too, else at least its files
    real = subprocess.run([sys.executable, "-c", "import importlib.util as u; print(u.find_spec('determined').origin); "
                           "import determined; print(determined.__version__)"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    origin = real.stdout.splitlines()[0]
    assert "compat" not in origin and origin.endswith("__init__.py"), real.stderr
    assert real.returncode != 0 or real.stdout.splitlines()[1] == "0.38.1", real.stdout
