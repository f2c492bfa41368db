"""A classic group of Kafka's Java consumers with a client-side assignor of their own (tests/fixtures/java/
PinnedAssignor.java, whose assignments carry user data), on the session broker: the migration page shows it blocked
and says why, and the broker does refuse the move. A member joining on the consumer protocol is turned away ("The
group id does not exist", fatal for a librdkafka consumer) and the group stays classic, its members and their
partitions as they were."""

from __future__ import annotations

import time
import uuid

import pytest

from tests.fixtures.java_members import PINNED_ASSIGNOR, JavaMember
from tests.fixtures.members import Member
from tests.offsets.protocols.test_migration_real import _article, _page, wait_protocols

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
CLASSIC = {"ledger-1": "classic", "ledger-2": "classic"}


def _rebalances(member: JavaMember) -> list[tuple[str, list[tuple[str, int]]]]:
    """The member's assignment events in order: ("partitions_assigned" or "partitions_revoked", its partitions)."""
    return [(e["name"], sorted((p["topic"], p["partition"]) for p in e.get("partitions", [])))
            for e in member.events() if e.get("name") in ("partitions_assigned", "partitions_revoked")]


def _all_assigned(members: list[JavaMember], topic: str) -> bool:
    return sorted(p for m in members for p in m.assigned()) == [(topic, n) for n in range(4)]


def test_a_custom_assignor_is_shown_blocked_and_the_broker_refuses_the_move(local_cluster, kafka_node, topic_factory,
                                                                           pinned_assignor, viewer, client_for,
                                                                           tmp_path):
    topic = topic_factory("pinned", partitions=4)
    group = f"pinned-{uuid.uuid4().hex[:8]}"
    java = [JavaMember(kafka_node.bootstrap, group, topic, f"ledger-{n}", "classic", home=tmp_path,
                       assignor=PINNED_ASSIGNOR, classes=pinned_assignor) for n in (1, 2)]
    newcomer = None
    try:
        before = wait_protocols(group, CLASSIC, group_type="classic", timeout=90)
        assert before.group_type == "classic" and before.assignor == "pinned", before
        assert sorted(m.client_id for m in before.members) == ["ledger-1", "ledger-2"]

        article = _article(_page(client_for(viewer)), group)
        print(article)
        assert 'data-verdict="blocked"' in article, article
        assert "Client-side assignor &#x27;pinned&#x27; is not one of Kafka&#x27;s" in article
        assert "ledger-1" in article and "ledger-2" in article

        deadline = time.monotonic() + 30  # the tool prints its events a moment after the broker says Stable
        while not _all_assigned(java, topic) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _all_assigned(java, topic), [m.events()[-3:] for m in java]
        dealt = [_rebalances(m) for m in java]
        heard: list[str] = []
        newcomer = Member(kafka_node.bootstrap, group, topic, "newcomer", "consumer",
                          extra={"error_cb": lambda error: heard.append(str(error))})
        deadline = time.monotonic() + 30
        while not (heard or newcomer.errors) and time.monotonic() < deadline:
            time.sleep(0.5)
        print(heard, newcomer.errors)
        # Kafka 4.3.1 answers the heartbeat with GROUP_ID_NOT_FOUND, which librdkafka takes as fatal for the consumer
        told = [str(e) for e in [*heard, *newcomer.errors]]
        assert any("group id does not exist" in e for e in told), told
        after = wait_protocols(group, CLASSIC, group_type="classic", timeout=90)
        assert after.group_type == "classic" and after.assignor == "pinned"
        assert sorted(m.client_id for m in after.members) == ["ledger-1", "ledger-2"]
        # Nothing moved: neither Java member was asked to give up or take partitions since the refusal.
        assert [_rebalances(m) for m in java] == dealt, [m.events()[-3:] for m in java]
    finally:
        if newcomer is not None:
            newcomer.leave()
        for member in java:
            member.leave()
