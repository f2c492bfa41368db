"""offsets/lag/observe.py's asking, apart from Kafka: how many OffsetFetch calls are in flight at once, in what
order the batches are handed over, and what a spent budget leaves out. The same calls against the real broker are
tests/offsets/lag/test_sweep_scale.py's and test_sampler.py's."""

from __future__ import annotations

import threading
import time

from console.kafka.types import LATEST, STABLE, GroupListing, OffsetAt, PartitionRef
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
