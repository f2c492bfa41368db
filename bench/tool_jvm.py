"""What a run of one of Kafka's command-line tools costs with the JVM's defaults and as the tests start it
(devstack/tool_jvm.py: client compiler, serial collector, the tool's class-data archive), on the same data.

    .venv/bin/python bench/tool_jvm.py [--repeat 5]

Starts a fresh broker (bench_stack) with one topic and one group, then runs `kafka-consumer-groups --describe` and
`kafka-topics --describe` alternately both ways, in a scratch archive folder (the first short-lived run writes the
archive and is not counted). Reports the CPU (user + system, the JVM's and its children's) and the wall time of
each run; writes bench/RESULTS.md (section tool-jvm).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import bench_stack, check, machine, parse_args, write_section  # noqa: E402

TOOLS = {
    "kafka-consumer-groups --describe": ("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                                         ["--describe", "--group", "bench-tool-group"]),
    "kafka-topics --describe": ("org.apache.kafka.tools.TopicCommand", ["--describe", "--topic", "bench-tool-topic"]),
}


def _timed(command: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    args = parse_args(parser, smoke={"repeat": 1})

    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    from devstack.kafka import java_classpath
    from devstack.launcher import java_command
    from devstack.tool_jvm import tool_jvm_options

    with bench_stack("tool-jvm"):
        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic("bench-tool-topic", 4, 1)])["bench-tool-topic"].result(30)
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-tool-group"})
        consumer.commit(offsets=[TopicPartition("bench-tool-topic", 0, 0)], asynchronous=False)
        consumer.close()
        classpath = java_classpath()
        archives = Path(tempfile.mkdtemp(prefix="bench-tool-jvm-"))
        results: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for label, (main_class, tool_args) in TOOLS.items():
            tool = ["--bootstrap-server", bootstrap, *tool_args]
            with tool_jvm_options(main_class, classpath, archives) as options:  # writes the archive: not counted
                subprocess.run(java_command(main_class, *tool, heap=("-Xmx256m",), options=options,
                                            classpath=classpath), check=True, capture_output=True, timeout=300)
            for i in range(args.repeat):
                ways = [("JVM defaults", ()), ("short-lived (tests)", None)]
                for way, fixed in (ways if i % 2 == 0 else ways[::-1]):
                    if fixed is None:
                        with tool_jvm_options(main_class, classpath, archives) as options:
                            command = java_command(main_class, *tool, heap=("-Xmx256m",), options=options,
                                                   classpath=classpath)
                    else:
                        command = java_command(main_class, *tool, heap=("-Xmx256m",), classpath=classpath)
                    results.setdefault((label, way), []).append(_timed(command))
        shutil.rmtree(archives, ignore_errors=True)
    check(sorted(len(runs) for runs in results.values()) == [args.repeat] * 2 * len(TOOLS),
          "a tool did not run as often both ways")

    lines = [
        f"## Kafka's tools as short-lived JVMs ({time.strftime('%Y-%m-%d')})",
        "",
        f"`.venv/bin/python bench/tool_jvm.py --repeat {args.repeat}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker (Kafka 4.3.1); each run a new JVM from the fetched jars "
        f"(-Xmx256m), alternating which way goes first.",
        "",
        "| tool | JVM | CPU (median) | wall (median) | n |",
        "|---|---|---|---|---|",
    ]
    ratios = []
    for label in TOOLS:
        medians = {}
        for way in ("JVM defaults", "short-lived (tests)"):
            runs = results[(label, way)]
            cpu, wall = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
            medians[way] = cpu
            lines.append(f"| `{label}` | {way} | {cpu:.2f} s | {wall:.2f} s | {len(runs)} |")
        ratios.append(medians["short-lived (tests)"] / medians["JVM defaults"])
    lines += ["", "Short-lived / defaults, CPU: " + ", ".join(f"{r:.2f}" for r in ratios) + ". Short-lived = "
              "`-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:SharedArchiveFile=<the tool's archive>`, what "
              "`KafkaNode.run_tool` uses in the tests."]
    write_section("tool-jvm", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
