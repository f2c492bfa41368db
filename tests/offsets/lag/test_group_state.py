"""The group page's one sample (offsets/lag/group_state.py): its status, time, total and trend come from the stored
row, the reasons name the partitions, and changes since the sample mark it as being re-checked."""

from datetime import UTC, datetime, timedelta

import pytest

from console.audit.actor import Actor
from console.audit.services import audited
from offsets.lag.group_state import PARTITIONS_NAMED, group_lag_state, problems_of, unexplained_moves
from offsets.lag.status import OK, STOP
from offsets.lag.window import LagWindow
from offsets.models import GroupLagStatus


def test_problems_name_the_partitions_worst_status_first_in_partition_order():
    problems = problems_of({"t-10": "WARN", "t-2": "STOP", "t-1": "STOP", "u-0": "ERR", "t-9": "WARN"})
    assert [(p.status, p.keys) for p in problems] == [("ERR", ("u-0",)), ("STOP", ("t-1", "t-2")),
                                                      ("WARN", ("t-9", "t-10"))]
    many = problems_of({f"t-{n}": "STOP" for n in range(PARTITIONS_NAMED + 3)})[0]
    assert len(many.named) == PARTITIONS_NAMED and many.unnamed == 3


def test_moves_the_sample_cannot_explain():
    sampled = {"t-0": 100, "t-1": 50, "t-2": 7}
    consuming = {"t-0": 130, "t-1": 50, "t-2": 7}
    assert unexplained_moves(sampled, consuming, has_members=True) == ()
    assert unexplained_moves(sampled, {"t-0": 0, "t-1": 60, "t-2": 7}, has_members=True) == ("t-0",)  # went back
    assert unexplained_moves(sampled, {"t-0": 100, "t-1": 60}, has_members=False) == ("t-1", "t-2")  # nobody consumes


@pytest.mark.django_db
def test_the_state_is_the_stored_sample_and_a_change_made_since_marks_it(admin):
    at = datetime(2026, 11, 29, 2, 41, 10, tzinfo=UTC)
    window = LagWindow()
    for i, (committed, end) in enumerate([(40, 200), (40, 200), (40, 200)]):
        window = window.append(at.timestamp() - 60 + 30 * i, {"t-0": (committed, end)}, 10)
    GroupLagStatus.objects.create(cluster="local", group="billing", status=STOP, reason="t-0: no members, lag 160",
                                  window=window.to_bytes(), partition_status={"t-0": STOP}, totals=[160, 160, 160],
                                  sampled_at=at)

    state = group_lag_state("local", "billing", live={"t-0": 40}, has_members=False)
    assert (state.status, state.lag, state.sampled_at, state.stale) == (STOP, 160, at, False)
    assert [(p.status, p.keys) for p in state.problems] == [(STOP, ("t-0",))]
    assert state.trend.kind == "not-consuming"

    after_reset = group_lag_state("local", "billing", live={"t-0": 200}, has_members=False)
    assert after_reset.moved == ("t-0",) and after_reset.stale

    with audited(actor=Actor(user=admin, source="web"), action="group.offsets.reset", cluster="local",
                 target="group:billing"):
        pass
    from console.audit.models import AuditEvent

    assert AuditEvent.objects.filter(created_at__gt=at).count() == 2  # the audit rows are later than the sample
    changed = group_lag_state("local", "billing")
    assert [e.outcome for e in changed.changes] == ["success"] and changed.stale

    assert group_lag_state("local", "nobody").reason == "not sampled yet"
    assert GroupLagStatus.objects.filter(group="billing").update(sampled_at=datetime.now(UTC) + timedelta(1))
    assert not group_lag_state("local", "billing").changes and group_lag_state("local", "billing").status != OK
