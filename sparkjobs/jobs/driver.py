"""The resident Spark driver: one long-lived Spark application that runs the console's replays, so each replay
finds a started session and a JVM whose JIT has already compiled the read and write paths (a fresh spark-submit
per replay spent seconds starting and ran its first millions of records interpreted).

    spark-submit ... sparkjobs/jobs/driver.py STATE_FILE OWNER_PID IDLE_SECONDS

It imports no Django. It listens on a TCP port of 127.0.0.1 that it writes, with its process ids and the token
it got in its CONSOLE_DRIVER_TOKEN environment variable, into STATE_FILE (mode 0600, so only the worker's user
can read it); every request must carry that token. Spark's own ports (RPC, block transfers) ask for Spark's
secret (spark.authenticate, sparkjobs/runner.py); the RPC port is in STATE_FILE too.
Requests are one JSON line each:

    {"token": ..., "run": "/path/spec.json"}   runs a replay; answers its CONSOLE-PROGRESS / CONSOLE-RESULT lines,
                                              any error's text, then CONSOLE-END {"state": ...}. A line "cancel"
                                              from the client, or the client going away, cancels the replay.
    {"token": ..., "cancel": JOB_ID}          cancels that job's replay if it runs here; answers {"running": bool}
    {"token": ..., "ping": true}              answers {"pid": ..., "jobs": [...], "warming": bool}

Before its token is checked, a connection gets REQUEST_DEADLINE_S to send one line of at most REQUEST_MAX_BYTES,
and at most MAX_PENDING connections wait for their line at once; any other is closed, so a client that sends
nothing, or an endless line, neither holds a thread for long nor grows the driver's memory.

It stops by itself once idle for IDLE_SECONDS or once OWNER_PID (the worker process that started it) has gone,
after its running replays end, so no driver outlives the worker that uses it for long.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import shutil
import socket
import sys
import threading
import time
import traceback
from pathlib import Path

from pyspark.sql import SparkSession

import replay
from gateway.secret_files import write_secret_file
from replay_spec import ReplaySpec, SpecError


REQUEST_MAX_BYTES = 64 * 1024  # a request is a token and a path: far below this
REQUEST_DEADLINE_S = 5.0  # the worker sends its line at once
MAX_PENDING = 64


def read_request(connection: socket.socket) -> tuple[bytes, bytes] | None:
    """(first line, bytes after it), or None once the line outgrows REQUEST_MAX_BYTES, the deadline passes or the
    client goes. Reads at most REQUEST_MAX_BYTES + 1 bytes in all."""
    deadline = time.monotonic() + REQUEST_DEADLINE_S
    received = bytearray()
    while (end := received.find(b"\n")) < 0:
        remaining = deadline - time.monotonic()
        if len(received) > REQUEST_MAX_BYTES or remaining <= 0:
            return None
        connection.settimeout(remaining)
        try:
            chunk = connection.recv(REQUEST_MAX_BYTES + 1 - len(received))
        except OSError:  # the deadline (TimeoutError) or the client gone
            return None
        if not chunk:
            return None
        received += chunk
    if end > REQUEST_MAX_BYTES:
        return None
    connection.settimeout(None)
    return bytes(received[:end]), bytes(received[end + 1:])


class Driver:
    def __init__(self, spark: SparkSession, token: str):
        self.spark, self.token = spark, token
        self.pending = threading.BoundedSemaphore(MAX_PENDING)  # connections whose request line is not read yet
        self.jobs: dict[str, str] = {}  # job id -> job group, of the replays running now
        self.lock = threading.Lock()
        self.last_active = time.monotonic()
        self.warming = threading.Event()

    def serve(self, connection: socket.socket) -> None:
        """One connection; the accept loop has taken a `pending` slot for it."""
        with connection:
            try:
                found = read_request(connection)
            finally:
                self.pending.release()
            if found is None:
                return
            line, rest = found
            try:
                request = json.loads(line)
            except ValueError:
                return
            if not isinstance(request, dict) or not hmac.compare_digest(
                    str(request.get("token", "")).encode(), self.token.encode()):
                return
            with connection.makefile("wb") as stream:
                self._serve(request, stream, connection, rest)

    def _serve(self, request: dict, stream, connection: socket.socket, rest: bytes) -> None:
        if "ping" in request:
            with self.lock:
                self._answer(stream, {"pid": os.getppid(), "jobs": sorted(self.jobs),
                                      "warming": self.warming.is_set()})
        elif "cancel" in request:
            with self.lock:
                group = self.jobs.get(str(request["cancel"]))
            if group is not None:
                self.spark.sparkContext.cancelJobGroup(group)
            self._answer(stream, {"running": group is not None})
        elif "run" in request:
            self.run(stream, connection, str(request["run"]), cancelled_early=bool(rest))

    @staticmethod
    def _answer(stream, payload: dict) -> None:
        stream.write(json.dumps(payload).encode() + b"\n")
        stream.flush()

    def run(self, stream, connection: socket.socket, spec_path: str, cancelled_early: bool = False) -> None:
        try:
            spec = ReplaySpec.from_json(Path(spec_path).read_text())
        except SpecError as exc:  # written by another version of the console: said, instead of a dropped line
            stream.write(f"{exc}\nCONSOLE-END {json.dumps({'state': 'failed'})}\n".encode())
            stream.flush()
            return
        job, group = str(spec.job_id), replay.job_group(spec)
        sending = threading.Lock()
        cancelled, gone, finished = threading.Event(), threading.Event(), threading.Event()

        def send(text: str) -> None:
            with sending:
                if gone.is_set():
                    return
                try:
                    stream.write(text.encode("utf-8", "replace") + b"\n")
                    stream.flush()
                except OSError:
                    gone.set()

        def emit(kind: str, payload: dict) -> None:
            send(f"CONSOLE-{kind} {json.dumps(payload)}")

        def watch() -> None:
            # Anything the client sends now is a cancel, and so is its going away (a killed worker).
            if not cancelled_early:  # bytes after the request line are a cancel already sent
                try:
                    connection.recv(64)
                except OSError:
                    pass
            if not finished.is_set():
                cancelled.set()
                self.spark.sparkContext.cancelJobGroup(group)

        with self.lock:
            if job in self.jobs:
                send(f"Replay {job} already runs in this driver.")
                emit("END", {"state": "failed"})
                return
            self.jobs[job] = group
        self.spark.sparkContext.setJobGroup(group, f"replay {job}", interruptOnCancel=True)
        threading.Thread(target=watch, daemon=True).start()
        try:
            result = replay.run(self.spark, spec, emit)
            emit("RESULT", result)
            state = "succeeded"
        except Exception:
            for line in traceback.format_exc().splitlines():
                send(line)
            state = "cancelled" if cancelled.is_set() else "failed"
        finally:
            finished.set()
            self.spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
            with self.lock:
                self.jobs.pop(job, None)
                self.last_active = time.monotonic()
        emit("END", {"state": state})
        with contextlib.suppress(OSError):  # wakes the watcher's recv; a close alone would not end the connection
            connection.shutdown(socket.SHUT_RDWR)

    def idle_for(self) -> float:
        with self.lock:
            return 0.0 if self.jobs else time.monotonic() - self.last_active


def warm_up(spark: SparkSession, count: int = 400_000) -> None:
    """Runs a replay's write paths (Parquet, and Arrow batches to Python) over generated rows shaped like Kafka's,
    once, in the background: the JIT compiles them before a replay needs them (`count` rows are enough for its hot
    loops to be compiled). Kafka's read path stays cold."""
    from pyspark.sql import functions as F

    spark.sparkContext.setJobGroup("console-warm-up", "warm-up", interruptOnCancel=True)
    headers = "cast(array() as array<struct<key:string,value:binary>>)"
    rows = spark.range(0, count, numPartitions=spark.sparkContext.defaultParallelism).select(
        F.lit("warm-up").alias("topic"), (F.col("id") % 4).cast("int").alias("partition"), F.col("id").alias("offset"),
        F.current_timestamp().alias("timestamp"), F.col("id").cast("string").cast("binary").alias("key"),
        F.expr("cast(repeat('x', 200) as binary)").alias("value"), F.expr(headers).alias("headers"))
    rows.write.format("noop").mode("overwrite").save()
    target = Path(spark.conf.get("spark.local.dir", "/tmp").split(",")[0]) / f"warm-up-{os.getpid()}"
    try:
        replay.counted(rows, "warm-up")[0].write.mode("overwrite").parquet(str(target))
    finally:
        shutil.rmtree(target, ignore_errors=True)

    def count(batches):
        import pyarrow as pa

        yield pa.RecordBatch.from_pydict({"n": [sum(batch.num_rows for batch in batches)]})

    rows.select("key", "value", F.when(F.size("headers") > 0, F.to_json("headers")).alias("headers"), "partition",
                F.lit(True).alias("keep")).mapInArrow(count, "n long").collect()


def _warm_up_quietly(driver: Driver) -> None:
    driver.warming.set()
    try:
        warm_up(driver.spark)
    except Exception:  # a replay runs as well without it, only slower at first
        traceback.print_exc()
    finally:
        driver.warming.clear()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "zombie" not in status.read_text().lower()


def main(state_file: str, owner: int, idle_s: float) -> None:
    spark = SparkSession.builder.appName("console-replay-driver").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    token = os.environ.pop("CONSOLE_DRIVER_TOKEN")
    driver = Driver(spark, token)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(1.0)
    state = Path(state_file)
    write_secret_file(state, json.dumps({"pid": os.getppid(), "python_pid": os.getpid(),
                                         "port": listener.getsockname()[1], "token": token,
                                         "spark_rpc_port": int(spark.sparkContext.getConf().get("spark.driver.port"))}))
    print(f"console replay driver listening on 127.0.0.1:{listener.getsockname()[1]}", flush=True)
    if os.environ.get("CONSOLE_DRIVER_WARM_UP", "1") == "1":
        threading.Thread(target=_warm_up_quietly, args=(driver,), daemon=True, name="warm-up").start()
    try:
        while driver.idle_for() < idle_s and (_alive(owner) or driver.idle_for() == 0.0):
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            if not driver.pending.acquire(blocking=False):  # too many still silent: this one waits for nobody
                connection.close()
                continue
            threading.Thread(target=driver.serve, args=(connection,), daemon=True).start()
    finally:
        listener.close()
        try:
            if json.loads(state.read_text()).get("python_pid") == os.getpid():
                state.unlink()
        except (OSError, ValueError):
            pass
        print("console replay driver stopping (idle, or its worker has gone)", flush=True)
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
