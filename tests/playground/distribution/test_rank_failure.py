"""Which errors mean "another rank was lost" (playground/distribution/rank_failure.py)."""
from __future__ import annotations

from playground.distribution.rank_failure import is_peer_lost


def test_gloos_pair_closure_after_an_application_timeout_is_a_lost_peer():
    text = ("[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:538] Read error [127.0.0.1]:29781: "
            "Application timeout caused pair closure")
    assert is_peer_lost(RuntimeError(text))
    assert not is_peer_lost(RuntimeError("injected failure on rank one"))
