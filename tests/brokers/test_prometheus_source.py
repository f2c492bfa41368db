"""The Prometheus metrics source against Debian's `prometheus` scraping the session broker through Prometheus's JMX
exporter agent (from Maven Central): the same figures as the broker's own JMX read around it, sampled into the
same series, shown on the same pages and in the shell, and every way it can fail said on the broker's tile."""

from __future__ import annotations

import io
import json
import secrets
import time

import pytest
from django.core.management import CommandError, call_command

from brokers.models import BrokerState, MetricsSource
from brokers.sampler import broker_metrics_sample_all
from brokers.services import metrics_source_set
from console.audit.actor import Actor
from console.audit.models import AuditEvent
from devstack.kafka import free_port, free_ports
from devstack.prometheus import PrometheusServer
from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.prometheus import read_prometheus
from gateway.kafka.types import (JMX_CREDENTIALS, JMX_FAILED, JMX_REFUSED, JMX_TIMEOUT, ClusterConnection,
                                 JmxEndpoint)
from tests.fixtures.kafka import jmx_endpoint

pytestmark = [pytest.mark.kafka]

PASSWORD_ENV = "CONSOLE_SECRET_PROMETHEUS_TEST"
# As for the JMX reader (tests/gateway/kafka/test_ops_jmx.py): a one-minute rate moves by at most one 5 s tick's
# decay between two reads.
RATE_TOLERANCE = 0.09


@pytest.fixture(scope="module")
def prometheus(kafka_node, tmp_path_factory):
    """Prometheus scraping the session broker's exporter every second, and a second exporter address nobody
    serves (its scrapes fail: `up` is 0 there)."""
    from devstack.jmx_exporter import ExporterAgent

    nobody = ExporterAgent(free_ports(1)[0], "prometheus", "unused")
    server = PrometheusServer(home=tmp_path_factory.mktemp("prometheus"), port=free_ports(1)[0],
                              targets=[kafka_node.exporter, nobody], password=secrets.token_urlsafe(16))
    server.start()
    try:
        server.wait_ready(up=[kafka_node.exporter])
        yield server
    finally:
        server.stop()


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= RATE_TOLERANCE * max(abs(a), abs(b)) + 1e-9


def test_prometheus_gives_the_figures_jmx_gives_around_it(kafka_node, prometheus, topic_factory, produce):
    topic = topic_factory("prom")
    produce(topic, [(0, None, b"y" * 300, None) for _ in range(250)])
    admin = KafkaAdmin(ClusterConnection("prom", kafka_node.bootstrap), timeout=5.0)
    jmx = jmx_endpoint(kafka_node)
    exporter = JmxEndpoint(1, "127.0.0.1", kafka_node.exporter.port)
    before = admin.read_jmx([jmx])[0]
    time.sleep(2.2)  # Prometheus scrapes every second: what it answers next was scraped after `before`
    ours = read_prometheus(prometheus.url, [exporter], username=prometheus.username, password=prometheus.password)[0]
    after = admin.read_jmx([jmx])[0]
    assert before.ok and after.ok and ours.ok, (before.error, after.error, ours.error)
    assert ours.topics[topic]["messages_in"].count == 250 == after.topics[topic]["messages_in"].count
    assert ours.topics[topic]["bytes_in"].count == after.topics[topic]["bytes_in"].count > 250 * 300
    for key in ("under_replicated", "under_min_isr", "offline_partitions", "active_controllers"):
        assert ours.gauges[key] == before.gauges[key] == after.gauges[key], key
    assert ours.gauges["active_controllers"] == 1
    for key, meter in ours.meters.items():  # monotonic: Prometheus scraped between our two readings
        assert before.meters[key].count <= meter.count <= after.meters[key].count, key
        assert (_close(meter.one_minute_rate, before.meters[key].one_minute_rate)
                or _close(meter.one_minute_rate, after.meters[key].one_minute_rate)), key
    assert set(ours.gauges) == set(after.gauges) and set(ours.meters) == set(after.meters)
    for key in ("produce_p99_ms", "fetch_p99_ms"):
        # A percentile moves with every request the broker serves (other clients fetch all the while), so the one
        # Prometheus scraped between our readings may be a third value, near one of them.
        assert (_close(ours.gauges[key], before.gauges[key]) or _close(ours.gauges[key], after.gauges[key])), \
            (key, ours.gauges[key], before.gauges[key], after.gauges[key])
    assert 0 <= ours.gauges["request_idle_pct"] <= 100


def test_the_sampler_the_pages_and_the_shell_read_through_prometheus(local_cluster, kafka_node, prometheus, admin,
                                                                     viewer, client_for, topic_factory, produce,
                                                                     monkeypatch):
    monkeypatch.setenv(PASSWORD_ENV, prometheus.password)
    topic = topic_factory("promsample")
    out = io.StringIO()
    call_command("brokers", "source", "--cluster", "local", "--prometheus", prometheus.url, "--exporters",
                 f"1=127.0.0.1:{kafka_node.exporter.port}", "--username", prometheus.username, "--password-env",
                 PASSWORD_ENV, "--actor", admin.username, "--reason", "metrics from prometheus", stdout=out)
    assert f"from Prometheus {prometheus.url}" in out.getvalue()
    event = AuditEvent.objects.get(action="brokers.metrics_source.set", outcome="success")
    assert event.after["kind"] == "prometheus" and event.after["password_env"] == PASSWORD_ENV
    assert prometheus.password not in json.dumps(event.after)

    broker_metrics_sample_all()
    produce(topic, [(0, None, b"z" * 100, None) for _ in range(120)])
    time.sleep(2.2)
    assert broker_metrics_sample_all() == {"local": "ok"}
    state = BrokerState.objects.get(cluster="local", broker=1)
    assert state.latest["active_controllers"] == 1 and state.counts["topics"][topic]["messages_in"] == 120

    page = client_for(viewer).get("/clusters/local/health/").content.decode()
    assert f"Figures from Prometheus at {prometheus.url}" in page and "Broker 1" in page
    assert f"exporter 127.0.0.1:{kafka_node.exporter.port}" in page

    shell = io.StringIO()
    call_command("brokers", "metrics", "--cluster", "local", "--topics", "--format", "json", stdout=shell)
    dump = json.loads(shell.getvalue())
    assert dump[0]["error"] is None and dump[0]["topics"][topic]["messages_in"]["count"] == 120


def test_every_fault_is_said_on_its_brokers_tile_within_the_bound(local_cluster, kafka_node, prometheus, admin,
                                                                  closed_port, silent_server, monkeypatch, settings):
    settings.BROKER_METRICS_TIMEOUT_S = 2.0
    monkeypatch.setenv(PASSWORD_ENV, "not-" + prometheus.password)
    actor = Actor(user=admin, source="cli")
    unscraped = free_port()

    def sample(url: str, exporters: str) -> dict[int, BrokerState]:
        metrics_source_set(actor=actor, cluster="local", kind=MetricsSource.PROMETHEUS, prometheus_url=url,
                           jmx=exporters, username=prometheus.username, password_env=PASSWORD_ENV)
        began = time.monotonic()
        broker_metrics_sample_all()
        assert time.monotonic() - began < 4
        return {s.broker: s for s in BrokerState.objects.filter(cluster="local")}

    wrong = sample(prometheus.url, f"1=127.0.0.1:{kafka_node.exporter.port}")
    assert wrong[1].error_kind == JMX_CREDENTIALS and "refused the credentials" in wrong[1].last_error
    assert prometheus.password not in wrong[1].last_error

    monkeypatch.setenv(PASSWORD_ENV, prometheus.password)
    nobody = prometheus.targets[1].port
    states = sample(prometheus.url, f"1=127.0.0.1:{kafka_node.exporter.port},2=127.0.0.1:{nobody},"
                                    f"3=127.0.0.1:{unscraped}")
    assert states[1].latest["active_controllers"] == 1
    assert states[2].error_kind == JMX_REFUSED and "cannot scrape the exporter" in states[2].last_error
    assert states[3].error_kind == JMX_FAILED and "does not scrape the exporter" in states[3].last_error

    closed = sample(f"http://127.0.0.1:{closed_port}", f"1=127.0.0.1:{kafka_node.exporter.port}")
    assert closed[1].error_kind == JMX_REFUSED and "refused the connection" in closed[1].last_error
    silent = sample(f"http://{silent_server}", f"1=127.0.0.1:{kafka_node.exporter.port}")
    assert silent[1].error_kind == JMX_TIMEOUT and "did not answer within" in silent[1].last_error


def test_an_address_that_is_not_plainly_prometheus_is_refused_before_anything_is_stored(local_cluster, admin):
    for url in ("file:///etc/shadow", "http://user:pw@127.0.0.1:9090", "http://127.0.0.1:9090/?x=1", "gopher://x"):
        with pytest.raises(CommandError, match="A Prometheus address is"):
            call_command("brokers", "source", "--cluster", "local", "--prometheus", url, "--exporters", "+1000",
                         "--actor", admin.username, stdout=io.StringIO())
    with pytest.raises(CommandError, match="go together"):
        call_command("brokers", "source", "--cluster", "local", "--exporters", "+1000", "--actor", admin.username,
                     stdout=io.StringIO())
    assert not AuditEvent.objects.filter(action="brokers.metrics_source.set").exists()
