"""The routing's witness from what each replica said: its statistics' served count and the
correlation IDs its log named (app/checker/engine/routing.py: routed). The logs themselves are
read from real replicas in test_balancer.py."""
from __future__ import annotations

from app.checker.engine import routing


def test_sequences_two_replicas_logs_name_are_split_and_only_the_logs_can_say_so():
    seen = routing.routed([10, 6], [{"1", "2", "3"}, {"3", "4"}])
    assert (seen["source"], seen["exercised"], seen["replicas_serving"]) == ("log", True, 2)
    assert (seen["sequences_placed"], seen["sequences_split"]) == (4, 1)
    unread = routing.routed([10, 6], [{"1", "2", "3"}, None])
    assert (unread["source"], unread["exercised"], unread["sequences_split"], unread["sequences_placed"]) == ("statistics", True, None, None)


def test_one_replica_serving_is_not_exercised_and_unknown_statistics_are_said_so():
    alone = routing.routed([12, 0], [{"1", "2"}, set()])
    assert (alone["exercised"], alone["why"], alone["advice"], alone["replicas_serving"]) == (False, "one_replica_served", "spread_replicas", 1)
    assert (alone["source"], alone["sequences_split"]) == ("log", 0)
    unknown = routing.routed([12, None], [None, None])
    assert (unknown["exercised"], unknown["why"], unknown["advice"]) == (False, "no_statistics", None)


def test_a_log_that_names_nothing_of_a_replica_that_served_is_not_its_witness():
    # Not that replica's log, or not at verbosity 1: reading it as "no sequence reached it" would hide a split.
    seen = routing.routed([10, 6], [{"1", "2"}, set()])
    assert (seen["source"], seen["sequences_split"], seen["exercised"]) == ("statistics", None, True)
