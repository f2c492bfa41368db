"""The groups the alert rules read: only those a status or lag rule could hold for, with their newest total lag taken
by the database, and the same alerts as reading every group's whole totals would give."""

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alerts.conditions import Facts, GroupFacts, firing
from alerts.facts import facts_gather
from alerts.models import AlertRule
from console.clusters.models import Cluster
from offsets.lag.selectors import group_status_briefs
from offsets.models import GroupLagStatus

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
STATUSES = ["", "OK", "WARN", "ERR", "STOP", "BLOCKED"]
totals_lists = st.lists(st.one_of(st.none(), st.integers(0, 2**53)), max_size=4)


def _rule(name: str, **fields) -> AlertRule:
    return AlertRule(name=name, for_minutes=0, created_by="test", created_at=NOW, **fields)


def _everything_read() -> tuple[GroupFacts, ...]:
    """What the evaluation read before: every group, its totals parsed in Python."""
    return tuple(GroupFacts(c, g, s, r, t[-1] if t else None) for c, g, s, r, t in
                 GroupLagStatus.objects.values_list("cluster", "group", "status", "reason", "totals"))


@settings(max_examples=60, deadline=None)
@given(groups=st.lists(st.tuples(st.sampled_from(STATUSES), totals_lists), max_size=12),
       chosen=st.lists(st.sampled_from(["ERR", "STOP", "WARN", "BLOCKED"]), max_size=3),
       thresholds=st.lists(st.integers(0, 2**53), max_size=2))  # a lag rule always has one (its form)
def test_the_same_alerts_hold_as_with_every_group_read(groups, chosen, thresholds):
    GroupLagStatus.objects.all().delete()
    Cluster.objects.get_or_create(name="local", defaults={"bootstrap_servers": "127.0.0.1:9"})
    GroupLagStatus.objects.bulk_create(GroupLagStatus(cluster="local", group=f"g{i} \"<%>\"", status=status,
                                                      reason=f"why {i}", totals=totals)
                                       for i, (status, totals) in enumerate(groups))
    rules = [_rule("status", kind="status", statuses=chosen)] if chosen else []
    rules += [_rule(f"lag-{i}", kind="lag", threshold=threshold) for i, threshold in enumerate(thresholds)]

    facts = facts_gather(rules, NOW)
    everything = Facts(now=NOW, clusters=facts.clusters, groups=_everything_read())

    for rule in rules:
        assert firing(rule, facts) == firing(rule, everything)
    assert len(facts.groups) <= len(groups)
    if not rules:
        assert facts.groups == ()


def test_no_status_or_lag_rule_reads_no_group():
    GroupLagStatus.objects.create(cluster="local", group="stuck", status="ERR", totals=[5])

    assert facts_gather([_rule("quiet", kind="sampler")], NOW).groups == ()


@settings(max_examples=40, deadline=None)
@given(totals=totals_lists)
def test_the_groups_list_gets_the_newest_total_as_stored(totals):
    GroupLagStatus.objects.all().delete()
    GroupLagStatus.objects.create(cluster="local", group="g", status="OK", totals=totals)

    brief = group_status_briefs("local")["g"]

    assert brief.lag == (totals[-1] if totals else None) and brief.status == "OK"
