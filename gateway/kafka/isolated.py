"""IsolatedKafkaAdmin: KafkaAdmin's face, every operation written out, each run in the cluster's own client
process (gateway.kafka.sandbox): a native abort in librdkafka ends that process, never the caller. Go to a method's
definition here and you see what runs in this process; the operation itself is the same-named method of
gateway.kafka.admin.KafkaAdmin, which the client process calls. tests/gateway/kafka/test_isolated.py checks that
both have the same methods with the same parameters."""

from __future__ import annotations

from gateway.kafka.sandbox import call
from gateway.kafka.types import (
    AclEntry, AclQuery, AppendResult, BatchWritten, BrokerJmxReading, ClientQuota, ClientSoftwareReading,
    ClusterDescription, CommittedTail, ConfigEntryInfo, DecodedPart, FinalizedFeatures, GroupDescription,
    GroupListing, ItemFailure, JmxEndpoint, LogDirState, OffsetAt, OutgoingRecord, PartitionRef, ProducedRecord,
    ProducerState, ProtocolGroupDescription, QuorumInfo, Reassignment, RecordInfo, RegisteredBroker, ReplicaSize, ScanChunk,
    ScanRequest, SchemaInfo, ScramUser, ShareGroupDescription, SharePartitionOffset, StreamsGroupDescription,
    SubjectInfo, TopicMetadata, TransactionInfo, TransactionListing,
)
from gateway.kafka.types import GatewayFace
from gateway.timing import timed


class IsolatedKafkaAdmin(GatewayFace):
    """Callers cannot tell it from KafkaAdmin: the same methods, dataclasses and exceptions."""

    def _call(self, name: str, kwargs: dict):
        with timed("kafka"):
            return call(self.connection, name, (), kwargs, timeout=self.timeout, backoff=self.unreachable_backoff)

    def abort_transaction(self, ref: PartitionRef, *, producer_id: int, producer_epoch: int,
            coordinator_epoch: int) -> None:
        """Writes an abort marker for one producer's open transaction on one partition (WriteTxnMarkers)."""
        return self._call("abort_transaction", {
            "ref": ref, "producer_id": producer_id, "producer_epoch": producer_epoch,
            "coordinator_epoch": coordinator_epoch})

    def add_partitions(self, name: str, *, new_total: int, validate_only: bool = False) -> None:
        """CreatePartitions: grows the topic to `new_total` partitions (Kafka cannot shrink a topic)."""
        return self._call("add_partitions", {"name": name, "new_total": new_total, "validate_only": validate_only})

    def add_partitions_many(self, totals: dict[str, int], *, validate_only: bool = False) -> dict[str, ItemFailure]:
        """CreatePartitions for many topics (topic -> new total), BATCH_OBJECTS per request; returns the refused."""
        return self._call("add_partitions_many", {"totals": totals, "validate_only": validate_only})

    def alter_client_quotas(self, *, user: str | None, client_id: str | None, user_is_default: bool = False,
            client_id_is_default: bool = False, set_values: dict[str, float], delete: list[str]) -> None:
        """AlterClientQuotas for one entity (a user, a client id, a pair, or their defaults)."""
        return self._call("alter_client_quotas", {
            "user": user, "client_id": client_id, "user_is_default": user_is_default,
            "client_id_is_default": client_id_is_default, "set_values": set_values, "delete": delete})

    def alter_configs(self, kind: str, name: str, *, set_values: dict[str, str], delete: list[str],
            validate_only: bool = False) -> None:
        """IncrementalAlterConfigs: sets and removes only the keys given, leaving every other override alone."""
        return self._call("alter_configs", {
            "kind": kind, "name": name, "set_values": set_values, "delete": delete, "validate_only": validate_only})

    def alter_group_offsets(self, group_id: str, offsets: dict[PartitionRef, int]) -> dict[PartitionRef, int]:
        """OffsetCommit as an admin (no member): the broker accepts it only while the group has no members."""
        return self._call("alter_group_offsets", {"group_id": group_id, "offsets": offsets})

    def alter_reassignments(self, targets: dict[PartitionRef, tuple[int, ...] | None]) -> dict[PartitionRef,
            str | None]:
        """Starts moving each partition to its target replicas (the first one is the preferred leader), or cancels…"""
        return self._call("alter_reassignments", {"targets": targets})

    def alter_share_group_offsets(self, group_id: str, offsets: dict[PartitionRef, int]) -> None:
        """Sets share-partition start offsets; the coordinator refuses while the group has members."""
        return self._call("alter_share_group_offsets", {"group_id": group_id, "offsets": offsets})

    def alter_streams_group_offsets(self, group_id: str, offsets: dict[PartitionRef, int]) -> None:
        """(KafkaAdmin.alter_streams_group_offsets)"""
        return self._call("alter_streams_group_offsets", {"group_id": group_id, "offsets": offsets})

    def alter_topic_configs_many(self, names: list[str], *, set_values: dict[str, str], delete: list[str],
            validate_only: bool = False) -> dict[str, ItemFailure]:
        """IncrementalAlterConfigs of the same keys on many topics, BATCH_OBJECTS topics per request; returns the…"""
        return self._call("alter_topic_configs_many", {
            "names": names, "set_values": set_values, "delete": delete, "validate_only": validate_only})

    def append_if_last(self, topic: str, *, transactional_id: str, expected_last_key: bytes | None,
            records: tuple[tuple[bytes, bytes], ...], partition: int = 0) -> AppendResult:
        """Writes `records` (key, value) to one partition in one transaction, only if the partition's last…"""
        return self._call("append_if_last", {
            "topic": topic, "transactional_id": transactional_id, "expected_last_key": expected_last_key,
            "records": records, "partition": partition})

    def create_acls(self, entries: list[AclEntry]) -> None:
        """CreateAcls for every binding in one request; any refusal raises (the broker creates the others)."""
        return self._call("create_acls", {"entries": entries})

    def create_topic(self, name: str, *, partitions: int, replication_factor: int, configs: dict[str, str],
            validate_only: bool = False) -> None:
        """CreateTopics; with validate_only the broker checks everything (configs included) and creates nothing."""
        return self._call("create_topic", {
            "name": name, "partitions": partitions, "replication_factor": replication_factor, "configs": configs,
            "validate_only": validate_only})

    def delete_acls(self, entries: list[AclEntry]) -> list[AclEntry]:
        """DeleteAcls with one exact filter per binding (never a wildcard filter); returns what was deleted."""
        return self._call("delete_acls", {"entries": entries})

    def delete_group(self, group_id: str) -> None:
        """DeleteGroups: the broker refuses a group that still has members (NON_EMPTY_GROUP)."""
        return self._call("delete_group", {"group_id": group_id})

    def delete_groups(self, group_ids: list[str]) -> dict[str, ItemFailure]:
        """DeleteGroups for many consumer groups, BATCH_OBJECTS per call (librdkafka sends one request per…"""
        return self._call("delete_groups", {"group_ids": group_ids})

    def delete_records(self, before: dict[PartitionRef, int]) -> dict[PartitionRef, int]:
        """DeleteRecords: removes every record below the given offset; returns each partition's new log start."""
        return self._call("delete_records", {"before": before})

    def delete_scram_credential(self, user: str, *, mechanism: str) -> None:
        """(KafkaAdmin.delete_scram_credential)"""
        return self._call("delete_scram_credential", {"user": user, "mechanism": mechanism})

    def delete_share_group_offsets(self, group_id: str, topics: list[str]) -> None:
        """(KafkaAdmin.delete_share_group_offsets)"""
        return self._call("delete_share_group_offsets", {"group_id": group_id, "topics": topics})

    def delete_share_groups(self, group_ids: list[str]) -> None:
        """(KafkaAdmin.delete_share_groups)"""
        return self._call("delete_share_groups", {"group_ids": group_ids})

    def delete_streams_group_offsets(self, group_id: str, refs: list[PartitionRef]) -> None:
        """(KafkaAdmin.delete_streams_group_offsets)"""
        return self._call("delete_streams_group_offsets", {"group_id": group_id, "refs": refs})

    def delete_streams_groups(self, group_ids: list[str]) -> None:
        """(KafkaAdmin.delete_streams_groups)"""
        return self._call("delete_streams_groups", {"group_ids": group_ids})

    def delete_topic(self, name: str) -> None:
        """(KafkaAdmin.delete_topic)"""
        return self._call("delete_topic", {"name": name})

    def delete_topics(self, names: list[str]) -> dict[str, ItemFailure]:
        """DeleteTopics for many topics, BATCH_OBJECTS per request, one request at a time; returns the topics…"""
        return self._call("delete_topics", {"names": names})

    def describe_acls(self, query: AclQuery = AclQuery()) -> list[AclEntry]:
        """The bindings matching `query`, sorted; an authorizer-less cluster raises (SECURITY_DISABLED)."""
        return self._call("describe_acls", {"query": query})

    def describe_client_quotas(self) -> list[ClientQuota]:
        """Every quota set on a user, a client id, a pair of them, or their defaults."""
        return self._call("describe_client_quotas", {})

    def describe_cluster(self) -> ClusterDescription:
        """DescribeCluster: cluster id, controller and live brokers."""
        return self._call("describe_cluster", {})

    def describe_configs(self, kind: str, names: list[str], *, skip_missing: bool = False) -> dict[str, dict[str,
            ConfigEntryInfo]]:
        """DescribeConfigs (with synonyms) for many topics in one round, or for brokers one resource each. With…"""
        return self._call("describe_configs", {"kind": kind, "names": names, "skip_missing": skip_missing})

    def describe_groups(self, group_ids: list[str]) -> dict[str, GroupDescription]:
        """DescribeGroups / ConsumerGroupDescribe for many groups at once; unknown groups come back as Dead."""
        return self._call("describe_groups", {"group_ids": group_ids})

    def describe_group_protocols(self, group_ids: list[str]) -> dict[str, ProtocolGroupDescription]:
        """describeConsumerGroups for classic and consumer groups at once: each group's type, state, assignor and…"""
        return self._call("describe_group_protocols", {"group_ids": group_ids})

    def describe_log_dirs(self, broker_ids: list[int]) -> list[ReplicaSize]:
        """Every replica in every log dir of the given brokers (one DescribeLogDirs request to each)."""
        return self._call("describe_log_dirs", {"broker_ids": broker_ids})

    def describe_log_dir_states(self, broker_ids: list[int]) -> list[LogDirState]:
        """Each log directory of the given brokers (one DescribeLogDirs request to each): cordoned or not, its…"""
        return self._call("describe_log_dir_states", {"broker_ids": broker_ids})

    def describe_producers(self, refs: list[PartitionRef], *, broker: int | None = None) -> dict[PartitionRef,
            tuple[ProducerState, ...]]:
        """The active producers of each partition, asked of each partition's leader (or of replica `broker`) in…"""
        return self._call("describe_producers", {"refs": refs, "broker": broker})

    def describe_quorum(self) -> QuorumInfo:
        """(KafkaAdmin.describe_quorum)"""
        return self._call("describe_quorum", {})

    def describe_registered_brokers(self) -> list[RegisteredBroker]:
        """Every broker the controller has registered, fenced ones included (KIP-1073)."""
        return self._call("describe_registered_brokers", {})

    def describe_scram_users(self) -> list[ScramUser]:
        """Every user with a SCRAM credential, and each credential's mechanism and iterations (never a secret)."""
        return self._call("describe_scram_users", {})

    def describe_share_groups(self, group_ids: list[str]) -> dict[str, ShareGroupDescription]:
        """ShareGroupDescribe for many groups at once; an unknown id is a GroupNotFound."""
        return self._call("describe_share_groups", {"group_ids": group_ids})

    def describe_streams_groups(self, group_ids: list[str]) -> dict[str, StreamsGroupDescription]:
        """(KafkaAdmin.describe_streams_groups)"""
        return self._call("describe_streams_groups", {"group_ids": group_ids})

    def describe_topics(self, names: list[str], *, skip_missing: bool = False) -> dict[str, TopicMetadata]:
        """DescribeTopics in one request: topic ids, the internal flag and per-partition replicas and ISR."""
        return self._call("describe_topics", {"names": names, "skip_missing": skip_missing})

    def describe_transactions(self, transactional_ids: list[str]) -> dict[str, TransactionInfo | None]:
        """One DescribeTransactions per coordinator for all ids; None for an id no coordinator knows."""
        return self._call("describe_transactions", {"transactional_ids": transactional_ids})

    def elect_preferred_leaders(self, refs: list[PartitionRef]) -> dict[PartitionRef, str | None]:
        """Preferred leader election for these partitions: each one's error, or None where it now leads (or…"""
        return self._call("elect_preferred_leaders", {"refs": refs})

    def finalized_features(self) -> FinalizedFeatures:
        """Every finalized feature's level, metadata.version's among them (one DescribeFeatures request)."""
        return self._call("finalized_features", {})

    def group_offsets(self, group_ids: list[str], *, skip_failed: bool = False) -> dict[str, dict[PartitionRef, int]]:
        """OffsetFetch for each group (the client allows one group per request), all sent before any is awaited.…"""
        return self._call("group_offsets", {"group_ids": group_ids, "skip_failed": skip_failed})

    def group_offsets_batched(self, group_ids: list[str]) -> dict[str, dict[PartitionRef, int]]:
        """OffsetFetch for all of `group_ids`, one request per coordinator. The ids cross the bridge as one JSON…"""
        return self._call("group_offsets_batched", {"group_ids": group_ids})

    def last_committed_record(self, topic: str, partition: int = 0) -> CommittedTail:
        """ListOffsets (earliest, latest, and the last stable offset with read_committed), then a read_committed…"""
        return self._call("last_committed_record", {"topic": topic, "partition": partition})

    def list_groups(self) -> list[GroupListing]:
        """ListGroups on every broker (one call); only groups of the consumer protocol types are returned.…"""
        return self._call("list_groups", {})

    def list_groups_of_every_type(self) -> list[GroupListing]:
        """ListGroups on every broker with no type filter: classic, consumer, share and streams groups. Classic…"""
        return self._call("list_groups_of_every_type", {})

    def list_offsets(self, refs: list[PartitionRef], at: str | int) -> dict[PartitionRef, OffsetAt]:
        """One ListOffsets round for all `refs`; `at` is "earliest", "latest", "stable" or a timestamp in ms."""
        return self._call("list_offsets", {"refs": refs, "at": at})

    def list_offsets_many(self, refs: list[PartitionRef], ats: list[str | int], *,
            strict: bool = True) -> dict[str | int, dict[PartitionRef, OffsetAt]]:
        """Several ListOffsets rounds (e.g. earliest and latest) sent together, a bounded window at a time."""
        return self._call("list_offsets_many", {"refs": refs, "ats": ats, "strict": strict})

    def list_offsets_of(self, wanted: dict[str | int, list[PartitionRef]], *, strict: bool = True) -> dict[str | int,
            dict[PartitionRef, OffsetAt]]:
        """As list_offsets_many, with partitions of their own for each kind ({kind: partitions}): the topic table…"""
        return self._call("list_offsets_of", {"wanted": wanted, "strict": strict})

    def list_reassignments(self) -> list[Reassignment]:
        """(KafkaAdmin.list_reassignments)"""
        return self._call("list_reassignments", {})

    def list_topics(self) -> list[TopicMetadata]:
        """One Metadata request for all topics: partitions with leader, replicas and ISR."""
        return self._call("list_topics", {})

    def list_transactions(self, producer_ids: list[int] | None = None) -> list[TransactionListing]:
        """Every transactional id each coordinator knows (ListTransactions to all brokers), optionally only those…"""
        return self._call("list_transactions", {"producer_ids": producer_ids})

    def produce_batch(self, topic: str, records: tuple[OutgoingRecord, ...], *, session: str = '',
            max_batch_bytes: int | None = None) -> BatchWritten:
        """Writes a batch with an idempotent producer (acks=all: a retry inside librdkafka never duplicates or…"""
        return self._call("produce_batch", {
            "topic": topic, "records": records, "session": session, "max_batch_bytes": max_batch_bytes})

    def produce_close(self, session: str) -> None:
        """Ends a session's producer (an import that is done or stopped)."""
        return self._call("produce_close", {"session": session})

    def produce_record(self, topic: str, *, partition: int | None, key: bytes | None, value: bytes | None,
            headers: tuple[tuple[str, bytes], ...] = ()) -> ProducedRecord:
        """Writes one record (acks=all, idempotent) and waits for its offset; partition None hashes the key as…"""
        return self._call("produce_record", {
            "topic": topic, "partition": partition, "key": key, "value": value, "headers": headers})

    def read_client_software(self, endpoints: list[JmxEndpoint], *,
            timeout: float | None = None) -> list[ClientSoftwareReading]:
        """Every broker's open connections by client software and version, all brokers at once within `timeout`;…"""
        return self._call("read_client_software", {"endpoints": endpoints, "timeout": timeout})

    def read_jmx(self, endpoints: list[JmxEndpoint], *, topics: bool = True,
            timeout: float | None = None) -> list[BrokerJmxReading]:
        """Reads the broker and per-topic MBeans of each broker's JMX agent, all brokers at once, within `timeout`…"""
        return self._call("read_jmx", {"endpoints": endpoints, "topics": topics, "timeout": timeout})

    def read_records(self, topic: str, partition: int, *, start: int, limit: int, end: int, timeout: float,
            isolation: str = 'read_uncommitted') -> list[RecordInfo]:
        """Fetch with an assign-only consumer: up to `limit` records of one partition in [start, end); keys and…"""
        return self._call("read_records", {
            "topic": topic, "partition": partition, "start": start, "limit": limit, "end": end, "timeout": timeout,
            "isolation": isolation})

    def registry_decode(self, topic: str, data: bytes | None, *, is_key: bool = False) -> DecodedPart | None:
        """(KafkaAdmin.registry_decode)"""
        return self._call("registry_decode", {"topic": topic, "data": data, "is_key": is_key})

    def registry_encode(self, topic: str, value_json: str, *, subject: str, version: int | None = None,
            is_key: bool = False) -> tuple[bytes, SchemaInfo]:
        """(KafkaAdmin.registry_encode)"""
        return self._call("registry_encode", {
            "topic": topic, "value_json": value_json, "subject": subject, "version": version, "is_key": is_key})

    def registry_schema(self, subject: str, version: int | None = None) -> SchemaInfo:
        """(KafkaAdmin.registry_schema)"""
        return self._call("registry_schema", {"subject": subject, "version": version})

    def registry_schema_by_id(self, schema_id: int) -> SchemaInfo:
        """(KafkaAdmin.registry_schema_by_id)"""
        return self._call("registry_schema_by_id", {"schema_id": schema_id})

    def registry_subjects(self) -> list[SubjectInfo]:
        """(KafkaAdmin.registry_subjects)"""
        return self._call("registry_subjects", {})

    def registry_versions(self, subject: str) -> list[int]:
        """(KafkaAdmin.registry_versions)"""
        return self._call("registry_versions", {"subject": subject})

    def scan_chunk(self, request: ScanRequest) -> ScanChunk:
        """One bounded stretch of a topic search (gateway.kafka.records_io.scanner)."""
        return self._call("scan_chunk", {"request": request})

    def scan_close(self, scan_id: str) -> None:
        """(KafkaAdmin.scan_close)"""
        return self._call("scan_close", {"scan_id": scan_id})

    def share_group_offsets(self, group_ids: list[str]) -> dict[str, dict[PartitionRef, SharePartitionOffset]]:
        """For each group, the share-partition start offset (and lag, where the coordinator knows it) of every…"""
        return self._call("share_group_offsets", {"group_ids": group_ids})

    def streams_group_offsets(self, group_ids: list[str]) -> dict[str, dict[PartitionRef, int]]:
        """Committed offsets of each streams group: one request for all of them."""
        return self._call("streams_group_offsets", {"group_ids": group_ids})

    def topic_ids(self) -> dict[str, str]:
        """{name: topic id} of every topic, internal ones included (one Metadata request)."""
        return self._call("topic_ids", {})

    def upsert_scram_credential(self, user: str, *, mechanism: str, iterations: int, password: str) -> None:
        """Creates or replaces one credential; the broker salts and hashes the password."""
        return self._call("upsert_scram_credential", {
            "user": user, "mechanism": mechanism, "iterations": iterations, "password": password})


PUBLIC_OPERATIONS = tuple(name for name in vars(IsolatedKafkaAdmin) if not name.startswith("_"))
