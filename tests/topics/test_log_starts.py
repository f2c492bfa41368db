"""What a topic table rebuild remembers and asks again (pure): topic ids, starts, turns, changes; its encoding."""

import base64
import uuid

from hypothesis import given, settings as hsettings, strategies as st

from gateway.kafka.java.ops_topic_ids import parse_topic_listings
from gateway.kafka.types import PartitionMetadata, PartitionRef, TopicMetadata
from topics import log_starts
from topics.log_starts import Memory

TOPIC_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", min_size=1,
                      max_size=249)


def topic(name: str, partitions: int = 3) -> TopicMetadata:
    return TopicMetadata(name=name, partitions=tuple(PartitionMetadata(p, 1, (1,), (1,)) for p in range(partitions)))


def refs(name: str, partitions: int = 3) -> list[PartitionRef]:
    return [PartitionRef(name, p) for p in range(partitions)]


def memory(topics: dict[str, tuple[str, tuple]], turn: int = 0) -> Memory:
    return Memory(version="v", taken_at=1000.0, turn=turn, topics=topics)


def never_in_turn(names: list[str], rounds: int) -> int:
    """A turn on which none of `names` is re-read (there is one when there are fewer names than rounds)."""
    return next(t for t in range(rounds) if not any(log_starts.in_turn(n, t, rounds) for n in names))


def test_without_a_memory_every_start_is_asked():
    planned = log_starts.plan([topic("a"), topic("b", 1)], {"a": "id-a", "b": "id-b"}, None, changed=set(), turn=0,
                              rounds=8)

    assert planned.known == {} and planned.ask == refs("a") + refs("b", 1)


def test_a_topic_known_by_its_id_keeps_its_starts():
    rounds = 1000
    turn = never_in_turn(["kept"], rounds)
    remembered = memory({"kept": ("id-1", (5, 0, 7))})

    planned = log_starts.plan([topic("kept")], {"kept": "id-1"}, remembered, changed=set(), turn=turn, rounds=rounds)

    assert planned.ask == []
    assert planned.known == {PartitionRef("kept", 0): 5, PartitionRef("kept", 1): 0, PartitionRef("kept", 2): 7}


def test_starts_are_asked_again_for_a_new_id_a_change_a_missing_id_and_new_or_unknown_partitions():
    rounds = 1000
    names = ["recreated", "changed", "no-id", "grown", "failed-once", "new", "kept"]
    turn = never_in_turn(names, rounds)
    remembered = memory({"recreated": ("old-id", (4, 4, 4)), "changed": ("id-c", (1, 1, 1)),
                         "no-id": ("id-n", (1, 1, 1)), "grown": ("id-g", (2, 2)), "failed-once": ("id-f", (3, None, 3)),
                         "kept": ("id-k", (9, 9, 9))})
    ids = {"recreated": "new-id", "changed": "id-c", "grown": "id-g", "failed-once": "id-f", "new": "id-new",
           "kept": "id-k"}

    planned = log_starts.plan([topic(n) for n in names], ids, remembered, changed={"changed"}, turn=turn,
                              rounds=rounds)

    assert sorted(planned.ask) == sorted(refs("recreated") + refs("changed") + refs("no-id") + refs("new")
                                         + [PartitionRef("grown", 2), PartitionRef("failed-once", 1)])
    assert planned.known == {PartitionRef("grown", 0): 2, PartitionRef("grown", 1): 2,
                             PartitionRef("failed-once", 0): 3, PartitionRef("failed-once", 2): 3,
                             **{ref: 9 for ref in refs("kept")}}


@hsettings(max_examples=50, deadline=None)
@given(names=st.sets(TOPIC_NAMES, min_size=1, max_size=40), rounds=st.integers(1, 12), first=st.integers(0, 10**6))
def test_every_topic_is_read_again_exactly_once_in_any_rounds_turns_in_a_row(names, rounds, first):
    remembered = memory({name: (f"id-{name}", (1,)) for name in names})
    ids = {name: f"id-{name}" for name in names}

    asked = [ref.topic for turn in range(first, first + rounds)
             for ref in log_starts.plan([topic(n, 1) for n in names], ids, remembered, changed=set(), turn=turn,
                                        rounds=rounds).ask]

    assert sorted(asked) == sorted(names)


def test_a_remembered_start_past_the_end_just_read_is_named():
    known = {PartitionRef("t", 0): 5, PartitionRef("t", 1): 5, PartitionRef("t", 2): 5}
    ends = {PartitionRef("t", 0): 4, PartitionRef("t", 1): 5}

    assert log_starts.past_their_end(known, ends) == [PartitionRef("t", 0)]


def test_only_topics_with_an_id_are_remembered_with_every_partitions_start():
    topics = [topic("a"), topic("b", 2)]
    starts = {PartitionRef("a", 0): 3, PartitionRef("a", 2): 8, PartitionRef("b", 0): 1}

    kept = log_starts.remember(topics, {"a": "id-a"}, starts, version="v", taken_at=5.0, turn=3)

    assert kept == Memory(version="v", taken_at=5.0, turn=3, topics={"a": ("id-a", (3, None, 8))})


def test_renamed_or_new_names_the_topics_that_are_not_the_ones_remembered():
    remembered = memory({"same": ("1", ()), "recreated": ("2", ()), "gone": ("3", ())})

    assert sorted(log_starts.renamed_or_new(remembered, {"same": "1", "recreated": "9", "new": "4"})) == [
        "new", "recreated"]
    assert log_starts.renamed_or_new(None, {"a": "1"}) == ["a"]


@hsettings(max_examples=50, deadline=None)
@given(topics=st.dictionaries(TOPIC_NAMES, st.tuples(st.uuids().map(str), st.lists(
    st.one_of(st.none(), st.integers(0, 2**63 - 1)), max_size=6).map(tuple)), max_size=20),
    turn=st.integers(0, 10**9), taken_at=st.floats(0, 2e9))
def test_a_memory_comes_back_equal(topics, turn, taken_at):
    kept = Memory(version="v1", taken_at=taken_at, turn=turn, topics=topics)

    assert log_starts.decode(log_starts.encode(kept)) == kept


def test_a_torn_or_older_memory_is_no_memory():
    assert log_starts.decode(b"not zlib") is None
    import json
    import zlib

    assert log_starts.decode(zlib.compress(json.dumps({"format": 0}).encode())) is None


@given(names=st.lists(TOPIC_NAMES, unique=True, max_size=20), internal=st.booleans())
def test_the_java_listing_text_gives_every_name_and_its_id(names, internal):
    ids = {name: uuid.uuid4() for name in names}
    # The layout of TopicListing.toString in Kafka's clients, joined as a Java collection prints.
    text = "[" + ", ".join(
        f"(name={name}, topicId={base64.urlsafe_b64encode(ids[name].bytes).decode().rstrip('=')}, "
        f"internal={str(internal).lower()})" for name in names) + "]"

    assert parse_topic_listings(text) == {name: str(ids[name]) for name in names}
