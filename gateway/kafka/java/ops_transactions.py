"""Transactions and producer states (KIP-664), through Kafka's Java Admin client (see gateway.kafka.java.bridge)."""

from __future__ import annotations

from gateway.kafka.errors import KafkaGatewayError
from gateway.kafka.java import bridge
from gateway.kafka.types import PartitionRef, ProducerState, TransactionInfo, TransactionListing


class TransactionOps(bridge.JavaCalls):
    def list_transactions(self, producer_ids: list[int] | None = None) -> list[TransactionListing]:
        """Every transactional id each coordinator knows (ListTransactions to all brokers), optionally only those
        of the given producer ids."""

        def call(admin, jvm):
            options = jvm.org.apache.kafka.clients.admin.ListTransactionsOptions()
            if producer_ids is not None:
                options.filterProducerIds(bridge.long_set(list(producer_ids)))
            return admin.listTransactions(options).allByBrokerId()

        by_broker = self._java(call)
        listings = []
        for broker in by_broker.keySet():
            for listing in by_broker.get(broker):
                listings.append(TransactionListing(transactional_id=str(listing.transactionalId()),
                                                   coordinator=int(broker), producer_id=int(listing.producerId()),
                                                   state=str(listing.state().toString())))
        return sorted(listings, key=lambda t: t.transactional_id)

    def describe_transactions(self, transactional_ids: list[str]) -> dict[str, TransactionInfo | None]:
        """One DescribeTransactions per coordinator for all ids; None for an id no coordinator knows."""
        if not transactional_ids:
            return {}
        admin = bridge.java_admin(self.connection, self.timeout)
        result = admin.describeTransactions(list(dict.fromkeys(transactional_ids)))
        described: dict[str, TransactionInfo | None] = {}
        for transactional_id in dict.fromkeys(transactional_ids):
            try:
                found = bridge.wait(result.description(transactional_id), cluster=self.cluster,
                                        timeout=self.timeout, admin=admin)
            except KafkaGatewayError as exc:
                if exc.code == "TransactionalIdNotFoundException":
                    described[transactional_id] = None
                    continue
                raise
            start = found.transactionStartTimeMs()
            described[transactional_id] = TransactionInfo(
                transactional_id=transactional_id, coordinator=int(found.coordinatorId()),
                producer_id=int(found.producerId()), producer_epoch=int(found.producerEpoch()),
                state=str(found.state().toString()), timeout_ms=int(found.transactionTimeoutMs()),
                start_time_ms=int(start.getAsLong()) if start.isPresent() else None,
                # In the coordinator's own order, which Kafka's tool prints as it comes.
                partitions=tuple(PartitionRef(str(tp.topic()), int(tp.partition())) for tp in found.topicPartitions()),
            )
        return described

    def describe_producers(self, refs: list[PartitionRef], *,
                           broker: int | None = None) -> dict[PartitionRef, tuple[ProducerState, ...]]:
        """The active producers of each partition, asked of each partition's leader (or of replica `broker`) in
        one batch."""
        if not refs:
            return {}

        def call(admin, jvm):
            partitions = [jvm.org.apache.kafka.common.TopicPartition(r.topic, r.partition) for r in refs]
            options = jvm.org.apache.kafka.clients.admin.DescribeProducersOptions()
            if broker is not None:
                options.brokerId(broker)
            return admin.describeProducers(partitions, options).all()

        states = self._java(call)
        found = {}
        for tp in states.keySet():
            producers = []
            for state in states.get(tp).activeProducers():
                coordinator_epoch, start = state.coordinatorEpoch(), state.currentTransactionStartOffset()
                producers.append(ProducerState(
                    producer_id=int(state.producerId()), producer_epoch=int(state.producerEpoch()),
                    coordinator_epoch=int(coordinator_epoch.getAsInt()) if coordinator_epoch.isPresent() else -1,
                    last_sequence=int(state.lastSequence()), last_timestamp=int(state.lastTimestamp()),
                    transaction_start_offset=int(start.getAsLong()) if start.isPresent() else None))
            found[PartitionRef(str(tp.topic()), int(tp.partition()))] = tuple(
                sorted(producers, key=lambda p: p.producer_id))
        return found

    def abort_transaction(self, ref: PartitionRef, *, producer_id: int, producer_epoch: int,
                          coordinator_epoch: int) -> None:
        """Writes an abort marker for one producer's open transaction on one partition (WriteTxnMarkers)."""

        def call(admin, jvm):
            spec = jvm.org.apache.kafka.clients.admin.AbortTransactionSpec(
                jvm.org.apache.kafka.common.TopicPartition(ref.topic, ref.partition),
                producer_id, producer_epoch, max(coordinator_epoch, 0))  # -1 (unknown) as the tool does: 0
            return admin.abortTransaction(spec).all()

        self._java(call)
