"""A transaction left open on the witness topic, which the publisher's own fencing cannot end.

A broker killed just after a batch's commit can lose the commit marker while the transaction coordinator keeps
the transaction as complete: its records then hold the topic's stable end for good, and every read_committed
reader stops there. Kafka's remedy is its tool's `kafka-transactions abort`; the publisher does the same (audited),
but only for a transaction open longer than the publisher's transaction timeout: a younger one may be a live
publisher's, which its coordinator finishes or aborts on its own.
"""

from __future__ import annotations

import time

from console.audit.actor import Actor
from console.audit.services import audited
from console.witness.config import WitnessConfig
from console.errors import ConsoleError
from gateway.kafka.records_io.ops_append import TRANSACTION_TIMEOUT_MS
from gateway.kafka.types import PartitionRef

MSG_HELD = ("a transaction open since offset {offset} of the witness topic holds its readers back; it is aborted "
            "once open longer than {timeout:g} s")


def witness_hanging_abort(*, actor: Actor, config: WitnessConfig, gateway, held_at: int) -> None:
    """Aborts the transactions open on the witness topic's partition (DescribeProducers, then WriteTxnMarkers as
    `kafka-transactions abort` does) when each has been silent longer than the transaction timeout; raises
    ConsoleError (MSG_HELD) otherwise, so the next run looks again."""
    ref = PartitionRef(config.topic, 0)
    open_now = [p for p in gateway.describe_producers([ref]).get(ref, ()) if p.transaction_start_offset is not None]
    now_ms = time.time() * 1000
    if not open_now or any(now_ms - p.last_timestamp <= TRANSACTION_TIMEOUT_MS for p in open_now):
        raise ConsoleError(MSG_HELD.format(offset=held_at, timeout=TRANSACTION_TIMEOUT_MS / 1000))
    with audited(actor=actor, action="audit.witness.abort-hanging", cluster=config.cluster,
                 target=f"topic:{config.topic}", reason="a transaction left open held back the witness topic's readers",
                 params={"partition": 0, "producers": [
                     {"producer_id": p.producer_id, "producer_epoch": p.producer_epoch,
                      "start_offset": p.transaction_start_offset} for p in open_now]}):
        for p in open_now:
            gateway.abort_transaction(ref, producer_id=p.producer_id, producer_epoch=p.producer_epoch,
                                      coordinator_epoch=p.coordinator_epoch)
