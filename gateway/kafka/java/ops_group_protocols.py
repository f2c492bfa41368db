"""Which rebalance protocol consumer groups run on, through Kafka's Java Admin client.

librdkafka's DescribeConsumerGroups gives members and the assignor, but not whether a member of a consumer group
still speaks the classic protocol: Kafka's MemberDescription.upgraded() does (ConsumerGroupDescribe v1's member
type). The Java client sends ConsumerGroupDescribe and, for a group the coordinator holds as classic, DescribeGroups,
so one call describes both types."""

from __future__ import annotations

from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.java import bridge
from gateway.kafka.types import ProtocolGroupDescription, ProtocolMember

# How the Java client says a group is gone (deleted, or expired with its offsets) since it was listed.
GONE = frozenset({"GroupIdNotFoundException", "GroupNotFoundException"})


def _member(m: dict) -> ProtocolMember:
    epoch = m.get("memberEpoch")
    return ProtocolMember(member_id=m.get("memberId") or "", client_id=m.get("clientId") or "",
                          host=m.get("host") or "", instance_id=m.get("groupInstanceId"),
                          upgraded=m.get("upgraded"), member_epoch=None if epoch is None else int(epoch))


class GroupProtocolOps(bridge.JavaCalls):

    def describe_group_protocols(self, group_ids: list[str]) -> dict[str, ProtocolGroupDescription]:
        """describeConsumerGroups for classic and consumer groups at once: each group's type, state, assignor and
        members with their protocol. A group the coordinator does not know comes back Dead with no members."""
        if not group_ids:
            return {}
        ids = list(dict.fromkeys(group_ids))
        try:
            found = bridge.as_plain(self._java(lambda admin, jvm: admin.describeConsumerGroups(ids).all()))
        except KafkaGatewayError as exc:
            if exc.code not in GONE:
                raise
            found = self._described_by_halves(ids)
        described = {}
        for group_id, d in found.items():
            members = tuple(sorted((_member(m) for m in d.get("members") or ()),
                                   key=lambda m: (m.client_id, m.member_id)))
            described[group_id] = ProtocolGroupDescription(
                group_id=group_id, group_type=(d.get("type") or "classic").lower(),
                state=d.get("groupState") or "Unknown", assignor=d.get("partitionAssignor") or "", members=members)
        return described

    def _described_by_halves(self, group_ids: list[str]) -> dict[str, dict]:
        """`group_ids` failed together because one of them is gone (the Java client then fails them all): each half
        is asked again, and a half that fails is halved in turn, until the gone ones are found. A few more requests,
        and only when a group went away since it was listed."""
        if len(group_ids) == 1:
            return {group_ids[0]: {"groupState": "Dead", "members": []}}
        half = len(group_ids) // 2
        found = {}
        for part in (group_ids[:half], group_ids[half:]):
            try:
                found.update(bridge.as_plain(self._java(lambda admin, jvm, part=part:
                                                        admin.describeConsumerGroups(part).all())))
            except KafkaGatewayError as exc:
                if exc.code not in GONE:
                    raise
                found.update(self._described_by_halves(part))
        return found
