"""What the brokers spent their request threads on between two readings, by request type, read with Kafka's own
JmxTool from each broker's JMX port.

Kafka keeps, per request type, a histogram of the time a request spent in a request thread (LocalTimeMs) and
waiting for one (RequestQueueTimeMs); count × mean is the running total, so the difference of two readings is
the time spent in between. On a machine where the brokers take a core while the console runs, this says which
of the console's calls (or the churning client's) that core went to.
"""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

METRICS = ("LocalTimeMs", "RequestQueueTimeMs")
JMX_TOOL = "org.apache.kafka.tools.JmxTool"
_LINE = re.compile(r'^kafka\.network:type=RequestMetrics,name=(\w+),request=(\w+):(Count|Mean),"([0-9.Ee+-]+)"$')

Totals = dict[tuple[str, str], tuple[int, float]]  # (request, metric) -> (count, total ms)


def parse(output: str) -> Totals:
    """JmxTool's csv report (one `object:attribute,"value"` a line) as running totals (pure)."""
    counts: dict[tuple[str, str], int] = {}
    means: dict[tuple[str, str], float] = {}
    for line in output.splitlines():
        found = _LINE.match(line.strip())
        if not found:
            continue
        metric, request, attribute, value = found.groups()
        if attribute == "Count":
            counts[(request, metric)] = int(float(value))
        else:
            means[(request, metric)] = float(value)
    return {key: (count, count * means.get(key, 0.0)) for key, count in counts.items()}


def read_one(jmx_url: str, classpath: str, timeout: float = 60.0) -> Totals:
    command = ["java", "-Xmx256m", "-cp", classpath, JMX_TOOL, "--jmx-url", jmx_url, "--one-time", "true",
               "--report-format", "csv", "--attributes", "Count,Mean"]
    for metric in METRICS:
        command += ["--object-name", f"kafka.network:type=RequestMetrics,name={metric},request=*"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"JmxTool at {jmx_url}: {result.stderr[-500:]}")
    return parse(result.stdout)


def read(jmx_urls: list[str]) -> Totals:
    """Every broker's totals, summed (the brokers read at once)."""
    from devstack.kafka import java_classpath

    classpath = java_classpath()
    summed: dict[tuple[str, str], tuple[int, float]] = {}
    with ThreadPoolExecutor(max_workers=len(jmx_urls) or 1) as pool:
        for totals in pool.map(lambda url: read_one(url, classpath), jmx_urls):
            for key, (count, total) in totals.items():
                before = summed.get(key, (0, 0.0))
                summed[key] = (before[0] + count, before[1] + total)
    return summed


def spent(before: Totals, after: Totals) -> list[tuple[str, int, float, float]]:
    """(request, requests, ms in request threads, ms waiting for one) between the readings, busiest first (pure)."""
    requests = {request for request, _ in after}
    rows = []
    for request in requests:
        local = [after.get((request, "LocalTimeMs"), (0, 0.0)), before.get((request, "LocalTimeMs"), (0, 0.0))]
        queued = [after.get((request, "RequestQueueTimeMs"), (0, 0.0)),
                  before.get((request, "RequestQueueTimeMs"), (0, 0.0))]
        count = local[0][0] - local[1][0]
        if count > 0:
            rows.append((request, count, local[0][1] - local[1][1], queued[0][1] - queued[1][1]))
    return sorted(rows, key=lambda row: -row[2])
