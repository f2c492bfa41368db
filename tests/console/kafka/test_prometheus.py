"""The Prometheus reader's pure parts: which addresses may reach urllib, how the exporter's series are named back as
MBeans, and how Prometheus's instances are matched to brokers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.kafka.broker_mbeans import reading_from_attributes
from console.kafka.errors import InvalidRequest
from console.kafka.prometheus import (_wanted_index, check_prometheus_url, instance_brokers, object_name, queries)
from console.kafka.types import JmxEndpoint


@pytest.mark.parametrize("url", ["http://127.0.0.1:9090", "https://prometheus.example.com/", "http://[::1]:9090",
                                 "https://metrics.internal:443/prometheus/eu-1"])
def test_a_plain_address_is_taken(url):
    assert check_prometheus_url(url) == url.rstrip("/")


@pytest.mark.parametrize("url", ["", "ftp://host", "file:///etc/passwd", "http://user:pw@host:9090",
                                 "http://host:9090/?query=up", "http://host:9090/#x", "http://host:0",
                                 "http://host:70000", "http://ho st", "http://host/a b", "http://host/%2e%2e",
                                 "javascript:alert(1)", "http://host\n.evil", "http://-host"])
def test_anything_else_is_refused_before_a_request(url):
    with pytest.raises(InvalidRequest, match="A Prometheus address is"):
        check_prometheus_url(url)


@given(st.text(max_size=80))
def test_no_typed_text_brings_a_user_query_or_odd_character_to_urllib(text):
    try:
        url = check_prometheus_url(text)
    except InvalidRequest:
        return
    assert url.startswith(("http://", "https://"))
    assert not set(url) & set("@?#%\\\"' \t\r\n<>{}|^`")


def _series(metric, **labels):
    return {"__name__": metric, "instance": "127.0.0.1:7071", "job": "kafka", **labels}


def test_the_exporters_series_are_named_back_as_their_mbeans():
    index = _wanted_index(True)
    assert object_name(_series("kafka_server_BrokerTopicMetrics_Count", name="BytesInPerSec"), index) == (
        "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec", "Count")
    assert object_name(_series("kafka_server_BrokerTopicMetrics_OneMinuteRate", name="BytesInPerSec",
                               topic="orders.v1"), index) == (
        "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic=orders.v1", "OneMinuteRate")
    assert object_name(_series("kafka_network_RequestMetrics_Count", name="RequestsPerSec", request="Produce",
                               version="11"), index) == (
        "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce,version=11", "Count")
    assert object_name(_series("kafka_controller_KafkaController_Value", name="ActiveControllerCount"), index) == (
        "kafka.controller:type=KafkaController,name=ActiveControllerCount", "Value")
    # what was not asked for, or cannot be a topic's name, is left out
    assert object_name(_series("kafka_server_BrokerTopicMetrics_Count", name="TotalFetchRequestsPerSec"), index) is None
    assert object_name(_series("kafka_server_BrokerTopicMetrics_Count", name="BytesInPerSec", topic="a,b=c"),
                       index) is None
    assert object_name(_series("kafka_network_RequestMetrics_Count", name="RequestsPerSec", request="Metadata",
                               version="12"), index) is None
    assert object_name(_series("jvm_memory_bytes_used", area="heap"), index) is None
    assert object_name(_series("kafka_server_BrokerTopicMetrics_Count", name="BytesInPerSec", topic="t"),
                       _wanted_index(False)) is None


def test_named_back_series_make_the_same_reading_as_jmx_would():
    found = {"kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec": {"Count": 1000.0, "OneMinuteRate": 12.5},
             "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce,version=11": {"Count": 3.0,
                                                                                                   "OneMinuteRate": 1.0},
             "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce,version=12": {"Count": 4.0,
                                                                                                   "OneMinuteRate": 2.0},
             "kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent": {"OneMinuteRate": 0.97},
             "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t1": {"Count": 9.0}}
    reading = reading_from_attributes(1, "h:1", 0.0, 0.0, found)
    assert reading.meters["bytes_in"].count == 1000 and reading.meters["produce_requests"].count == 7
    assert reading.meters["produce_requests"].one_minute_rate == 3.0
    assert reading.gauges["request_idle_pct"] == pytest.approx(97.0)
    assert reading.topics["t1"]["messages_in"].count == 9


def test_instances_are_matched_by_address_then_by_a_port_only_one_has():
    one, two = JmxEndpoint(1, "kafka-1.example", 7071), JmxEndpoint(2, "127.0.0.1", 7072)
    assert instance_brokers({"kafka-1.example:7071", "10.0.0.2:7072"}, [one, two]) == {
        "kafka-1.example:7071": one, "10.0.0.2:7072": two}
    # the same port on two hosts: only the exact address may stand for a broker
    assert instance_brokers({"10.0.0.1:7071", "10.0.0.9:7071"}, [one]) == {}
    v6 = JmxEndpoint(3, "::1", 7073)
    assert instance_brokers({"[::1]:7073"}, [v6]) == {"[::1]:7073": v6}


def test_three_queries_whatever_the_number_of_brokers_each_limited_to_their_ports():
    targets = [JmxEndpoint(i, f"b{i}.example", 7070 + i) for i in range(1, 31)]
    asked = queries(targets, topics=True)
    assert set(asked) == {"brokers", "topics", "up"}
    assert 'instance=~".+:(7071|' in asked["up"] and "7100" in asked["up"]
    assert 'topic=""' in asked["brokers"] and 'topic!=""' in asked["topics"]
    assert set(queries(targets, topics=False)) == {"brokers", "up"}
