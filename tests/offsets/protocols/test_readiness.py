"""The readiness verdict, pure: each reason alone, and the verdict as the worst of them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gateway.kafka.types import ProtocolGroupDescription, ProtocolMember
from offsets.protocols.readiness import (BLOCKED, BUILT_IN_ASSIGNORS, CHECK, MSG_CLIENTS_OK, MSG_EMPTY, POLICIES,
                                         READY, UPGRADE_POLICIES, parsed_version, too_old, verdict)

CURRENT = [("apache-kafka-java", "4.3.1"), ("confluent-kafka-python", "2.16.1-rdkafka-2.16.0")]


def member(client: str, *, instance: str | None = None, upgraded: bool | None = None) -> ProtocolMember:
    return ProtocolMember(member_id=f"{client}-id", client_id=client, host="/10.0.0.1", instance_id=instance,
                          upgraded=upgraded, member_epoch=None)


def group(*members: ProtocolMember, assignor: str = "range", group_type: str = "classic",
          state: str = "Stable") -> ProtocolGroupDescription:
    return ProtocolGroupDescription("orders", group_type, state, assignor, members)


def levels(v) -> list[str]:
    return [r.level for r in v.reasons]


def test_a_plain_classic_group_on_a_default_cluster_is_ready():
    v = verdict(group(member("a"), member("b")), policy="bidirectional", clients=CURRENT)
    assert v.level == READY and levels(v) == [READY, READY, READY]
    assert v.reasons[-1].text == MSG_CLIENTS_OK


def test_a_policy_without_upgrade_blocks_a_group_with_members_but_not_an_empty_one():
    for policy in POLICIES:
        v = verdict(group(member("a")), policy=policy, clients=CURRENT)
        assert (v.level == BLOCKED) == (policy not in UPGRADE_POLICIES), policy
        empty = verdict(group(assignor="", state="Empty"), policy=policy, clients=CURRENT)
        assert empty.level == READY and empty.reasons[0].text == MSG_EMPTY


def test_an_unread_policy_is_a_check_with_its_reason():
    v = verdict(group(member("a")), policy=None, policy_error="the brokers disagree", clients=CURRENT)
    assert v.level == CHECK and "the brokers disagree" in v.reasons[0].text


def test_a_custom_assignor_blocks_and_kafkas_own_do_not():
    for assignor in BUILT_IN_ASSIGNORS:
        assert verdict(group(member("a"), assignor=assignor), policy="upgrade", clients=CURRENT).level == READY
    v = verdict(group(member("a"), assignor="my-rack-pinning"), policy="upgrade", clients=CURRENT)
    assert v.level == BLOCKED and "my-rack-pinning" in v.reasons[1].text


def test_static_members_need_a_check():
    v = verdict(group(member("a", instance="host-1"), member("b")), policy="bidirectional", clients=CURRENT)
    assert v.level == CHECK and "1 of 2 members are static" in v.reasons[2].text


def test_old_and_unknown_clients_are_checks_and_unknown_versions_are_said_so():
    old = verdict(group(member("a")), policy="bidirectional",
                  clients=CURRENT + [("apache-kafka-java", "3.9.1"), ("confluent-kafka-go", "2.5.0-rdkafka-2.5.0")])
    assert old.level == CHECK and "apache-kafka-java 3.9.1, confluent-kafka-go 2.5.0-rdkafka-2.5.0" in old.reasons[-1].text
    odd = verdict(group(member("a")), policy="bidirectional", clients=[("unknown", "unknown")])
    assert odd.level == CHECK and "unknown unknown" in odd.reasons[-1].text
    unread = verdict(group(member("a")), policy="bidirectional", clients=None, clients_note="no JMX source")
    assert unread.level == CHECK and "no JMX source" in unread.reasons[-1].text


def test_a_mixed_consumer_group_counts_its_classic_members_and_a_disabled_policy_blocks_their_rejoin():
    mixed = group(member("a", upgraded=True), member("b", upgraded=False), assignor="uniform", group_type="consumer")
    assert [m.client_id for m in mixed.classic_members] == ["b"]
    v = verdict(mixed, policy="bidirectional", clients=CURRENT)
    assert v.level == CHECK and "1 of 2 members still use the classic protocol" in v.reasons[0].text
    assert verdict(mixed, policy="disabled", clients=CURRENT).level == BLOCKED


def test_versions_are_read_as_the_protocol_sees_them():
    assert parsed_version("confluent-kafka-python", "2.16.1-rdkafka-2.11.0") == (2, 11, 0)
    assert too_old("confluent-kafka-python", "2.16.1-rdkafka-2.11.0") is True
    assert too_old("librdkafka", "2.12.0") is False
    assert too_old("apache-kafka-java", "4.0.0") is False and too_old("apache-kafka-java", "3.7.2") is True
    assert too_old("apache-kafka-java", "4.3.1-SNAPSHOT") is False
    assert too_old("sarama", "1.43.0") is None and too_old("apache-kafka-java", "unknown") is None


@given(st.text(), st.text())
def test_any_reported_software_is_judged_without_failing(name, version):
    assert too_old(name, version) in (True, False, None)
    v = verdict(group(member("a")), policy="bidirectional", clients=[(name, version)])
    assert v.level in (READY, CHECK)
