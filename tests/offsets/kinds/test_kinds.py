"""Which kind a group is, and what each kind offers, without a broker: `kind_for` over a stand-in admin client."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from console.errors import ConsoleError
from gateway.kafka.errors import ClusterUnavailable, GroupNotFound, KafkaGatewayError
from gateway.kafka.types import GroupDescription, GroupListing, PartitionRef
from offsets import kinds
from offsets.kinds import CONSUMER, KINDS, SHARE, STREAMS, consumer_detail_or_kind, kind_for, kind_of_reset
from offsets.kinds.base import GroupKind
from offsets.selectors import GroupDetail, PartitionLag
from offsets.resets.planning import (
    ByDuration, FromFile, FromGroup, ShiftBy, ToCurrent, ToDatetime, ToEarliest, ToLatest, ToOffset, ToRecorded,
)
from offsets.resets.preview import check_strategy


class FakeAdmin:
    """Answers DescribeGroups with `state` (or raises `describe_error`) and ListGroups of every type with `typed`."""

    def __init__(self, *, state: str = "Dead", describe_error: Exception | None = None,
                 typed: list[GroupListing] = ()) -> None:
        self.state, self.describe_error, self.typed = state, describe_error, list(typed)
        self.typed_calls = 0

    def describe_groups(self, groups):
        if self.describe_error:
            raise self.describe_error
        return {g: GroupDescription(g, self.state, "classic", "", None, ()) for g in groups}

    def list_groups_of_every_type(self):
        self.typed_calls += 1
        return self.typed


@pytest.fixture
def admin(monkeypatch):
    def install(**kwargs) -> FakeAdmin:
        fake = FakeAdmin(**kwargs)
        monkeypatch.setattr(kinds, "cluster_admin", lambda cluster: fake)
        return fake

    return install


def _listed(group: str, group_type: str) -> GroupListing:
    return GroupListing(group, "Empty", "", group_type=group_type)


def test_a_live_consumer_group_needs_no_typed_listing(admin):
    fake = admin(state="Stable")
    assert kind_for("local", "g") is CONSUMER and fake.typed_calls == 0


@pytest.mark.parametrize("group_type, kind", [("share", SHARE), ("streams", STREAMS), ("consumer", CONSUMER),
                                              ("classic", CONSUMER)])
def test_a_name_the_consumer_calls_do_not_know_is_looked_up_by_type(admin, group_type, kind):
    admin(state="Dead", typed=[_listed("other", "share"), _listed("g", group_type)])
    assert kind_for("local", "g") is kind


@pytest.mark.parametrize("error", [GroupNotFound("gone"), KafkaGatewayError("not a consumer group")])
def test_a_describe_error_leaves_the_answer_to_the_typed_listing(admin, error):
    admin(describe_error=error, typed=[_listed("g", "streams")])
    assert kind_for("local", "g") is STREAMS


def test_a_name_no_list_knows_is_a_consumer_group(admin):
    admin(state="Dead", typed=[_listed("other", "share")])
    assert kind_for("local", "g") is CONSUMER


def test_an_unreachable_cluster_is_said_so(admin):
    fake = admin(describe_error=ClusterUnavailable("did not answer"))
    with pytest.raises(ClusterUnavailable):
        kind_for("local", "g")
    assert fake.typed_calls == 0


@pytest.fixture
def consumer_detail(monkeypatch):
    """The consumer-group detail answers `answer`, or raises it when it is an exception."""
    def install(answer):
        def detail(self, cluster, group):
            if isinstance(answer, Exception):
                raise answer
            return answer
        monkeypatch.setattr(type(CONSUMER), "detail", detail)

    return install


def _detail(state: str):
    return GroupDetail(description=GroupDescription("g", state, "classic", "", None, ()),
                       partitions=[PartitionLag(ref=PartitionRef("t", 0), committed=3, log_start=0, log_end=5,
                                                owner="")])


def test_a_consumer_group_page_gets_its_detail_without_the_typed_listing(admin, consumer_detail):
    fake = admin(typed=[_listed("g", "share")])
    detail = _detail("Empty")
    consumer_detail(detail)
    assert consumer_detail_or_kind("local", "g") == (CONSUMER, detail) and fake.typed_calls == 0


@pytest.mark.parametrize("typed, kind", [([_listed("g", "streams")], STREAMS), ([], CONSUMER)])
def test_commits_of_a_dead_group_are_checked_against_the_typed_listing(admin, consumer_detail, typed, kind):
    fake = admin(typed=typed)
    detail = _detail("Dead")
    consumer_detail(detail)
    assert consumer_detail_or_kind("local", "g") == (kind, detail if kind is CONSUMER else None)
    assert fake.typed_calls == 1


@pytest.mark.parametrize("error", [GroupNotFound("gone"), KafkaGatewayError("not a consumer group")])
@pytest.mark.parametrize("group_type, kind", [("share", SHARE), ("streams", STREAMS)])
def test_a_failed_consumer_detail_asks_which_type_the_group_is(admin, consumer_detail, error, group_type, kind):
    admin(typed=[_listed("other", "streams"), _listed("g", group_type)])
    consumer_detail(error)
    assert consumer_detail_or_kind("local", "g") == (kind, None)


def test_a_name_no_type_knows_gets_the_consumer_group_error(admin, consumer_detail):
    admin(typed=[_listed("other", "share")])
    missing = GroupNotFound("Group 'g' does not exist")
    consumer_detail(missing)
    with pytest.raises(GroupNotFound) as raised:
        consumer_detail_or_kind("local", "g")
    assert raised.value is missing


def test_an_unreachable_cluster_is_said_so_by_the_detail_too(admin, consumer_detail):
    fake = admin()
    consumer_detail(ClusterUnavailable("did not answer"))
    with pytest.raises(ClusterUnavailable):
        consumer_detail_or_kind("local", "g")
    assert fake.typed_calls == 0


def test_each_reset_action_names_its_kind():
    assert [kind_of_reset(kind.reset_action) for kind in KINDS] == list(KINDS)
    assert kind_of_reset("group.delete") is None
    assert {kind.reset_action for kind in KINDS} == {"group.offsets.reset", "share-group.offsets.reset",
                                                     "streams-group.offsets.reset"}


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.name)
def test_every_kind_has_what_the_protocol_asks(kind):
    wanted = [name for name in GroupKind.__annotations__] + [
        name for name, value in vars(GroupKind).items() if callable(value) and not name.startswith("_")]
    assert [name for name in wanted if not hasattr(kind, name)] == []


EVERY_STRATEGY = [ToEarliest(), ToLatest(), ToCurrent(), ToOffset(1), ShiftBy(-1),
                  ToDatetime("2026-01-01T00:00:00.000"), ByDuration("PT1H"), FromFile("t,0,1\n"), FromGroup(offsets={}),
                  ToRecorded(offsets={})]


@pytest.mark.parametrize("kind, refused", [
    (CONSUMER, set()),
    (SHARE, {ToCurrent, ToOffset, ShiftBy, ByDuration, FromFile, FromGroup}),
    (STREAMS, {FromGroup}),
], ids=["consumer", "share", "streams"])
def test_each_kind_refuses_what_its_tool_does_not_offer_and_reverts_always(kind, refused):
    for strategy in EVERY_STRATEGY:
        if type(strategy) in refused:
            with pytest.raises(ConsoleError):
                check_strategy(kind, strategy)
        else:
            check_strategy(kind, strategy)


def test_the_refusals_name_the_tools_options():
    with pytest.raises(ConsoleError, match="--to-earliest, --to-latest or --to-datetime.*ShiftBy is for consumer"):
        check_strategy(SHARE, ShiftBy(-1))
    with pytest.raises(ConsoleError, match="copying another group's offsets is for consumer groups"):
        check_strategy(STREAMS, FromGroup(offsets={}))


def test_only_the_kinds_that_can_delete_one_partition_revert_to_no_offset():
    assert (CONSUMER.reverts_deletions, SHARE.reverts_deletions, STREAMS.reverts_deletions) == (True, False, True)


def _imported_modules(path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_kinds_sit_below_the_resets_views_and_commands():
    root = Path(kinds.__file__).parent
    above = ("offsets.resets", "offsets.views", "offsets.forms", "offsets.services", "offsets.management")
    upward = {(path.name, name) for path in root.glob("*.py") for name in _imported_modules(path)
              if name.startswith(above)}
    assert upward == set()


def test_a_share_revert_never_deletes_single_partitions_and_says_how_to():
    refs = [PartitionRef("orders", 0), PartitionRef("orders", 3)]
    refused = SHARE.delete_positions("local", "g", refs)
    assert len(refused) == 2 and all("a whole topic at a time" in r and "'orders'" in r for r in refused)
    assert refused[0].startswith("orders-0:") and refused[1].startswith("orders-3:")
