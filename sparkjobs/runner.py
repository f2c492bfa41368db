"""Runs replays in the resident Spark driver (jobs/driver.py), starting it with spark-submit when none runs for
this worker's settings, and watches each: log, progress, result, cancel."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import queue
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pyspark
from django.conf import settings

from console.paths import SPARK_AVRO_JARS, SPARK_KAFKA_JARS, SPARK_S3A_JARS
from gateway.secret_files import write_secret_file
from sparkjobs.jobs.replay_spec import FileSink, ReplaySpec, TopicSink

APP = Path(__file__).resolve().parent / "jobs" / "replay.py"
DRIVER_APP = APP.with_name("driver.py")
# The replay application's other modules, top-level modules in the driver (and the executors that unpickle
# what they define).
REPLAY_MODULES = tuple(APP.with_name(name) for name in ("replay_spec.py", "replay_sinks.py", "replay_schemas.py"))
# The topic sink's transactional writer and the Protobuf rows run in Spark's executors, which get each as a file
# of its own.
SINK = APP.with_name("spark_sink.py")
PROTOBUF_ROWS = APP.with_name("protobuf_rows.py")
GATEWAY_DIR = Path(__file__).resolve().parent.parent / "gateway"
# Masking's rule core (standard library only): a masked replay's executors mask exactly as the pages do.
MASK_RULES = GATEWAY_DIR.parent / "masking" / "mask_rules.py"
# In the driver and executors: the gateway's registry decoding, its error codes, the one way of writing secrets and
# the RE2 wrapper, and what they import, without Django. The packages' __init__ files hold no imports but types/,
# whose __init__ imports every module of it: all of them go, so a module added there cannot fail replays.
GATEWAY_MODULES = ("__init__.py", "errors.py", "secret_files.py", "user_regex.py", "kafka/__init__.py",
                   "kafka/errors.py", "kafka/schema_registry.py", "kafka/json_schema_checks.py",
                   "kafka/librdkafka/__init__.py", "kafka/librdkafka/mapping.py",
                   *sorted(f"kafka/types/{path.name}" for path in (GATEWAY_DIR / "kafka" / "types").glob("*.py")))
_LINE = re.compile(r"^CONSOLE-(PROGRESS|RESULT|END) (\{.*\})\s*$")
_ERROR = re.compile(r"((?:[\w$]+\.)*[\w$]*(?:Exception|Error)): (.+)")
# Kafka's client timing out, or Spark's executor giving up polling a partition that returns nothing.
_KAFKA_TIMEOUT = re.compile(r"(?:org\.apache\.kafka\.common\.errors\.TimeoutException: |"
                            r"java\.util\.concurrent\.TimeoutException: (?=Cannot fetch record))(.+)")
MSG_KAFKA_TIMEOUT = "Kafka did not answer in time (the broker may be down, frozen or unreachable): {detail}"
MSG_NO_JARS = "Spark's {what} jars are missing in {path}: run `make deps` (it fetches them with Maven)."
MSG_NO_SPARK_SECRET = ("SPARK_MASTER is the cluster {master}: set SPARK_AUTHENTICATE_SECRET in the worker's "
                       "environment to the spark.authenticate.secret its master and workers were started with. "
                       "Without it, any host that reaches the driver's ports could call it (Spark's RPC is Java "
                       "serialization).")


def gateway_zip(folder: Path) -> Path:
    """A zip of the gateway's modules the Spark jobs import, for --py-files."""
    target = folder / "console-gateway.zip"
    with zipfile.ZipFile(target, "w") as archive:
        for name in GATEWAY_MODULES:
            archive.write(GATEWAY_DIR / name, f"gateway/{name}")
    return target


def _jars(folder: Path) -> list[str]:
    return sorted(str(p) for p in Path(folder).glob("*.jar"))


def driver_jars() -> list[str]:
    """Every connector the console's replays may use: the driver serves them all. Kafka's is required."""
    kafka = _jars(SPARK_KAFKA_JARS)
    if not kafka:
        raise RuntimeError(MSG_NO_JARS.format(what="Kafka connector", path=SPARK_KAFKA_JARS))
    return kafka + _jars(SPARK_S3A_JARS) + _jars(SPARK_AVRO_JARS)


def missing_jars(sink: TopicSink | FileSink, jars: list[str]) -> str:
    """Why the driver cannot write to `sink` (a connector it was started without), or ''."""
    def has(folder: Path) -> bool:
        return any(j.startswith(f"{folder}/") for j in jars)

    if sink.kind == "topic":
        return ""
    if sink.path.startswith("s3a://") and not has(SPARK_S3A_JARS):
        return MSG_NO_JARS.format(what="s3a (hadoop-aws)", path=SPARK_S3A_JARS)
    if sink.typed and not has(SPARK_AVRO_JARS):
        return MSG_NO_JARS.format(what="Avro", path=SPARK_AVRO_JARS)
    return ""


def _code_files() -> list[Path]:
    return [APP, DRIVER_APP, *REPLAY_MODULES, SINK, PROTOBUF_ROWS, MASK_RULES,
            *(GATEWAY_DIR / name for name in GATEWAY_MODULES)]


def local_master() -> bool:
    return settings.SPARK_MASTER.startswith("local")


def spark_security() -> dict[str, str]:
    """Spark's settings that make its driver (and a cluster's master, workers and executors) take no connection
    from anyone without the shared secret: its RPC and block transfers are Java serialization, which a caller
    without it must not reach. In local mode Spark makes a secret of its own that never leaves the driver's JVM;
    with a cluster, the secret its master and workers share comes from SPARK_AUTHENTICATE_SECRET, and the traffic,
    which leaves the machine, is encrypted too. Files the driver writes through Hadoop (replay outputs) are chmodded
    by Hadoop itself, so its umask is set as the process's is (console/private_files.py)."""
    found = {"spark.authenticate": "true", "spark.hadoop.fs.permissions.umask-mode": "077"}
    if not local_master():
        if not settings.SPARK_AUTHENTICATE_SECRET:
            raise RuntimeError(MSG_NO_SPARK_SECRET.format(master=settings.SPARK_MASTER))
        found |= {"spark.authenticate.secret": settings.SPARK_AUTHENTICATE_SECRET,
                  "spark.network.crypto.enabled": "true"}
    return found


def driver_fingerprint(jars: list[str]) -> str:
    """What a driver was started with: a replay needs a driver with the same master, memory, secret, jars and code
    (a deploy, a new secret or `make deps` gets a new driver; the old one stops when idle)."""
    home = os.environ.get("JAVA_HOME")
    java = Path(home) / "bin" / "java" if home else Path(shutil.which("java") or "java")
    digest = hashlib.sha256()
    for part in (pyspark.__version__, str(java.resolve()), settings.SPARK_MASTER, settings.SPARK_DRIVER_MEMORY,
                 settings.SPARK_AUTHENTICATE_SECRET, *jars, *(path.read_bytes() for path in _code_files())):
        digest.update(part if isinstance(part, bytes) else part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def driver_command(folder: Path, state: Path, jars: list[str]) -> list[str]:
    py_files = [str(APP), *map(str, REPLAY_MODULES), str(SINK), str(PROTOBUF_ROWS), str(MASK_RULES),
                str(gateway_zip(folder))]
    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    # The secret goes in a 0600 file, never on the command line `ps` shows; spark-defaults.conf is still read.
    properties = write_secret_file(state.with_suffix(".conf"),
                                   "".join(f"{key} {value}\n" for key, value in spark_security().items()))
    command = [
        str(spark_submit), "--master", settings.SPARK_MASTER, "--name", "console-replay-driver",
        "--properties-file", str(properties), "--load-spark-defaults",
        "--jars", ",".join(jars),  # local jars: no Ivy, no network at run time
        "--py-files", ",".join(py_files),
        "--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false",
        "--conf", "spark.sql.shuffle.partitions=4",
        # Replays at the same time share the cores instead of queueing behind the first one.
        "--conf", "spark.scheduler.mode=FAIR",
        "--conf", f"spark.driver.memory={settings.SPARK_DRIVER_MEMORY}",
        "--conf", f"spark.local.dir={Path(settings.REPLAY_OUTPUT_DIR) / 'spark-tmp'}",
    ]
    if not settings.SPARK_MASTER.startswith("local"):
        # On a cluster, an idle resident driver gives its executors back (no external shuffle service needed).
        command += ["--conf", "spark.dynamicAllocation.enabled=true",
                    "--conf", "spark.dynamicAllocation.shuffleTracking.enabled=true",
                    "--conf", "spark.dynamicAllocation.executorIdleTimeout=30s"]
    return command + [str(DRIVER_APP), str(state), str(os.getpid()), str(settings.REPLAY_DRIVER_IDLE_S)]


@dataclass(frozen=True)
class Driver:
    pid: int  # spark-submit's JVM, the leader of the driver's process group
    port: int
    token: str
    log_path: Path

    def request(self, payload: dict, timeout: float = 5.0) -> socket.socket:
        connection = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        connection.sendall(json.dumps({**payload, "token": self.token}).encode() + b"\n")
        return connection

    def ask(self, payload: dict, timeout: float = 5.0) -> dict | None:
        """One request and its one-line answer; None if the driver does not answer."""
        try:
            with self.request(payload, timeout) as connection, connection.makefile("rb") as answer:
                return json.loads(answer.readline() or b"null")
        except (OSError, ValueError):
            return None


def driver_home() -> Path:
    return Path(settings.REPLAY_OUTPUT_DIR) / "driver"


def _read_driver(state: Path) -> Driver | None:
    try:
        found = json.loads(state.read_text())
        driver = Driver(int(found["pid"]), int(found["port"]), str(found["token"]), state.with_suffix(".log"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return driver if driver.ask({"ping": True}) is not None else None


def ensure_driver(jars: list[str] | None = None) -> Driver:
    """The running driver for this worker's settings and `jars` (driver_jars()), started if there is none (one per
    machine and settings: worker processes agree through a lock file). Raises RuntimeError if it cannot start."""
    jars = driver_jars() if jars is None else jars
    fingerprint = driver_fingerprint(jars)
    folder = driver_home()
    folder.mkdir(parents=True, exist_ok=True)
    state, log_path = folder / f"{fingerprint}.json", folder / f"{fingerprint}.log"
    with open(folder / f"{fingerprint}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        driver = _read_driver(state)
        if driver is not None:
            return driver
        state.unlink(missing_ok=True)
        token = secrets.token_urlsafe(24)
        env = {**spark_environment(), "CONSOLE_DRIVER_TOKEN": token,
               "CONSOLE_DRIVER_WARM_UP": "1" if settings.REPLAY_DRIVER_WARM_UP else "0"}
        with open(log_path, "a") as log:
            process = subprocess.Popen(driver_command(folder, state, jars), stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        deadline = time.monotonic() + settings.REPLAY_DRIVER_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if process.poll() is not None:
                tail = log_path.read_text(errors="replace").splitlines()[-400:]
                raise RuntimeError(f"The Spark driver did not start. {failure_sentence(tail)} Its log: {log_path}")
            driver = _read_driver(state)
            if driver is not None:
                return driver
            time.sleep(0.2)
        _stop_group(process.pid)
        raise RuntimeError(f"The Spark driver did not start within {settings.REPLAY_DRIVER_START_TIMEOUT_S:.0f} s; "
                           f"its log: {log_path}")


def running_drivers() -> list[Driver]:
    """The drivers this machine's workers started that still answer (for the reaper and for shutting down)."""
    found = []
    for state in sorted(driver_home().glob("*.json")):
        driver = _read_driver(state)
        if driver is not None:
            found.append(driver)
    return found


def stop_drivers() -> None:
    for driver in running_drivers():
        _stop_group(driver.pid)


def spark_environment() -> dict[str, str]:
    return {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")}


def failure_sentence(log_lines: list[str]) -> str:
    """The most telling error line of a Spark log, as one sentence for people."""
    for line in reversed(log_lines):
        timeout = _KAFKA_TIMEOUT.search(line)
        if timeout:  # whichever Spark exception wraps it, the cause people can act on is the cluster
            return MSG_KAFKA_TIMEOUT.format(detail=timeout.group(1).strip()[:300])
    for line in reversed(log_lines):
        match = _ERROR.search(line)
        if match and "at " not in line[: line.find(match.group(1))][-4:]:
            kind = match.group(1).rsplit(".", 1)[-1]
            return f"Spark failed with {kind}: {match.group(2).strip()[:500]}"
    return "Spark failed; see the log."


MSG_DRIVER_GONE = "The Spark driver stopped during the replay. {reason} Its log: {log}"


def run(spec_path: Path, log_path: Path, *, on_progress, should_cancel, on_start=None,
        poll_s: float = 1.0) -> dict:
    """Runs the replay `spec_path` describes in the resident driver (started if needed), copying what it reports
    to `log_path`. Returns {"state", "result", "error"}. `should_cancel` is asked every `poll_s` (and doubles as
    the heartbeat); `on_start` gets the driver's process id."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        log.write("[console] finding or starting the resident Spark driver\n")
        log.flush()
        jars = driver_jars()
        missing = missing_jars(ReplaySpec.from_json(spec_path.read_text()).sink, jars)
        if missing:
            return {"state": "failed", "result": None, "error": missing}
        driver, connection = _hand_over(spec_path, jars, on_start)
        log.write(f"[console] running in the Spark driver {driver.pid} (its own log: {driver.log_path})\n")
        log.flush()
        lines: queue.Queue = queue.Queue()

        def read() -> None:
            with connection.makefile("r", encoding="utf-8", errors="replace") as stream:
                for line in stream:
                    lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        result: dict | None = None
        ended: str | None = None
        tail: list[str] = []
        cancelled = False
        last_check = 0.0
        try:
            while True:
                try:
                    line = lines.get(timeout=0.2)
                except queue.Empty:
                    line = ""
                if line is None:
                    break
                if line:
                    log.write(line)
                    log.flush()
                    tail = (tail + [line.rstrip()])[-400:]
                    match = _LINE.match(line)
                    if match and match.group(1) == "PROGRESS":
                        on_progress(json.loads(match.group(2))["done"])
                    elif match and match.group(1) == "RESULT":
                        result = json.loads(match.group(2))
                    elif match:
                        ended = json.loads(match.group(2))["state"]
                        break
                    continue
                if time.monotonic() - last_check >= poll_s:
                    last_check = time.monotonic()
                    if not cancelled and should_cancel():
                        cancelled = True
                        log.write("\n[console] cancel requested: cancelling the replay's Spark jobs\n")
                        with contextlib.suppress(OSError):
                            connection.sendall(b"cancel\n")
        finally:
            connection.close()
    if cancelled:
        return {"state": "cancelled", "result": result, "error": "Cancelled by request."}
    if ended == "succeeded" and result is not None:
        return {"state": "succeeded", "result": result, "error": ""}
    if ended is None:
        return {"state": "failed", "result": result,
                "error": MSG_DRIVER_GONE.format(reason=failure_sentence(tail), log=driver.log_path)}
    return {"state": "failed", "result": result, "error": failure_sentence(tail)}


def _hand_over(spec_path: Path, jars: list[str], on_start) -> tuple[Driver, socket.socket]:
    """(driver, connection) once the driver has the replay."""
    driver = ensure_driver(jars)
    try:
        connection = driver.request({"run": str(spec_path)}, timeout=None)
    except OSError:  # it answered a moment ago and has stopped since (idle): a new one, once
        driver = ensure_driver(jars)
        connection = driver.request({"run": str(spec_path)}, timeout=None)
    if on_start is not None:
        on_start(driver.pid)
    return driver, connection


def stop_orphan(pid: int, job_id: int) -> bool:
    """Cancels the replay `job_id` whose worker died, in the driver `pid` if that driver runs here; True once the
    replay no longer runs there (the driver also cancels it by itself when the worker's connection drops)."""
    for driver in running_drivers():
        if driver.pid == pid:
            return driver.ask({"cancel": job_id}) is not None
    return _ended(pid)


def _ended(pid: int) -> bool:
    """True once the process has exited. A driver this process started stays a zombie, its /proc entry in place,
    until it is reaped: that is done here, and a zombie of another parent counts as ended too."""
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return any(line.startswith("State:") and "Z" in line.split()[1:2] for line in status.splitlines())


def _stop_group(pid: int) -> None:
    """SIGTERM to a driver's whole process group (spark-submit's JVM and the Python driver), SIGKILL after 15 s."""
    try:
        os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not _ended(pid):
            time.sleep(0.2)
        if not _ended(pid):
            os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
