import time
import uuid

import pytest


@pytest.fixture
def seeded(topic_factory, produce, commit, kafka_node):
    """A 3-partition topic: p0 has 20 records one minute apart ending 10 minutes ago, with the first 3 purged;
    p1 has 5 records; p2 is empty. The group committed p0=8 and p1=2, nothing for p2."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient

    topic = topic_factory("reset", partitions=3)
    now_ms = int(time.time() * 1000)
    base = now_ms - 30 * 60_000
    producer = Producer({"bootstrap.servers": kafka_node.bootstrap})
    for i in range(20):
        producer.produce(topic, key=b"k%d" % i, value=b"v", partition=0, timestamp=base + i * 60_000)
    for i in range(5):
        producer.produce(topic, value=b"v", partition=1, timestamp=base + i * 60_000)
    assert producer.flush(15) == 0
    from confluent_kafka import TopicPartition

    admin = AdminClient({"bootstrap.servers": kafka_node.bootstrap})
    for future in admin.delete_records([TopicPartition(topic, 0, 3)]).values():
        future.result(15)
    group = f"g-{uuid.uuid4().hex[:8]}"
    commit(group, {(topic, 0): 8, (topic, 1): 2})
    return {"topic": topic, "group": group, "base": base}


@pytest.fixture
def live_consumer(kafka_node):
    """live_consumer(group, topic, protocol) keeps a real subscribed consumer polling until the test ends."""
    import threading

    from confluent_kafka import Consumer

    running: list[tuple[threading.Event, threading.Thread]] = []

    def start(group: str, topic: str, protocol: str = "classic") -> None:
        config = {"bootstrap.servers": kafka_node.bootstrap, "group.id": group, "enable.auto.commit": False,
                  "group.protocol": protocol}
        if protocol == "classic":
            config["session.timeout.ms"] = 6000
        stop = threading.Event()

        def poll():
            consumer = Consumer(config)
            consumer.subscribe([topic])
            while not stop.is_set():
                consumer.poll(0.2)
            consumer.close()

        thread = threading.Thread(target=poll, daemon=True)
        thread.start()
        running.append((stop, thread))

    yield start
    for stop, thread in running:
        stop.set()
        thread.join(15)


def wait_for_state(group: str, wanted: set[str], timeout: float = 30.0) -> str:
    from console.clusters.selectors import cluster_admin
    from gateway.kafka.errors import ClusterUnavailable

    deadline = time.monotonic() + timeout
    state = ""
    while time.monotonic() < deadline:
        try:
            description = cluster_admin("local").describe_groups([group])[group]
        except ClusterUnavailable as exc:
            # A loaded CI machine can make one describe outlast its 3 s bound while the group forms: ask again.
            state = exc.message
            time.sleep(0.3)
            continue
        state = description.state
        if state in wanted and description.members:
            return state
        time.sleep(0.3)
    raise AssertionError(f"group {group} stayed {state}")
