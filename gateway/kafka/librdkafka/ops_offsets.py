"""Log start, log end and timestamp lookups, many partitions per request."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.librdkafka import offset_lookup
from gateway.kafka.librdkafka.base import AdminBase
from gateway.kafka.librdkafka.mapping import RETRIABLE_PARTITION_CODES
from gateway.kafka.types import EARLIEST, LATEST, STABLE, OffsetAt, PartitionRef

_ATTEMPTS = 3
_RETRY_PAUSE_S = 0.3
# Partitions per ListOffsets call, and such calls awaited together. librdkafka looks each call's leaders up and
# sends one request per leader; windows keep every request and response (and what is in flight) a bounded size
# however many partitions the caller asks about (a lag sweep: every partition any group committed on).
OFFSETS_WINDOW = 5000
OFFSETS_WINDOWS_IN_FLIGHT = 4


def _spec(at: str | int) -> OffsetSpec:
    if at == EARLIEST:
        return OffsetSpec.earliest()
    if at in (LATEST, STABLE):
        return OffsetSpec.latest()
    return OffsetSpec.for_timestamp(int(at))


def _windows(refs: list[PartitionRef]) -> list[list[PartitionRef]]:
    ordered = sorted(refs)
    return [ordered[start:start + OFFSETS_WINDOW] for start in range(0, len(ordered), OFFSETS_WINDOW)]


class OffsetOps(AdminBase):
    def list_offsets(self, refs: list[PartitionRef], at: str | int) -> dict[PartitionRef, OffsetAt]:
        """One ListOffsets round for all `refs`; `at` is "earliest", "latest", "stable" or a timestamp in ms.

        Read-uncommitted like Kafka's own tools, so "latest" is the high watermark; "stable" asks read_committed.
        """
        return self.list_offsets_many(refs, [at])[at]

    def list_offsets_many(self, refs: list[PartitionRef], ats: list[str | int], *,
                          strict: bool = True) -> dict[str | int, dict[PartitionRef, OffsetAt]]:
        """Several ListOffsets rounds (e.g. earliest and latest) sent together, a bounded window at a time.

        Partitions failing with a passing error (leadership moving, a topic just created) are asked again, at most
        twice. With strict=False, partitions that still fail are left out instead of failing the whole call.
        """
        return self.list_offsets_of({at: refs for at in ats}, strict=strict)

    def list_offsets_of(self, wanted: dict[str | int, list[PartitionRef]], *,
                        strict: bool = True) -> dict[str | int, dict[PartitionRef, OffsetAt]]:
        """As list_offsets_many, with partitions of their own for each kind ({kind: partitions}): the topic table
        asks log ends of every partition and log starts of only some, in one call."""

        def run(admin: AdminClient) -> dict[str | int, dict[PartitionRef, OffsetAt]]:
            results: dict[str | int, dict[PartitionRef, OffsetAt]] = {at: {} for at in wanted}
            pending = {at: list(refs) for at, refs in wanted.items() if refs}
            for attempt in range(_ATTEMPTS):
                failures = self._offsets_round(admin, pending, results)
                only_passing = all(e.code in RETRIABLE_PARTITION_CODES for f in failures.values() for e in f.values())
                if failures and only_passing and attempt + 1 < _ATTEMPTS:
                    pending = {at: list(failed) for at, failed in failures.items()}
                    time.sleep(_RETRY_PAUSE_S)
                    continue
                if strict:
                    for at, failed in failures.items():
                        self._raise_partition_failures({**results[at], **failed})
                return results
            return results

        return self._call(run)

    def _offsets_round(self, admin: AdminClient, pending: dict, results: dict) -> dict:
        """Sends the ListOffsets of every offset kind in windows of OFFSETS_WINDOW partitions (in partition order,
        so a window touches few topics), at most OFFSETS_WINDOWS_IN_FLIGHT at a time; stores what succeeded and
        returns {kind: {ref: error}}. Log starts, ends and last stable offsets of many partitions are looked up
        by a consumer instead (offset_lookup), which holds the GIL far less; what it could not tell comes here."""
        failures: dict[str | int, dict[PartitionRef, KafkaGatewayError]] = {}
        pending = self._looked_up(pending, results)
        windows = [(at, window) for at, wanted in pending.items() for window in _windows(wanted)]
        for first in range(0, len(windows), OFFSETS_WINDOWS_IN_FLIGHT):
            sent = [(at, admin.list_offsets({TopicPartition(r.topic, r.partition): _spec(at) for r in window},
                                            request_timeout=self.timeout,
                                            isolation_level=IsolationLevel.READ_COMMITTED if at == STABLE
                                            else IsolationLevel.READ_UNCOMMITTED))
                    for at, window in windows[first:first + OFFSETS_WINDOWS_IN_FLIGHT]]
            for at, futures in sent:
                outcomes = self._wait_each({PartitionRef(tp.topic, tp.partition): f for tp, f in futures.items()})
                for ref, outcome in outcomes.items():
                    if isinstance(outcome, KafkaGatewayError):
                        failures.setdefault(at, {})[ref] = outcome
                    else:
                        timestamp = outcome.timestamp if (outcome.timestamp or -1) >= 0 else None
                        results[at][ref] = OffsetAt(outcome.offset, timestamp)
        return failures

    def _looked_up(self, pending: dict, results: dict) -> dict:
        """Looks up what offset_lookup can answer and stores it; returns the rest, failed partitions included. Once a
        kind's lookup timed out, the rest of it goes to the Admin client, which tells a silent leader's partitions
        from the others'. The kinds (log start, end, last stable) are looked up at once, each on a thread: the
        consumers wait on the brokers outside the GIL, so two kinds take about the time of one
        (bench/offset_lookup.py), and a silent leader costs one wait, not one per kind."""
        rest = {at: wanted for at, wanted in pending.items()
                if at not in (EARLIEST, LATEST, STABLE) or len(wanted) < offset_lookup.LOOKUP_MIN_PARTITIONS}
        kinds = [at for at in pending if at not in rest]

        def look_up(at) -> offset_lookup.Lookup:
            return offset_lookup.look_up(self.connection, sorted(pending[at]), earliest=at == EARLIEST,
                                         committed=at == STABLE, timeout=self.timeout)

        with ThreadPoolExecutor(max_workers=max(1, len(kinds)), thread_name_prefix="offset-lookup") as pool:
            lookups = dict(zip(kinds, pool.map(look_up, kinds)))
        for at, lookup in lookups.items():
            results[at].update((ref, OffsetAt(offset)) for ref, offset in lookup.found.items())
            if lookup.unanswered:
                rest[at] = lookup.unanswered
        return rest
