"""Broker metrics end to end on the session broker: sampled by the beat's sweep into stored series, shown on the
pages and in the shell, a produce burst on its topic's chart with a reset as a marker linking to its audit event, and
brokers whose JMX refuses or hangs reported on their tiles without slowing the pages."""

from __future__ import annotations

import io
import json
import socket
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command

from brokers.conf import LOCAL_JMX_PASSWORD_ENV, LOCAL_JMX_USER
from brokers.endpoints import MSG_UNREGISTERED_HOST
from brokers.metrics import broker_metrics
from brokers.models import BrokerSample, BrokerState, SamplerRun
from brokers.sampler import broker_metrics_sample_all
from brokers.services import metrics_source_set
from console.audit.actor import Actor
from console.audit.models import AuditEvent
from console.metrics.sources import ScrapeOptions

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def _source(admin, jmx: str, cluster: str = "local") -> None:
    """The session broker's JMX asks for the password `make run`'s do, in the same variable."""
    metrics_source_set(actor=Actor(user=admin, source="cli"), cluster=cluster, jmx=jmx, username=LOCAL_JMX_USER,
                       password_env=LOCAL_JMX_PASSWORD_ENV, reason="test")


def _shell(*args) -> str:
    out = io.StringIO()
    call_command("brokers", *args, stdout=out)
    return out.getvalue()


def test_a_produce_burst_and_a_reset_show_on_the_topics_chart(local_cluster, kafka_node, admin, operator, viewer,
                                                               client_for, topic_factory, produce, commit):
    _source(admin, f"1=127.0.0.1:{kafka_node.jmx_port}")
    topic = topic_factory("burst")
    broker_metrics_sample_all()
    first_read = BrokerState.objects.get(cluster="local", broker=1).counts["at"]
    produce(topic, [(0, None, bytes(1000), None) for _ in range(400)])
    broker_metrics_sample_all()
    second_read = BrokerState.objects.get(cluster="local", broker=1).counts["at"]
    rows = list(BrokerSample.objects.filter(cluster="local", topic=topic).order_by("at"))
    assert rows and rows[-1].values["messages_in"] > 0 and rows[-1].values["bytes_in"] > 0
    # the rate over the time between the two readings carries every record of the burst (Kafka made the topic's
    # meter at its first record, so all of its count is this interval's)
    assert rows[-1].values["messages_in"] * (second_read - first_read) == pytest.approx(400, rel=1e-6)

    commit("burst-readers", {(topic, 0): 400})
    dry = io.StringIO()
    call_command("reset_offsets", "--cluster", "local", "--group", "burst-readers", "--topic", topic,
                 "--to-earliest", stdout=dry)
    fingerprint = dry.getvalue().split("--if-unchanged ")[1].strip()
    call_command("reset_offsets", "--cluster", "local", "--group", "burst-readers", "--topic", topic, "--to-earliest",
                 "--execute", "--if-unchanged", fingerprint, "--actor", operator.username, "--reason", "replay",
                 stdout=io.StringIO())
    reset = AuditEvent.objects.get(target="group:burst-readers", outcome="success")

    page = client_for(viewer).get(f"/clusters/local/health/topics/{topic}/chart").content.decode()
    assert 'data-series="bytes in"' in page and 'data-series="messages in"' in page
    assert f'href="/audit/{reset.seq}/"' in page and "by otto" in page
    detail = client_for(viewer).get(f"/clusters/local/topics/{topic}/").content.decode()
    assert f"/clusters/local/health/topics/{topic}/chart" in detail

    overview = client_for(viewer).get("/clusters/local/health/").content.decode()
    assert "Broker 1" in overview and "under-replicated partitions" in overview
    assert "/audit/" in overview  # the source change, on the cluster's charts

    dump = json.loads(_shell("metrics", "--cluster", "local", "--format", "json", "--topics"))
    assert dump[0]["broker"] == 1 and dump[0]["figures"]["active_controllers"] == 1
    assert dump[0]["topics"][topic]["messages_in"]["count"] == 400
    history = json.loads(_shell("metrics", "--cluster", "local", "--since", "10m", "--format", "json"))
    assert len(history) >= 2 and {"bytes_in", "under_replicated"} <= set(history[-1])
    stored = json.loads(_shell("metrics", "--cluster", "local", "--since", "10m", "--topic", topic, "--format", "json"))
    assert any(r["messages_in"] > 0 for r in stored)


def test_refused_and_silent_jmx_ports_show_why_and_pages_stay_fast(local_cluster, kafka_node, admin, viewer,
                                                                   client_for, closed_port, silent_server, settings):
    settings.BROKER_METRICS_TIMEOUT_S = 2.0
    _source(admin, f"1=127.0.0.1:{kafka_node.jmx_port},2=127.0.0.1:{closed_port},3={silent_server}")
    began = time.monotonic()
    outcome = broker_metrics_sample_all()
    assert time.monotonic() - began < 5
    assert outcome["local"] == "2 of 3 brokers gave no figures"
    states = {s.broker: s for s in BrokerState.objects.filter(cluster="local")}
    assert states[1].latest["active_controllers"] == 1
    assert states[2].error_kind == "refused" and states[3].error_kind == "timeout"

    client = client_for(viewer)
    began = time.monotonic()
    page = client.get("/clusters/local/health/").content.decode()
    assert time.monotonic() - began < 1.5  # read from the database only
    assert "refused the connection" in page and "did not answer within 2 s" in page
    assert "1 of 3 brokers answering" in page

    families = {f.name: f for f in broker_metrics(ScrapeOptions())}
    up = {tuple(s.labels.values()): s.value for s in families["kafka_console_broker_jmx_up"].samples}
    assert up == {("local", "1"): 1.0, ("local", "2"): 0.0, ("local", "3"): 0.0}
    urp = families["kafka_console_broker_under_replicated_partitions"].samples
    assert [(s.labels["broker"], s.value) for s in urp] == [("1", 0.0)]


@pytest.fixture
def jmx_listeners():
    """listen() -> (port, accepted): a port on 127.0.0.1 that keeps every connection and answers nothing, standing
    for a JMX agent that would take the credentials once the JMX client's handshake went on."""
    listeners, accepted_lists, stop = [], [], threading.Event()

    def listen() -> tuple[int, list]:
        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(0.2)
        accepted: list[socket.socket] = []

        def loop():
            while not stop.is_set():
                try:
                    accepted.append(listener.accept()[0])
                except OSError:
                    continue

        threading.Thread(target=loop, daemon=True).start()
        listeners.append(listener)
        accepted_lists.append(accepted)
        return listener.getsockname()[1], accepted

    yield listen
    stop.set()
    for connection in (c for accepted in accepted_lists for c in accepted):
        connection.close()
    for listener in listeners:
        listener.close()


def test_a_cluster_listing_its_broker_at_another_host_never_gets_the_jmx_credentials(kafka_node, admin, db, settings,
                                                                                     jmx_listeners):
    """A cluster names its brokers' hosts itself: registered as `localhost`, the session broker lists itself at
    127.0.0.1, a host the admin never typed. ':PORT' sends nothing there; the registered host, or a template of the
    admin's, is asked (the listener sees the JMX client arrive)."""
    from console.clusters.models import Cluster

    settings.BROKER_METRICS_TIMEOUT_S = 1.0
    port, accepted = jmx_listeners()
    Cluster.objects.create(name="advertises", bootstrap_servers=f"localhost:{kafka_node.port}")
    _source(admin, f":{port}", cluster="advertises")

    broker_metrics_sample_all()

    state = BrokerState.objects.get(cluster="advertises", broker=1)
    assert state.last_error == MSG_UNREGISTERED_HOST.format(broker=1, host="127.0.0.1", cluster="advertises",
                                                            hosts="localhost")
    assert accepted == []
    assert f"broker 1 (127.0.0.1): {state.last_error}" in _shell("metrics", "--cluster", "advertises")
    assert accepted == []

    Cluster.objects.filter(name="advertises").update(bootstrap_servers=kafka_node.bootstrap)
    broker_metrics_sample_all()
    assert accepted, "the registered host was not asked"

    template_port, template_accepted = jmx_listeners()
    Cluster.objects.filter(name="advertises").update(bootstrap_servers=f"localhost:{kafka_node.port}")
    _source(admin, "127.0.0.{id}:" + str(template_port), cluster="advertises")
    broker_metrics_sample_all()
    assert template_accepted, "the template's host was not asked"


def test_a_late_sampler_says_so_and_finished_minutes_are_averaged(local_cluster, kafka_node, admin):
    _source(admin, f"1=127.0.0.1:{kafka_node.jmx_port}")
    start = datetime.now(UTC).replace(second=5, microsecond=0) + timedelta(minutes=1)
    broker_metrics_sample_all(now=start)
    broker_metrics_sample_all(now=start + timedelta(seconds=20))
    assert SamplerRun.objects.get(cluster="local").behind == ""
    broker_metrics_sample_all(now=start + timedelta(seconds=200))
    run = SamplerRun.objects.get(cluster="local")
    assert "samples were missed" in run.behind
    minutes = BrokerSample.objects.filter(cluster="local", step=BrokerSample.MINUTE, topic="")
    assert minutes.count() == 1  # the minute of the first two samples; the third's has not ended
    raw = [s.values["under_replicated"] for s in BrokerSample.objects.filter(cluster="local", step=0, topic="",
                                                                             at__lt=minutes[0].at + timedelta(60))]
    assert minutes[0].values["under_replicated"] == sum(raw) / len(raw)


def test_the_source_is_checked_audited_and_for_admins_only(local_cluster, admin, viewer):
    for spec in ("1=evil host:1", "service:jmx:rmi:///jndi/rmi://x:1/jmxrmi", "+"):
        with pytest.raises(CommandError, match="JMX addresses are|not a host name"):
            _shell("source", "--cluster", "local", "--jmx", spec, "--actor", admin.username)
    with pytest.raises(CommandError, match="not one meant for cluster secrets"):
        _shell("source", "--cluster", "local", "--jmx", "+10000", "--username", "monitor", "--password-env",
               "HOME", "--actor", admin.username)
    with pytest.raises(CommandError, match="outside the folders"):
        _shell("source", "--cluster", "local", "--jmx", ":9999", "--tls", "--ca-file", "/etc/ssl/private/ca.pem",
               "--actor", admin.username)
    with pytest.raises(CommandError, match="for JMX agents over TLS"):
        _shell("source", "--cluster", "local", "--jmx", ":9999", "--ca-file", "/tmp/ca.pem", "--actor", admin.username)
    with pytest.raises(CommandError):
        _shell("source", "--cluster", "local", "--jmx", "+10000", "--actor", viewer.username)
    assert not AuditEvent.objects.filter(action="brokers.metrics_source.set").exists()
    out = _shell("source", "--cluster", "local", "--jmx", ":9999", "--username", "monitor", "--password-env",
                 "CONSOLE_SECRET_SOME_JMX", "--actor", admin.username, "--reason", "ops")
    assert "JMX :9999 as monitor" in out
    event = AuditEvent.objects.get(action="brokers.metrics_source.set", outcome="success")
    assert event.after["password_env"] == "CONSOLE_SECRET_SOME_JMX" and event.target == "cluster:local"


def test_the_topic_list_shows_and_sorts_by_throughput(local_cluster, kafka_node, admin, viewer, client_for,
                                                      topic_factory, produce):
    from topics.selectors import topic_snapshot_refresh

    _source(admin, f"1=127.0.0.1:{kafka_node.jmx_port}")
    prefix = f"thr{uuid.uuid4().hex[:6]}"
    busy, quiet = topic_factory(prefix), topic_factory(prefix)
    broker_metrics_sample_all()
    produce(quiet, [(0, None, b"q", None)])
    produce(busy, [(0, None, bytes(2000), None) for _ in range(100)])
    broker_metrics_sample_all()
    topic_snapshot_refresh("local", wait_s=30)
    client = client_for(viewer)
    for desc, first, second in (("1", busy, quiet), ("", quiet, busy)):
        page = client.get("/clusters/local/topics/", {"q": prefix, "sort": "bytes_in", "desc": desc}).content.decode()
        assert page.index(f">{first}</a>") < page.index(f">{second}</a>")
    assert " B/s</td>" in page
