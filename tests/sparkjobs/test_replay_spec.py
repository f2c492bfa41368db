"""The replay spec the console writes and Spark reads (sparkjobs/jobs/replay_spec.py): what is written reads back
the same, and a spec that is not one fails on reading, naming the field."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkjobs.jobs.replay_spec import (
    MSG_BAD_SPEC, FileSink, KafkaSource, Registry, ReplaySpec, SpecError, TopicSink,
)

names = st.text(min_size=1, max_size=20)
settings = st.dictionaries(st.text(max_size=10), st.text(max_size=10), max_size=3)
offsets = st.integers(0, 2**62)
ranges = st.dictionaries(st.integers(0, 10_000), st.tuples(offsets, offsets), max_size=5)
sinks = st.one_of(
    st.builds(TopicSink, topic=names, bootstrap=names, config=settings, keep_partitions=st.booleans()),
    st.builds(FileSink, kind=st.sampled_from(["parquet", "jsonl"]), path=names, typed=st.booleans(), hadoop=settings))
specs = st.builds(
    ReplaySpec, job_id=st.integers(1, 2**31), job_key=names, topic=names, ranges=ranges,
    source=st.builds(KafkaSource, bootstrap=names, config=settings), sink=sinks, filter=st.text(max_size=30),
    isolation=st.sampled_from(["read_committed", "read_uncommitted"]), kafka_timeout_ms=st.integers(1, 10**6),
    registry=st.none() | st.builds(Registry, url=names, config=settings),
    crash_first_attempt_after=st.none() | st.integers(0, 1000))


@given(specs)
def test_a_spec_reads_back_as_it_was_written(spec):
    assert ReplaySpec.from_json(spec.to_json()) == spec


def test_the_json_keeps_the_fields_spark_reads():
    spec = ReplaySpec(job_id=7, job_key="7-abc", topic="orders", ranges={0: (5, 10)},
                      source=KafkaSource("b:9092", {"security.protocol": "SASL_SSL"}),
                      sink=FileSink("parquet", "s3a://bucket/out", typed=True, hadoop={"fs.s3a.endpoint": "x"}),
                      registry=Registry("http://r"), crash_first_attempt_after=3)

    assert json.loads(spec.to_json()) == {
        "job_id": 7, "job_key": "7-abc", "topic": "orders", "ranges": {"0": [5, 10]}, "filter": "",
        "isolation": "read_committed", "kafka_timeout_ms": 30000,
        "source": {"bootstrap": "b:9092", "config": {"security.protocol": "SASL_SSL"}},
        "sink": {"kind": "parquet", "path": "s3a://bucket/out", "typed": True, "hadoop": {"fs.s3a.endpoint": "x"}},
        "registry": {"url": "http://r", "config": {}}, "fault": {"crash_first_attempt_after": 3}}


GOOD = {"job_id": 1, "job_key": "1-a", "topic": "t", "ranges": {"0": [0, 1]}, "source": {"bootstrap": "b"},
        "sink": {"kind": "jsonl", "path": "/tmp/x"}}


@pytest.mark.parametrize(("change", "what"), [
    ({"job_id": "1"}, "spec.job_id is not int"),
    ({"job_id": True}, "spec.job_id is not int"),
    ({"topic": None}, "spec.topic is not str"),
    ({"source": {}}, "spec.source.bootstrap is missing"),
    ({"sink": {"kind": "csv", "path": "/x"}}, "sink kind 'csv' is none of topic, parquet, jsonl"),
    ({"sink": {"kind": "topic", "bootstrap": "b"}}, "spec.sink.topic is missing"),
    ({"ranges": {"0": [0]}}, "ranges: partition '0' needs [start, end] offsets"),
    ({"ranges": {"p": [0, 1]}}, "ranges: partition 'p' needs [start, end] offsets"),
    ({"isolation": "serializable"}, "isolation 'serializable' is none of ('read_committed', 'read_uncommitted')"),
    ({"fault": {}}, "spec.fault.crash_first_attempt_after is missing"),
])
def test_a_bad_spec_is_refused_naming_the_field(change, what):
    with pytest.raises(SpecError) as error:
        ReplaySpec.from_json(json.dumps({**GOOD, **change}))
    assert str(error.value) == MSG_BAD_SPEC.format(what=what)


def test_missing_fields_are_named():
    without_topic = {k: v for k, v in GOOD.items() if k != "topic"}
    with pytest.raises(SpecError, match="spec.topic is missing"):
        ReplaySpec.from_json(json.dumps(without_topic))
    with pytest.raises(SpecError, match="not JSON"):
        ReplaySpec.from_json("{")
