"""The restart policy's decisions, one per kind of ending (the sweeps and --max-restarts tests run it for real)."""
from __future__ import annotations

import threading

from playground.restarts.policy import RestartPolicy, parse_log_policies


def test_each_ending_gets_its_decision_and_only_failures_spend_the_budget():
    policy = RestartPolicy(max_restarts=2)
    assert not policy.decide(0).retry
    assert not policy.decide(2).retry and "never retried" in policy.decide(2).reason
    free = policy.decide(75)
    assert free.retry and not free.consumes
    assert not policy.decide(75, stop_asked=True).retry
    assert not policy.decide(1, stop_asked=True).retry and policy.used == 0
    killed = policy.decide(-9)
    assert killed.retry and killed.consumes and "SIGKILL" in killed.reason
    assert policy.decide(1).retry and policy.used == 2
    spent = policy.decide(1)
    assert not spent.retry and "no restarts left" in spent.reason


def test_a_matching_log_policy_cancels_retries_without_spending_the_budget():
    policy = RestartPolicy(max_restarts=5)
    rule = policy.matching("Traceback ...\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n")
    assert rule is not None and rule.action == "cancel_retries"
    decision = policy.decide(1, rule)
    assert not decision.retry and "cancelled" in decision.reason and policy.used == 0
    assert policy.matching("loss 0.3\n") is None


def test_determined_style_log_policies_are_accepted_and_bad_ones_named():
    problems: list[str] = []
    rules = parse_log_policies([{"name": "ECC", "pattern": "uncorrectable ECC error",
                                 "action": {"type": "cancel_retries"}}], "spec.yaml", problems)
    assert problems == [] and rules[0].name == "ECC"
    parse_log_policies([{"pattern": "["}, {"pattern": "x", "action": "exclude_node"}, "oops"], "spec.yaml", problems)
    assert [p.split(":")[1].strip() for p in problems] == ["log_policies[0].pattern", "log_policies[1].action",
                                                           "log_policies[2]"]


def test_slots_sharing_the_budget_never_spend_more_than_it():
    policy = RestartPolicy(max_restarts=50)
    retries = []
    threads = [threading.Thread(target=lambda: retries.extend(policy.decide(1).retry for _ in range(20)))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(retries) == 50 and policy.used == 50
