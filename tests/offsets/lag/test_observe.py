"""offsets/lag/observe.py's asking, apart from Kafka: how many OffsetFetch calls and log end lookups are in flight at
once, in what order the batches are handed over, and what a spent budget or a failed lookup leaves out. The same calls against the real broker are
tests/offsets/lag/test_sweep_scale.py's and test_sampler.py's."""

from __future__ import annotations

import math
import threading
import time

from gateway.kafka import sandbox
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.librdkafka import offset_lookup
from gateway.kafka.types import LATEST, STABLE, GroupListing, OffsetAt, PartitionRef
from offsets.lag import observe
from offsets.lag.observe import Asked, Finished, Listed


class Gateway:
    """Answers as a cluster of `groups` groups would, each committed on one partition of its own topic; counts the
    OffsetFetch calls running at once."""

    cluster = "fake"

    def __init__(self, groups: int, fetch_s: float = 0.02) -> None:
        self.ids = [f"g{i:04d}" for i in range(groups)]
        self.fetch_s = fetch_s
        self.running = self.most_running = 0
        self.lock = threading.Lock()

    def describe_cluster(self):
        return None

    def list_groups_of_every_type(self):
        return [GroupListing(group_id=g, state="Empty", protocol="classic", group_type="classic") for g in self.ids]

    def group_offsets_batched(self, group_ids):
        with self.lock:
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        time.sleep(self.fetch_s)
        with self.lock:
            self.running -= 1
        return {g: {PartitionRef(f"t-{g}", 0): 1} for g in group_ids}

    def list_offsets_many(self, refs, ats, strict=True):
        return {at: {ref: OffsetAt(5 if at == LATEST else 4) for ref in refs} for at in ats}


def run(gateway: Gateway, budget_s: float = 60.0) -> list:
    parts: list = []
    observe.ask(gateway, {}, budget_s, parts.append)
    return parts


def test_offset_fetches_ahead_are_bounded_and_batches_come_in_sweep_order(monkeypatch):
    monkeypatch.setattr(observe, "SWEEP_GROUPS_PER_CALL", 10)
    gateway = Gateway(200)
    parts = run(gateway)
    assert isinstance(parts[0], Listed) and len(parts[0].listings) == 200
    batches = [p for p in parts if isinstance(p, Asked)]
    assert [g for b in batches for g in b.groups] == sorted(gateway.ids)  # never sampled: listing order
    assert 1 < gateway.most_running <= observe.FETCHES_AHEAD
    last = batches[-1]
    assert last.ends[PartitionRef("t-g0199", 0)] == 5 and last.stables[PartitionRef("t-g0199", 0)] == 4
    assert isinstance(parts[-1], Finished) and parts[-1].skipped == []


def test_a_spent_budget_asks_the_first_batch_and_skips_the_rest(monkeypatch):
    monkeypatch.setattr(observe, "SWEEP_GROUPS_PER_CALL", 10)
    gateway = Gateway(100)
    parts = run(gateway, budget_s=0.0)
    asked = [g for p in parts if isinstance(p, Asked) for g in p.groups]
    assert asked == sorted(gateway.ids)[:10]
    assert parts[-1].skipped == sorted(gateway.ids)[10:]


class SharedTopicsGateway(Gateway):
    """Groups a0.. commit on topics of their own, b0.. on topics nobody else has, c0.. on the a-groups' topics;
    looking up a b-topic's offsets is slow."""

    def __init__(self, per_kind: int) -> None:
        super().__init__(0, fetch_s=0.0)
        self.ids = [f"{kind}{i:03d}" for kind in "abc" for i in range(per_kind)]
        self.lookups: list[set[str]] = []

    def group_offsets_batched(self, group_ids):
        return {g: {PartitionRef(f"t-{'a' if g[0] == 'c' else g[0]}{g[1:]}", 0): 1} for g in group_ids}

    def list_offsets_many(self, refs, ats, strict=True):
        self.lookups.append({ref.topic for ref in refs})
        if any(ref.topic.startswith("t-b") for ref in refs):
            time.sleep(0.3)
        return super().list_offsets_many(refs, ats, strict)


def test_a_batch_whose_partitions_are_known_is_handed_over_before_an_earlier_one_still_looked_up(monkeypatch):
    monkeypatch.setattr(observe, "SWEEP_GROUPS_PER_CALL", 10)
    gateway = SharedTopicsGateway(10)
    parts = run(gateway)
    batches = [p for p in parts if isinstance(p, Asked)]
    assert [b.groups[0] for b in batches] == ["a000", "c000", "b000"]  # c's topics were known from a's lookup
    assert sorted(g for b in batches for g in b.groups) == sorted(gateway.ids)
    assert all(not topics & {f"t-c{i:03d}" for i in range(10)} for topics in gateway.lookups)  # none asked twice
    assert len(gateway.lookups) == 2
    c_batch = batches[1]
    assert c_batch.ends[PartitionRef("t-a003", 0)] == 5 and c_batch.committed["c003"] == {PartitionRef("t-a003", 0): 1}
    assert parts[-1].skipped == []


class SlowLookupsGateway(Gateway):
    """Each log end lookup waits; counts how many run at once and which partitions each asked for. `failing`: the
    lookup that asks for this partition fails."""

    def __init__(self, groups: int, failing: PartitionRef | None = None) -> None:
        super().__init__(groups, fetch_s=0.0)
        self.failing = failing
        self.looking = self.most_looking = 0
        self.asked: list[PartitionRef] = []

    def list_offsets_many(self, refs, ats, strict=True):
        with self.lock:
            self.looking += 1
            self.most_looking = max(self.most_looking, self.looking)
            self.asked += refs
        try:
            time.sleep(0.05)
            if self.failing in refs:
                raise KafkaGatewayError("the leader went away")
            return super().list_offsets_many(refs, ats, strict)
        finally:
            with self.lock:
                self.looking -= 1


def test_log_end_lookups_overlap_boundedly_and_never_ask_a_partition_twice(monkeypatch):
    monkeypatch.setattr(observe, "SWEEP_GROUPS_PER_CALL", 10)
    gateway = SlowLookupsGateway(100)
    parts = run(gateway)

    batches = [p for p in parts if isinstance(p, Asked)]
    assert [g for b in batches for g in b.groups] == sorted(gateway.ids)
    assert 1 < gateway.most_looking <= observe.LOOKUPS_IN_FLIGHT
    assert len(gateway.asked) == len(set(gateway.asked)) == 100
    for batch in batches:  # handed over only once every partition of it is known
        assert all(batch.ends[ref] == 5 for offsets in batch.committed.values() for ref in offsets)
    assert parts[-1].skipped == [] and parts[-1].stopped_by == ""


def test_a_failed_lookup_ends_the_asking_with_the_batches_not_handed_over_skipped(monkeypatch):
    monkeypatch.setattr(observe, "SWEEP_GROUPS_PER_CALL", 10)
    gateway = SlowLookupsGateway(50, failing=PartitionRef("t-g0025", 0))  # in the third batch's lookup
    parts = run(gateway)

    asked = [g for p in parts if isinstance(p, Asked) for g in p.groups]
    assert asked == sorted(gateway.ids)[:20]
    assert parts[-1].skipped == sorted(gateway.ids)[20:] and parts[-1].stopped_by == "the leader went away"


def test_the_batches_held_ahead_are_bounded(monkeypatch):
    monkeypatch.setattr(observe, "SWEEP_GROUPS_PER_CALL", 5)
    monkeypatch.setattr(observe, "BATCHES_HELD", 3)
    gateway = Gateway(100, fetch_s=0.01)
    started: list[int] = []
    real = observe._fetch_committed

    def counted(admin, chunk, streams_ids, into):
        started.append(int(chunk[0][1:]) // 5)
        real(admin, chunk, streams_ids, into)

    monkeypatch.setattr(observe, "_fetch_committed", counted)
    seen: list[int] = []

    def hand_over(part):
        if isinstance(part, Asked):
            batch = int(part.groups[0][1:]) // 5
            seen.append(batch)
            # Nothing more than BATCHES_HELD beyond the batches handed over was ever asked for.
            assert max(started) < len(seen) + observe.BATCHES_HELD - 1

    observe.ask(gateway, {}, 60.0, hand_over)
    assert seen == list(range(20))


def test_a_sweeps_listoffsets_call_fits_the_wait_of_the_client_process():
    # A call the client process has not answered within SILENT_AFTER_BOUNDS of its bounds is taken for stuck, and
    # the process is killed with every page it serves. A sweep's call looks its partitions up in windows, each
    # allowed a share of the bound, then may hand what failed to the Admin client (one bound more).
    windows = math.ceil(observe.SWEEP_PARTITIONS_PER_CALL / offset_lookup.LOOKUP_WINDOW)
    assert windows * offset_lookup.LOOKUP_SHARE_OF_TIMEOUT + 1 <= sandbox.SILENT_AFTER_BOUNDS

