import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.errors import ConsoleError
from sparkjobs import bounds


def test_start_and_end_forms():
    assert bounds.parse_start("earliest") == bounds.Earliest()
    assert bounds.parse_start("offsets:0=5,2=7") == bounds.Offsets({0: 5, 2: 7})
    assert bounds.parse_start("group:billing") == bounds.GroupCommitted("billing")
    assert bounds.parse_start("reset:42") == bounds.SkippedByReset(42)
    assert bounds.parse_start("timestamp:2026-01-01T00:00:00Z") == bounds.AtTime(1767225600000)
    assert bounds.parse_end("timestamp:2026-01-01T01:00:00+01:00") == bounds.AtTime(1767225600000)
    assert bounds.parse_end("latest") == bounds.Latest()


@pytest.mark.parametrize("text", ["latest", "offsets:a=1", "timestamp:yesterday", "group:", "soon"])
def test_bad_starts_are_named(text):
    with pytest.raises(ConsoleError, match="Cannot read"):
        bounds.parse_start(text)


def test_ranges_are_clamped_to_the_log_and_never_negative():
    assert bounds.clamp_ranges({0: -5, 1: 50}, {0: 1000, 1: 10}, {0: 2, 1: 0}, {0: 100, 1: 60}) == {
        0: (2, 100), 1: (50, 50)}


@pytest.mark.parametrize(("lines", "sentence"), [
    (["java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.TimeoutException: Timed out waiting "
      "for a node assignment. Call: listNodes", "\tat org.apache.spark.sql.kafka010.KafkaOffsetReaderAdmin.x(A.scala:1)"],
     "Kafka did not answer in time (the broker may be down, frozen or unreachable): Timed out waiting for a node "
     "assignment. Call: listNodes"),
    (["org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 0.0 failed 1 times, most "
      "recent failure: Lost task 0.0: java.util.concurrent.TimeoutException: Cannot fetch record for offset 12 in "
      "8000 milliseconds"],
     "Kafka did not answer in time (the broker may be down, frozen or unreachable): Cannot fetch record for offset 12 "
     "in 8000 milliseconds"),
    (["java.util.concurrent.TimeoutException: Futures timed out after [10 seconds]"],
     "Spark failed with TimeoutException: Futures timed out after [10 seconds]"),
    (["org.apache.spark.sql.AnalysisException: [UNRESOLVED_COLUMN] amount"],
     "Spark failed with AnalysisException: [UNRESOLVED_COLUMN] amount"),
    (["nothing useful"], "Spark failed; see the log."),
])
def test_a_spark_log_is_summed_up_in_one_sentence_that_names_an_unanswering_cluster(lines, sentence):
    from sparkjobs.runner import failure_sentence

    assert failure_sentence(lines) == sentence


def test_replay_connections_are_bounded_and_a_clusters_own_settings_win():
    from sparkjobs.jobs.replay import reader_options

    from sparkjobs.jobs.replay_spec import KafkaSource

    read = reader_options(KafkaSource("b:9092", {"request.timeout.ms": "45000", "client.id": "c"}), 8000)
    assert read["kafkaConsumer.pollTimeoutMs"] == "8000" and read["kafka.default.api.timeout.ms"] == "8000"
    assert read["kafka.request.timeout.ms"] == "45000" and read["kafka.client.id"] == "c"


@pytest.mark.parametrize(("read", "planned", "isolation", "uncommitted", "expected"), [
    (110, 110, "read_committed", None, (0, 0)),  # no gap: nothing more is read
    (80, 116, "read_committed", 110, (30, 6)),
    (110, 116, "read_uncommitted", None, (None, 6)),
])
def test_offsets_without_records_are_told_apart(read, planned, isolation, uncommitted, expected):
    from sparkjobs.jobs.replay import offsets_without_records

    def count_uncommitted():
        assert uncommitted is not None, "counted again without a gap"
        return uncommitted

    assert offsets_without_records(read, planned, isolation, count_uncommitted) == expected


def test_a_driver_is_told_apart_by_master_memory_jars_and_code(settings, monkeypatch, tmp_path):
    from sparkjobs import runner

    jars = ["/j/kafka.jar"]
    settings.SPARK_MASTER, settings.SPARK_DRIVER_MEMORY = "local[*]", "1g"
    first = runner.driver_fingerprint(jars)
    assert runner.driver_fingerprint(jars) == first
    assert runner.driver_fingerprint(jars + ["/j/avro.jar"]) != first
    settings.SPARK_MASTER = "spark://127.0.0.1:7077"
    assert runner.driver_fingerprint(jars) != first
    settings.SPARK_MASTER, settings.SPARK_DRIVER_MEMORY = "local[*]", "2g"
    assert runner.driver_fingerprint(jars) != first
    settings.SPARK_DRIVER_MEMORY = "1g"
    changed = tmp_path / "replay.py"  # a deploy that changes the replay application
    changed.write_text(runner.APP.read_text() + "\n# changed\n")
    monkeypatch.setattr(runner, "APP", changed)
    assert runner.driver_fingerprint(jars) != first


def test_a_replay_the_driver_lacks_the_jars_for_is_refused_with_the_fix(settings):
    from sparkjobs import runner
    from sparkjobs.jobs.replay_spec import FileSink, TopicSink
    from sparkjobs.runner import SPARK_AVRO_JARS, SPARK_S3A_JARS

    kafka_only = ["/x/kafka.jar"]
    s3a = FileSink("parquet", "s3a://bucket/out")
    typed = FileSink("parquet", "/tmp/out", typed=True)
    assert "s3a (hadoop-aws) jars are missing" in runner.missing_jars(s3a, kafka_only)
    assert "Avro jars are missing" in runner.missing_jars(typed, kafka_only)
    assert "make deps" in runner.missing_jars(typed, kafka_only)
    assert runner.missing_jars(s3a, kafka_only + [f"{SPARK_S3A_JARS}/hadoop-aws.jar"]) == ""
    assert runner.missing_jars(typed, kafka_only + [f"{SPARK_AVRO_JARS}/spark-avro.jar"]) == ""
    assert runner.missing_jars(TopicSink("t", "b:9092"), kafka_only) == ""


@given(st.lists(st.tuples(st.text(min_size=1), st.one_of(st.none(), st.binary())), min_size=1, max_size=5))
def test_headers_cross_to_the_topic_sink_unchanged(headers):
    """What Spark's to_json writes for the headers column (binary as base64, a null value left out) comes back as
    the same pairs."""
    import base64
    import json

    from sparkjobs.jobs.replay_sinks import header_pairs

    text = json.dumps([{"key": k} if v is None else {"key": k, "value": base64.b64encode(v).decode()}
                       for k, v in headers])
    assert header_pairs(text) == headers


@pytest.mark.parametrize(("name", "kind", "expected"), [
    ("part-00000", "jsonl", "part-00000.jsonl"),
    ("part-00001-3f2a-c000.json", "jsonl", "part-00001-3f2a-c000.jsonl"),
    ("part-00000.jsonl", "jsonl", "part-00000.jsonl"),
    ("part-00000-3f2a-c000.snappy.parquet", "parquet", "part-00000-3f2a-c000.snappy.parquet"),
    ("part-00000", "parquet", "part-00000.parquet"),
    ("part-00000", "topic", "part-00000"),
])
def test_replay_files_keep_their_formats_extension(name, kind, expected):
    from sparkjobs.jobs.replay import with_extension

    assert with_extension(name, kind) == expected
