"""Which of a broker's MBeans the console samples, and how their attributes become one reading (pure).

Both metrics sources end here: the JMX reader (java/ops_jmx.py) asks the MBeans themselves, the Prometheus reader
(prometheus.py) asks for the series Prometheus's JMX exporter made of the same attributes and names them back as
MBeans. One translation for both is what keeps a chart the same whichever source fed it."""

from __future__ import annotations

from gateway.kafka.types.metrics import BrokerJmxReading, MeterReading

TOPIC_METRICS = "kafka.server:type=BrokerTopicMetrics"
_REQUESTS = "kafka.network:type=RequestMetrics"
# key -> (object name, or a pattern whose matches are summed; kind). Kinds: meter (Count, OneMinuteRate), gauge
# (Value), p99 (99thPercentile, ms), idle (a meter whose one-minute rate is the idle share 0..1), share (a 0..1 gauge).
BROKER_MBEANS: dict[str, tuple[str, str]] = {
    "bytes_in": (f"{TOPIC_METRICS},name=BytesInPerSec", "meter"),
    "bytes_out": (f"{TOPIC_METRICS},name=BytesOutPerSec", "meter"),
    "messages_in": (f"{TOPIC_METRICS},name=MessagesInPerSec", "meter"),
    # Kafka 4 keeps one RequestsPerSec meter per request version: the rate is their sum.
    "produce_requests": (f"{_REQUESTS},name=RequestsPerSec,request=Produce,*", "meter"),
    "fetch_requests": (f"{_REQUESTS},name=RequestsPerSec,request=FetchConsumer,*", "meter"),
    "isr_shrinks": ("kafka.server:type=ReplicaManager,name=IsrShrinksPerSec", "meter"),
    "isr_expands": ("kafka.server:type=ReplicaManager,name=IsrExpandsPerSec", "meter"),
    "produce_p99_ms": (f"{_REQUESTS},name=TotalTimeMs,request=Produce", "p99"),
    "fetch_p99_ms": (f"{_REQUESTS},name=TotalTimeMs,request=FetchConsumer", "p99"),
    "request_idle_pct": ("kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent", "idle"),
    "network_idle_pct": ("kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent", "share"),
    "under_replicated": ("kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions", "gauge"),
    "under_min_isr": ("kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount", "gauge"),
    # On a KRaft controller only (every node of the dev clusters is one); absent elsewhere, never a made-up 0.
    "offline_partitions": ("kafka.controller:type=KafkaController,name=OfflinePartitionsCount", "gauge"),
    "active_controllers": ("kafka.controller:type=KafkaController,name=ActiveControllerCount", "gauge"),
}
TOPIC_MBEANS = {"bytes_in": "BytesInPerSec", "bytes_out": "BytesOutPerSec", "messages_in": "MessagesInPerSec"}
ATTRIBUTES = {"meter": ("Count", "OneMinuteRate"), "idle": ("Count", "OneMinuteRate"), "gauge": ("Value",),
              "share": ("Value",), "p99": ("99thPercentile",)}
MAX_TOPICS = 2000  # per broker and reading: past it the broker-wide figures still come, the rest of topics do not
# KIP-1257 (Kafka 4.3): each partition's size as a share of its retention.bytes, one gauge per partition (topic=,
# partition=), in whole percent (size × 100 // retention.bytes, so above 100 while deletion has not caught up). The
# broker computes it at each retention check (log.retention.check.interval.ms, 5 minutes by default), not at each
# read: 0 before a new partition's first check and for partitions without a limit (retention.bytes -1). Only the
# partitions above 0 are read (the broker filters them), at most MAX_PARTITIONS per broker, the first by name.
RETENTION_SHARE = "kafka.log:type=Log,name=RetentionSizeInPercent"
MAX_PARTITIONS = 5000


def wanted_mbeans(topics: bool) -> list[tuple[str, tuple[str, ...]]]:
    """(object name or pattern, attributes) of everything one reading asks for."""
    wanted = [(name, ATTRIBUTES[kind]) for name, kind in BROKER_MBEANS.values()]
    if topics:
        wanted += [(f"{TOPIC_METRICS},name={mbean},topic=*", ATTRIBUTES["meter"]) for mbean in TOPIC_MBEANS.values()]
    return wanted


def _meter(values: dict[str, float]) -> MeterReading:
    return MeterReading(count=int(values.get("Count", 0)), one_minute_rate=float(values.get("OneMinuteRate", 0.0)))


def reading_from_attributes(broker: int, address: str, at: float, took: float,
                            found: dict[str, dict[str, float]]) -> BrokerJmxReading:
    """One broker's reading from `found` (object name -> attribute -> value), whichever source read them."""
    gauges: dict[str, float] = {}
    meters: dict[str, MeterReading] = {}
    for key, (name, kind) in BROKER_MBEANS.items():
        if name.endswith(",*"):
            prefix = name[:-1]
            parts = [_meter(v) for n, v in found.items() if n.startswith(prefix)]
            # An API nobody called yet has no MBean: its rate is 0, which is what it is.
            meters[key] = MeterReading(sum(p.count for p in parts), sum(p.one_minute_rate for p in parts))
            continue
        values = found.get(name)
        if values is None:
            continue
        if kind == "meter":
            meters[key] = _meter(values)
        elif kind == "idle":
            gauges[key] = 100.0 * min(1.0, float(values.get("OneMinuteRate", 0.0)))
        elif kind == "share":
            gauges[key] = 100.0 * min(1.0, float(values.get("Value", 0.0)))
        elif kind == "p99":
            gauges[key] = float(values.get("99thPercentile", 0.0))
        elif "Value" in values:
            gauges[key] = float(values["Value"])
    topics: dict[str, dict[str, MeterReading]] = {}
    for key, mbean in TOPIC_MBEANS.items():
        prefix = f"{TOPIC_METRICS},name={mbean},topic="
        for name, values in found.items():
            if name.startswith(prefix):
                topics.setdefault(name[len(prefix):], {})[key] = _meter(values)
    attributes = {f"{name}:{attribute}": value for name, values in found.items() for attribute, value in values.items()}
    return BrokerJmxReading(broker=broker, address=address, read_at=at, gauges=gauges, meters=meters, topics=topics,
                            retention_shares=retention_shares(found), attributes=attributes, duration_s=took)


def retention_shares(found: dict[str, dict[str, float]]) -> dict[str, dict[int, int]]:
    """topic -> partition -> percent of retention.bytes, from the RETENTION_SHARE gauges among `found`."""
    shares: dict[str, dict[int, int]] = {}
    prefix = f"{RETENTION_SHARE},topic="
    for name, values in found.items():
        topic, _, partition = name.removeprefix(prefix).rpartition(",partition=")
        if name.startswith(prefix) and partition.isdigit() and isinstance(values.get("Value"), int | float):
            shares.setdefault(topic, {})[int(partition)] = int(values["Value"])
    return shares
