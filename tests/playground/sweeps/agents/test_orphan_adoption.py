"""Two agents adopting the same orphan trial (its asker was killed after asking, before storing the trial's sets):
the claim file decides who runs it, and the study is written only by the one that stores the sets first. Found
by the chaos test (test_chaos.py): an agent SIGKILLed holding the journal's lock stalled the others for Optuna's
30 s, so one agent's decision to adopt was 30 s old when it wrote the sets, after the other had run the trial to
its end; its write failed with UpdateFinishedTrialError and the agent exited 1."""
from __future__ import annotations

import subprocess

from playground.sweeps.agents.coordinator import Coordinator
from playground.sweeps.agents.heartbeat import AgentId
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.spec import parse_spec
from playground.sweeps.search._optuna_private import storage_of, storage_trial_id
from playground.sweeps.search.study import load_study
from tests.playground.sweeps.agents.test_agent import _initialise
from tests.playground.sweeps.agents.test_distinct_proposals import CONTINUOUS


def _coordinator(sweep) -> Coordinator:
    """An agent's coordinator on the sweep, with a study object (and journal reader) of its own."""
    folder = SweepFolder(str(sweep))
    spec = parse_spec(folder.read_spec()["spec"], folder.root, origin=folder.spec_file)
    study = load_study(folder, spec.searcher, spec.objectives, create=False)
    return Coordinator(study, spec, folder, total=4)


def test_an_agent_late_to_adopt_an_orphan_another_agent_ran_to_its_end_writes_nothing_and_takes_its_sets(
        write_spec, tmp_path):
    spec = write_spec({"name": "random", "max_trials": 4, "seed": 0}, {**CONTINUOUS, "epoch_iter.num_epochs": 1})
    sweep = tmp_path / "sweep"
    _initialise(spec, sweep)
    asker, first, late = _coordinator(sweep), _coordinator(sweep), _coordinator(sweep)
    gone = subprocess.Popen(["true"])
    gone.wait()                                   # the asker's process: ended, on this host
    dead = AgentId(f"{asker.me.host}-{gone.pid}", asker.me.host, gone.pid, None)
    orphan = asker.study.ask(fixed_distributions=asker.dists)
    storage_of(asker.study).set_trial_user_attr(storage_trial_id(orphan), "agent", dead.record())

    stale = late.study.get_trials(deepcopy=False)[0]   # what the late agent saw when it decided to adopt
    assert "sets" not in stale.user_attrs
    ticket = first.claim()
    assert ticket.adopted and ticket.number == 0
    first.finish(ticket, "complete", [1.0])

    journal = (sweep / "study.journal").read_bytes()
    assert late._ticket(stale, adopted=True, attempt=1).sets == ticket.sets
    assert (sweep / "study.journal").read_bytes() == journal     # nothing written for a trial that has ended
    assert [t.state.name for t in late.study.get_trials()] == ["COMPLETE"]
