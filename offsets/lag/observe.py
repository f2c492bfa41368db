"""The Kafka side of a lag sweep: what each cluster answers, handed over a part at a time.

At 50,000 groups asking Kafka and storing what it said each take seconds; handing over each batch of groups as soon
as its committed and log end offsets are known lets the storing of one batch overlap the asking for the next.
Every call covers a bounded number of groups or partitions, and a budget ends the asking early, the most urgent
groups having been asked first (offsets/lag/priority.py).
"""

from __future__ import annotations

import logging
import queue
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from operator import attrgetter

from console.clusters.selectors import background_lane, cluster_admin
from console.errors import ConsoleError
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.types import LATEST, STABLE, GroupListing, PartitionRef
from offsets.committed import committed_offsets
from offsets.group_listing import groups_of_every_type_of
from offsets.lag.priority import PreviousSample, sweep_order

log = logging.getLogger(__name__)
MAX_PARALLEL_CLUSTERS = 32
# Each gateway call of a sweep covers at most this many groups (OffsetFetch: one multi-group request per
# coordinator) or partitions (ListOffsets, in the gateway's windows), so every call stays within the bounded wait
# of the cluster's client process, and the sweep can stop between calls when its budget is spent. The client
# process is replaced as stuck when a call has not answered within about three of its bounds, and each lookup
# window may take half a bound (gateway/kafka/librdkafka/offset_lookup.py): 20,000 partitions were 40 windows in a
# row, which a busy machine could not finish in that time, so a working process was killed with the pages it served.
SWEEP_GROUPS_PER_CALL = 2000
SWEEP_PARTITIONS_PER_CALL = 2000
# OffsetFetch calls start only within this share of the budget: storing what was fetched needs the rest.
FETCH_SHARE = 0.6
# OffsetFetch calls running at once, ahead of the batch being looked up: each is mostly a wait on the group
# coordinators, and once every partition's log end is known a batch costs nothing else.
FETCHES_AHEAD = 3
# Batches fetched (or being fetched) and not yet handed over, at most: what the asking holds in memory at once.
BATCHES_HELD = 8
# Log end lookups running at once, each for the partitions of one fetched batch that no earlier lookup covers. The
# first batches of a big cluster bring most of its partitions; one at a time, their lookups (each a wait on the
# slowest leader, window after window) were most of a sweep's asking at 40,000 partitions on three brokers.
LOOKUPS_IN_FLIGHT = 2


@dataclass(frozen=True)
class Listed:
    """First of a sweep's parts: every group the cluster listed, of every type (share groups commit no offsets,
    so the sweep asks for the others only), and why only the consumer groups, if so. The groups list is rebuilt
    from it after the sweep, without listing again."""

    listings: list[GroupListing]
    problem: str = ""
    taken_at: float = 0.0  # epoch seconds


@dataclass(frozen=True)
class Asked:
    """A batch of groups (in sweep order) with their committed offsets and the offsets of the partitions behind
    them: the log end and read_committed's last stable offset. A partition whose leader did not answer is absent.
    `ends` and `stables` are the sweep's own maps, which the asking goes on adding later batches' partitions to
    (never changing or removing one): readers look partitions up in them, and never iterate over them."""

    groups: list[str]
    committed: dict[str, dict[PartitionRef, int]]
    ends: dict[PartitionRef, int]
    stables: dict[PartitionRef, int]


@dataclass(frozen=True)
class Finished:
    """Last part: the groups not asked (in the order they would have been), and why."""

    asked_s: float
    budget_s: float
    at: float  # time.monotonic() when the asking ended
    skipped: list[str] = field(default_factory=list)
    stopped_by: str = ""  # the error that ended asking early, when it was not the budget


@dataclass(frozen=True)
class Failed:
    """The only part of a sweep whose first calls failed: the cluster is down, say."""

    error: KafkaGatewayError | ConsoleError
    asked_s: float


Part = Listed | Asked | Finished | Failed


def ask(admin: KafkaAdmin, previous: dict[str, PreviousSample], budget_s: float, hand_over) -> None:
    """One ListGroups of every type, then for the groups in sweep_order, SWEEP_GROUPS_PER_CALL at a time until the
    budget's asking share is spent: OffsetFetch, and ListOffsets (latest and last stable) for the partitions not yet
    known, SWEEP_PARTITIONS_PER_CALL at a time; up to FETCHES_AHEAD later batches' OffsetFetch run while the
    ListOffsets of up to LOOKUPS_IN_FLIGHT batches do.
    Each batch is handed over as soon as it is complete: the earliest one when its partitions have been looked up,
    and a later one already fetched as soon as every partition of it is known (groups sharing topics with earlier
    batches), so storing has work while the first batches' lookups run. The first batch is always asked, so a
    sweep samples something however short its budget; an error there fails the sweep, an error later ends it with
    the batches not handed over skipped."""
    started = time.monotonic()
    taken_at = time.time()
    listings, problem = groups_of_every_type_of(admin)
    listed_s = time.monotonic() - started
    hand_over(Listed(listings, problem, taken_at))
    sampled = [g for g in listings if g.group_type != "share"]
    order = sweep_order([g.group_id for g in sampled], previous)
    log.debug("Lag sweep of %s: %d groups listed in %.2f s, ordered in %.2f s", admin.cluster, len(listings),
              listed_s, time.monotonic() - started - listed_s)
    sweep = _Asking(admin, order, {g.group_id for g in sampled if g.group_type == "streams"}, started, budget_s,
                    hand_over)
    stopped_by = sweep.run()
    skipped = [g for i in [*sweep.held, *range(sweep.submitted, len(sweep.chunks))] for g in sweep.chunks[i]]
    if skipped:
        log.warning("Lag sweep of %s: %d of %d groups not asked (%s)", admin.cluster, len(skipped), len(order),
                    stopped_by or f"budget of {budget_s:g} s spent")
    log.debug("Lag sweep of %s: asking done in %.2f s, %d of %d batches handed over ahead of an earlier one",
              admin.cluster, time.monotonic() - started, sweep.early, len(sweep.chunks))
    hand_over(Finished(time.monotonic() - started, budget_s, time.monotonic(), skipped, stopped_by))


class _Asking:
    """The batches of one sweep's asking, in flight: OffsetFetch of later batches (Kafka's Java Admin) runs while
    earlier batches' log ends are looked up (librdkafka): two transports, each mostly waiting on the brokers."""

    def __init__(self, admin: KafkaAdmin, order: list[str], streams_ids: set[str], started: float, budget_s: float,
                 hand_over) -> None:
        self.admin, self.streams_ids, self.started, self.budget_s = admin, streams_ids, started, budget_s
        self.hand_over = hand_over
        self.chunks = [order[start:start + SWEEP_GROUPS_PER_CALL]
                       for start in range(0, len(order), SWEEP_GROUPS_PER_CALL)]
        self.ends: dict[PartitionRef, int] = {}
        self.stables: dict[PartitionRef, int] = {}
        self.ahead = ThreadPoolExecutor(max_workers=FETCHES_AHEAD, thread_name_prefix="sweep-ahead")
        self.lookups = ThreadPoolExecutor(max_workers=LOOKUPS_IN_FLIGHT, thread_name_prefix="sweep-ends")
        self.held: dict[int, Future] = {}  # batch index -> its OffsetFetch, for the batches not handed over, in order
        self.missing: dict[int, set[PartitionRef]] = {}  # fetched batches' partitions whose offsets are not known
        # Lookups started, in batch order, not yet collected: batch index -> (its lookup, partitions, when started).
        # What they find joins `ends` in the asking thread only, when collected in order, so that a batch handed
        # over never reads a half-merged answer and the storing thread never sees `ends` grow under an iteration.
        self.looking: dict[int, tuple[Future, int, float]] = {}
        self.claimed: set[PartitionRef] = set()  # partitions some lookup of this sweep has been started for
        self.submitted = 0
        self.early = 0  # batches handed over ahead of an earlier one

    def committed_of(self, i: int) -> tuple[dict[str, dict[PartitionRef, int]], float] | None:
        # The budget counts when the call starts, not when it was queued; the first batch is always asked.
        if i and time.monotonic() - self.started >= FETCH_SHARE * self.budget_s:
            return None
        into: dict[str, dict[PartitionRef, int]] = {}
        fetch_started = time.monotonic()
        _fetch_committed(self.admin, self.chunks[i], self.streams_ids, into)
        return into, time.monotonic() - fetch_started

    def unknown(self, i: int, committed: dict[str, dict[PartitionRef, int]]) -> set[PartitionRef]:
        """Batch i's partitions whose offsets no lookup of this sweep has found yet."""
        if i not in self.missing:
            self.missing[i] = {ref for offsets in committed.values() for ref in offsets}
        self.missing[i] -= self.ends.keys()
        return self.missing[i]

    def top_up(self) -> None:
        while self.submitted < len(self.chunks) and len(self.held) < BATCHES_HELD:
            self.held[self.submitted] = self.ahead.submit(self.committed_of, self.submitted)
            self.submitted += 1

    def hand(self, i: int, committed: dict[str, dict[PartitionRef, int]]) -> None:
        self.early += i != next(iter(self.held))
        del self.held[i]
        self.missing.pop(i, None)
        self.looking.pop(i, None)  # a lookup for no partition of its own: earlier ones found them all
        self.hand_over(Asked(self.chunks[i], committed, self.ends, self.stables))

    def start_lookups(self) -> None:
        """Starts the log end lookups of fetched batches in batch order (a later batch never claims a partition
        before an earlier one), while fewer than LOOKUPS_IN_FLIGHT run."""
        for i, future in list(self.held.items()):
            if i in self.looking:
                continue
            if sum(not lookup.done() for lookup, _, _ in self.looking.values()) >= LOOKUPS_IN_FLIGHT:
                return
            if not future.done() or future.exception() is not None or future.result() is None:
                return  # not fetched yet, failed, or past the budget: run() finds out in its turn
            refs = sorted(self.unknown(i, future.result()[0]) - self.claimed, key=_topic_then_partition)
            self.claimed.update(refs)
            self.looking[i] = (self.lookups.submit(_ends_of, self.admin, refs), len(refs), time.monotonic())

    def hand_over_known(self) -> None:
        for i, future in list(self.held.items()):
            answer = future.result() if future.done() and future.exception() is None else None
            if answer is not None and not self.unknown(i, answer[0]):
                self.hand(i, answer[0])

    def run(self) -> str:
        """Asks until every batch is handed over or the budget is spent; returns why it stopped early, if it did."""
        try:
            self.top_up()
            while self.held:
                i, future = next(iter(self.held.items()))  # the earliest batch not handed over
                try:
                    answer = future.result()
                    if answer is None:  # the budget's asking share was spent before its OffsetFetch could start
                        return ""
                    committed, fetch_s = answer
                    self.start_lookups()  # this batch's, if not started yet (every earlier one has been collected)
                    lookup, looked_for, lookup_started = self.looking.pop(i)
                    found_ends, found_stables = lookup.result()
                    self.ends.update(found_ends)
                    self.stables.update(found_stables)
                    log.debug("Lag sweep of %s: offsets of %d groups in %.2f s, end offsets of %d partitions in "
                              "%.2f s", self.admin.cluster, len(self.chunks[i]), fetch_s, looked_for,
                              time.monotonic() - lookup_started)
                except KafkaGatewayError as exc:
                    if not i:
                        raise
                    return exc.message
                self.hand(i, committed)
                self.hand_over_known()
                self.top_up()
                self.start_lookups()
            return ""
        finally:  # when asking ends early, the batches being fetched or looked up ahead are not waited for
            self.ahead.shutdown(wait=False, cancel_futures=True)
            self.lookups.shutdown(wait=False, cancel_futures=True)


_topic_then_partition = attrgetter("topic", "partition")  # a C-level key: PartitionRef's own order is Python code


def _ends_of(admin: KafkaAdmin, refs: list[PartitionRef]) -> tuple[dict, dict]:
    """Log end and last stable offsets of `refs`, by partition (those a leader did not give are left out)."""
    ends: dict[PartitionRef, int] = {}
    stables: dict[PartitionRef, int] = {}
    for start in range(0, len(refs), SWEEP_PARTITIONS_PER_CALL):
        found = admin.list_offsets_many(refs[start:start + SWEEP_PARTITIONS_PER_CALL], [LATEST, STABLE],
                                        strict=False)
        ends.update((ref, at.offset) for ref, at in found[LATEST].items())
        stables.update((ref, at.offset) for ref, at in found[STABLE].items())
    return ends, stables


def _fetch_committed(admin: KafkaAdmin, chunk: list[str], streams_ids: set[str], into: dict) -> None:
    """One multi-group OffsetFetch per coordinator for the chunk's consumer groups (offsets/committed.py), and the
    streams groups' offsets (which commit as consumer groups do)."""
    into.update(committed_offsets(admin, [g for g in chunk if g not in streams_ids]))
    streams = [g for g in chunk if g in streams_ids]
    if streams:
        into.update(admin.streams_group_offsets(streams))


class Sweeps:
    """Asks every cluster at once, each in a thread of its own and bounded on its own, so a sweep takes about as
    long as the slowest cluster rather than the sum of their timeouts. Only the Kafka calls run in the threads; the
    caller reads each cluster's parts (parts(name)) and keeps the database to itself."""

    def __init__(self, names: list[str], previous: dict[str, dict[str, PreviousSample]], budget_s: float) -> None:
        self._queues: dict[str, queue.Queue] = {name: queue.Queue() for name in names}
        self._pool = ThreadPoolExecutor(max_workers=max(1, min(MAX_PARALLEL_CLUSTERS, len(names))))
        for name in names:
            try:
                # Reads the registration here, not in the thread; the background clients: no page waits on these.
                admin = background_lane(cluster_admin(name))
            except ConsoleError as exc:  # e.g. a secret's environment variable is not set
                self._queues[name].put(Failed(exc, 0.0))
                continue
            self._pool.submit(self._ask, admin, previous.get(name, {}), budget_s, self._queues[name].put)

    @staticmethod
    def _ask(admin: KafkaAdmin, previous: dict[str, PreviousSample], budget_s: float, hand_over) -> None:
        started = time.monotonic()
        try:
            ask(admin, previous, budget_s, hand_over)
        except (KafkaGatewayError, ConsoleError) as exc:
            hand_over(Failed(exc, time.monotonic() - started))
        except BaseException as exc:  # the reader must never wait for a part that will not come
            hand_over(Failed(ConsoleError(f"The lag sweep of {admin.cluster} failed: {exc!r}"),
                             time.monotonic() - started))
            raise

    def parts(self, name: str) -> Iterator[Part]:
        """The cluster's parts in order, each as soon as it is there, ending with Finished or Failed."""
        while True:
            part = self._queues[name].get()
            yield part
            if isinstance(part, Finished | Failed):
                return

    def close(self) -> None:
        self._pool.shutdown(wait=True)
