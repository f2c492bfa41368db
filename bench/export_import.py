"""Export and import at size: `manage.py messages export` of a whole topic against a raw confluent-kafka
consumer's read of the same offsets (count and digest must be equal), with the peak memory of the exporting
process and of the cluster's client process (which scans); then `manage.py messages import` of a JSON-lines file
with three bad lines, which must be reported by number.

    .venv/bin/python bench/export_import.py [--records 1000000] [--size 200] [--partitions 4] [--lines 100000]

The last line is JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, bench_stack, check, machine, parse_args, wait_for_leaders, write_section  # noqa: E402



def bad_lines(lines: int) -> tuple[int, int, int]:
    return 17, lines // 2 + 1, lines - 2


def produce(bootstrap: str, topic: str, records: int, size: int, partitions: int) -> float:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # held: a client collected early cancels its futures
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result()
    wait_for_leaders(admin, [topic])
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1_000_000,
                         "queue.buffering.max.messages": 2_000_000, "compression.type": "lz4"})
    started = time.perf_counter()
    for i in range(records):
        value = (f"order {i} shipped to warehouse {i % 97}; amount {i % 1000}.50 EUR; " * 8)[:size].encode()
        while True:
            try:
                producer.produce(topic, key=f"k{i}".encode(), value=value, partition=i % partitions,
                                 headers=[("n", str(i).encode())])
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush(300)
    return time.perf_counter() - started


class Digest:
    """Count and a digest per partition over (offset, key, value) in offset order: a reader that interleaves
    partitions differently still gets the same digest."""

    def __init__(self) -> None:
        self.count, self.parts = 0, {}

    def add(self, partition: int, offset: int, key: str, value: str) -> None:
        self.count += 1
        self.parts.setdefault(partition, hashlib.sha256()).update(f"{offset}\0{key}\0{value}\n".encode())

    def hexdigest(self) -> str:
        return hashlib.sha256("".join(f"{p}:{h.hexdigest()}" for p, h in sorted(self.parts.items())).encode()) \
            .hexdigest()


def raw_read(bootstrap: str, topic: str, partitions: int) -> tuple[float, Digest]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-raw-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "isolation.level": "read_committed", "fetch.max.bytes": 52_428_800})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    digest, ended, started = Digest(), set(), time.perf_counter()
    while len(ended) < partitions:
        for m in consumer.consume(10_000, timeout=1):
            if m.error():
                ended.add(m.partition())
                continue
            digest.add(m.partition(), m.offset(), m.key().decode(), m.value().decode())
    consumer.close()
    return time.perf_counter() - started, digest


def client_process_hwm_kib() -> int:
    """Peak resident memory of this bench's Kafka client processes (the scan runs there)."""
    ours, peak = os.environ["KAFKA_CLIENT_SOCKET_DIR"], 0
    for proc in Path("/proc").iterdir():
        try:
            if b"gateway.kafka.sandbox.child" not in (proc / "cmdline").read_bytes():
                continue
            if f"KAFKA_CLIENT_SOCKET_DIR={ours}".encode() not in (proc / "environ").read_bytes():
                continue
            status = (proc / "status").read_text()
        except OSError:
            continue
        peak = max(peak, int(status.split("VmHWM:")[1].split()[0]))
    return peak


def manage(*args: str) -> tuple[float, int, str]:
    """Runs manage.py in a child of its own; returns its time, its peak RSS (KiB) and its standard output. The
    peak is the child's VmHWM, read every 20 ms while it runs: rusage would not do, as Linux lets a child start
    with its parent's high-water mark, and this process holds a million records' worth of digests."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), *args], stdout=out, stderr=err, cwd=ROOT)
        peak, status = 0, Path(f"/proc/{child.pid}/status")
        while child.poll() is None:
            try:
                peak = max(peak, int(status.read_text().split("VmHWM:")[1].split()[0]))
            except (OSError, IndexError, ValueError):
                pass
            time.sleep(0.02)
        seconds = time.perf_counter() - started
        if child.returncode != 0:
            err.seek(0)
            raise SystemExit(f"manage.py {' '.join(args[:2])} failed: {err.read().decode()[-2000:]}")
        out.seek(0)
        return seconds, peak, out.read().decode()


def export_digest(path: Path) -> Digest:
    digest = Digest()
    with path.open("rb") as handle:
        for line in handle:
            row = json.loads(line)
            digest.add(row["partition"], row["offset"], row["key"], row["value"])
    return digest


def import_file(path: Path, lines: int) -> None:
    first, second, _ = bad_lines(lines)
    with path.open("w") as out:
        for n in range(1, lines + 1):
            if n in (first, second, lines - 2):
                out.write('{"value": "broken line\n' if n == first else
                          json.dumps({"key": "no value"}) + "\n" if n == second else
                          json.dumps({"value": "x", "partition": 99}) + "\n")
            else:
                out.write(json.dumps({"key": f"k{n}", "value": {"line": n, "note": "imported"},
                                      "headers": [["src", "bench"]]}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--lines", type=int, default=100_000)
    args = parse_args(parser, smoke={"records": 2000, "lines": 300})
    with bench_stack("export-import") as _:
        from django.contrib.auth import get_user_model

        from console.clusters.services import cluster_seed_local

        cluster_seed_local()
        get_user_model().objects.create_superuser("bench", password="bench-pass-123")
        bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
        topic = f"export-bench-{uuid.uuid4().hex[:8]}"
        work = Path(os.environ["KAFKA_CLIENT_SOCKET_DIR"]).parent
        produce_s = produce(bootstrap, topic, args.records, args.size, args.partitions)
        raw_s, raw = raw_read(bootstrap, topic, args.partitions)
        small = work / "small.jsonl"
        small_s, small_rss, _ = manage("messages", "export", "--topic", topic, "--limit", "1000", "--output",
                                       str(small), "--actor", "bench")
        small_client = client_process_hwm_kib()
        mid_out = work / "mid.jsonl"
        mid_n = args.records // 5
        mid_s, mid_rss, _ = manage("messages", "export", "--topic", topic, "--limit", str(mid_n), "--output",
                                   str(mid_out), "--actor", "bench")
        mid_client = client_process_hwm_kib()
        mid_out.unlink()
        out = work / "export.jsonl"
        export_s, export_rss, _ = manage("messages", "export", "--topic", topic, "--limit", str(args.records),
                                         "--output", str(out), "--actor", "bench")
        export_client = client_process_hwm_kib()
        got = export_digest(out)
        check((got.count, got.hexdigest()) == (raw.count, raw.hexdigest()) and raw.count == args.records,
              f"export and raw read differ: {got.count} vs {raw.count} records")
        file_mib = out.stat().st_size / 2**20
        out.unlink()

        target = f"import-bench-{uuid.uuid4().hex[:8]}"
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(target, args.partitions, 1)])[target].result()
        wait_for_leaders(admin, [target])
        source = work / "import.jsonl"
        import_file(source, args.lines)
        import_s, import_rss, stdout = manage("messages", "import", "--topic", target, "--file", str(source),
                                            "--yes", "--skip-bad", "--rate", "50000", "--format", "json",
                                            "--actor", "bench", "--reason", "bench")
        report = json.loads(stdout.strip().splitlines()[-1])
        _, imported = raw_read(bootstrap, target, args.partitions)
        bad = [b["line"] for b in report["bad_lines"]]
        check(bad == list(bad_lines(args.lines)) and imported.count == report["records"] == args.lines - 3,
              f"import: bad lines {bad}, {imported.count} records in the topic")
    n = args.records
    figures = {"records": n, "export_s": round(export_s, 2), "export_records_per_s": round(n / export_s),
               "raw_s": round(raw_s, 2), "export_file_mib": round(file_mib, 1), "digest_equal": True,
               "export_peak_rss_mib": round(export_rss / 1024, 1),
               "small_export_peak_rss_mib": round(small_rss / 1024, 1),
               "client_process_peak_rss_mib": round(export_client / 1024, 1),
               "client_process_peak_after_small_mib": round(small_client / 1024, 1),
               "mid_records": mid_n, "mid_export_s": round(mid_s, 2), "mid_export_peak_rss_mib": round(mid_rss / 1024, 1),
               "client_process_peak_after_mid_mib": round(mid_client / 1024, 1),
               "import_lines": args.lines, "import_s": round(import_s, 2),
               "import_records_per_s": round((args.lines - 3) / import_s), "import_bad_lines": bad,
               "import_peak_rss_mib": round(import_rss / 1024, 1)}
    lines = [
        f"## Export and import ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`.venv/bin/python bench/export_import.py --records {n} --size {args.size} --partitions {args.partitions}"
        f" --lines {args.lines}`",
        "",
        f"Machine: {machine()}. Single local KRaft broker. {n:,} records of {args.size} bytes in {args.partitions} "
        f"partitions (produced in {produce_s:.1f} s).",
        "",
        "| what | time | records/s | peak RSS |",
        "|---|---|---|---|",
        f"| `messages export` of the whole topic as JSON lines ({file_mib:.0f} MiB) | {export_s:.1f} s | "
        f"{figures['export_records_per_s']:,} | {figures['export_peak_rss_mib']} MiB (the command); "
        f"{figures['client_process_peak_rss_mib']} MiB (the client process, which scans) |",
        f"| `messages export --limit {mid_n}` (a fifth of the range, run before) | {mid_s:.1f} s | "
        f"{round(mid_n / mid_s):,} | {figures['mid_export_peak_rss_mib']} MiB; client process "
        f"{figures['client_process_peak_after_mid_mib']} MiB |",
        f"| `messages export --limit 1000` (run first: start-up and a warm client process) | {small_s:.1f} s | | "
        f"{figures['small_export_peak_rss_mib']} MiB; client process {figures['client_process_peak_after_small_mib']} MiB |",
        f"| raw confluent-kafka consumer, same offsets | {raw_s:.1f} s | {round(n / raw_s):,} | |",
        f"| `messages import --yes --skip-bad --rate 50000` of {args.lines:,} JSON lines | {import_s:.1f} s | "
        f"{figures['import_records_per_s']:,} | {figures['import_peak_rss_mib']} MiB (the command) |",
        "",
        f"The export's count and digest (per partition, offset + key + value in offset order) equal the raw read's. "
        f"The import reported bad lines {', '.join(map(str, bad))} by number and wrote the other "
        f"{args.lines - 3:,} records (read back with a raw consumer). Peak RSS is each command's own (its VmHWM); the "
        "client process's is its high-water mark since it started, read after each export.",
    ]
    write_section("export-import", "\n".join(lines))
    print("\n".join(lines))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
