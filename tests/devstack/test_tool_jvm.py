"""Options for a short run of one of Kafka's tools: the first run writes the class-data archive the later ones map,
and the tool's own output is the same with or without it."""

from __future__ import annotations

import fcntl
import subprocess


from devstack.kafka import java_classpath
from devstack.launcher import SMALL_JVM, java_command
from devstack.tool_jvm import archive_path, tool_jvm_options


TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"


def _run(options: tuple[str, ...]) -> subprocess.CompletedProcess:
    command = java_command(TOPIC_COMMAND, "--help", heap=("-Xmx128m",), options=options, classpath=java_classpath())
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_the_first_run_writes_the_archive_the_next_maps_and_the_output_is_the_tools(tmp_path):
    plain = _run(())
    with tool_jvm_options(TOPIC_COMMAND, java_classpath(), tmp_path) as first:
        archiving = _run(first)
    with tool_jvm_options(TOPIC_COMMAND, java_classpath(), tmp_path) as second:
        mapped = _run(second)

    archive = archive_path(TOPIC_COMMAND, java_classpath(), tmp_path)
    assert any(option.startswith("-XX:ArchiveClassesAtExit=") for option in first)
    assert archive.stat().st_size > 1_000_000
    assert second == (*SMALL_JVM, "-Xlog:cds=off", "-Xlog:cds+dynamic=off", f"-XX:SharedArchiveFile={archive}")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []
    # The archiving run's own warnings stay out of what the tool prints.
    assert (archiving.returncode, archiving.stdout, archiving.stderr) == (plain.returncode, plain.stdout, plain.stderr)
    assert (mapped.returncode, mapped.stdout, mapped.stderr) == (plain.returncode, plain.stdout, plain.stderr)


def test_while_another_run_writes_it_a_run_goes_without_and_each_tool_has_its_own(tmp_path):
    classpath = java_classpath()
    archive = archive_path(TOPIC_COMMAND, classpath, tmp_path)
    with open(tmp_path / f"{archive.name}.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with tool_jvm_options(TOPIC_COMMAND, classpath, tmp_path) as options:
            assert options == SMALL_JVM

    assert archive_path("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", classpath, tmp_path) != archive
    assert archive_path(TOPIC_COMMAND, classpath, tmp_path) == archive
