"""bench/replay.py's specs are what the replay application reads (fast): the bench once wrote a job id the typed
spec refused (sparkjobs/jobs/replay_spec.py), and failed on its first use."""

from __future__ import annotations

from bench.replay import replay_spec
from sparkjobs.jobs.replay_spec import FileSink, ReplaySpec, TopicSink


def test_the_benchs_specs_read_back_as_written():
    sinks = (FileSink(kind="parquet", path="/tmp/bench-out"),
             TopicSink(topic="replay-target", bootstrap="127.0.0.1:9092", keep_partitions=True))
    specs = [replay_spec("127.0.0.1:9092", "replay-source", {0: (0, 1000), 1: (0, 999)}, sink) for sink in sinks]
    for spec in specs:
        assert ReplaySpec.from_json(spec.to_json()) == spec
    assert len({spec.job_id for spec in specs}) == len(specs) and len({spec.job_key for spec in specs}) == len(specs)
