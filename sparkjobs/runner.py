"""Launches the replay application with spark-submit and watches it: log, progress, result, cancel."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pyspark
from django.conf import settings

from console.devstack.paths import SPARK_AVRO_JARS, SPARK_KAFKA_JARS, SPARK_S3A_JARS

APP = Path(__file__).resolve().parent / "jobs" / "replay.py"
# The topic sink's transactional writer runs in Spark's executors, which get it as a file of its own.
SINK = Path(__file__).resolve().parent.parent / "console" / "kafka" / "spark_sink.py"
# Registry decoding in the executors: the gateway's registry module and what it imports, without Django.
GATEWAY_MODULES = ("__init__.py", "errors.py", "types.py", "registry.py")
_LINE = re.compile(r"^CONSOLE-(PROGRESS|RESULT) (\{.*\})\s*$")
_ERROR = re.compile(r"((?:[\w$]+\.)*[\w$]*(?:Exception|Error)): (.+)")
# Kafka's client timing out, or Spark's executor giving up polling a partition that returns nothing.
_KAFKA_TIMEOUT = re.compile(r"(?:org\.apache\.kafka\.common\.errors\.TimeoutException: |"
                            r"java\.util\.concurrent\.TimeoutException: (?=Cannot fetch record))(.+)")
MSG_KAFKA_TIMEOUT = "Kafka did not answer in time (the broker may be down, frozen or unreachable): {detail}"
MSG_NO_JARS = "Spark's {what} jars are missing in {path}: run `make deps` (it fetches them with Maven)."


def gateway_zip(folder: Path) -> Path:
    """A zip of console.kafka's registry decoding for --py-files (an empty console/__init__.py: no Celery)."""
    target = folder / "console-gateway.zip"
    kafka = SINK.parent
    with zipfile.ZipFile(target, "w") as archive:
        archive.writestr("console/__init__.py", "")
        for name in GATEWAY_MODULES:
            archive.write(kafka / name, f"console/kafka/{name}")
    return target


def _jars(folder: Path, what: str) -> list[str]:
    jars = sorted(str(p) for p in Path(folder).glob("*.jar"))
    if not jars:
        raise RuntimeError(MSG_NO_JARS.format(what=what, path=folder))
    return jars


def spark_submit_command(spec_path: Path) -> list[str]:
    # Each jar costs start-up time (class path scanning, copying to executors): only those this replay uses.
    spec = json.loads(spec_path.read_text())
    jars = _jars(SPARK_KAFKA_JARS, "Kafka connector")
    if str(spec["sink"].get("path", "")).startswith("s3a://"):
        jars += _jars(SPARK_S3A_JARS, "s3a (hadoop-aws)")
    if spec["sink"].get("typed"):
        jars += _jars(SPARK_AVRO_JARS, "Avro")
    py_files = [str(SINK), str(gateway_zip(spec_path.parent))]
    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    _, java_options = class_archive()
    return [
        str(spark_submit), "--master", settings.SPARK_MASTER, "--name", f"console-replay-{spec_path.stem}",
        "--jars", ",".join(jars),  # local jars: no Ivy, no network at run time
        "--py-files", ",".join(py_files),
        "--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false",
        "--conf", "spark.sql.shuffle.partitions=4",
        "--conf", f"spark.driver.memory={settings.SPARK_DRIVER_MEMORY}",
        "--conf", f"spark.local.dir={Path(settings.REPLAY_OUTPUT_DIR) / 'spark-tmp'}",
        "--conf", "spark.driver.extraJavaOptions=" + " ".join(shlex.quote(o) for o in java_options),
        str(APP), str(spec_path),
    ]


def _jvm_fingerprint() -> str:
    """pyspark's version and the java spark-class will run (as it picks it), so an upgrade gets a new archive."""
    home = os.environ.get("JAVA_HOME")
    java = Path(home) / "bin" / "java" if home else Path(shutil.which("java") or "java")
    try:
        real = java.resolve()
        marker = f"{real}:{real.stat().st_mtime_ns}"
    except OSError:
        marker = str(java)
    return f"{pyspark.__version__}-{hashlib.sha256(marker.encode()).hexdigest()[:10]}"


def class_archive() -> tuple[Path, list[str]]:
    """(archive, JVM options) for the driver's class data sharing: the first replay dumps the classes it loaded
    at exit (-XX:ArchiveClassesAtExit, into a file of its own, moved into place by `run`), later ones map them
    instead of loading and verifying thousands of classes from pyspark's jars. Dumping makes that first run
    slower (tens of seconds here) and writes about 190 MB; an archive that does not match the class path is
    ignored by the JVM (-Xshare:auto), and the replay starts as without it."""
    archive = Path(settings.REPLAY_OUTPUT_DIR) / "spark-cds" / f"driver-{_jvm_fingerprint()}.jsa"
    if archive.is_file():
        return archive, [f"-XX:SharedArchiveFile={archive}", "-Xlog:cds=off", "-Xlog:cds+dynamic=off"]
    archive.parent.mkdir(parents=True, exist_ok=True)
    return archive, [f"-XX:ArchiveClassesAtExit={archive}.{os.getpid()}.{time.monotonic_ns()}.tmp",
                     "-Xlog:cds=off", "-Xlog:cds+dynamic=off"]


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


def run(command: list[str], log_path: Path, *, on_progress, should_cancel, on_start=None,
        poll_s: float = 1.0) -> dict:
    """Runs `command`, copying its output to `log_path`. Returns {"state", "result", "error"}. `should_cancel`
    is asked every `poll_s` (and doubles as the heartbeat); `on_start` gets the driver's process id."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                               env=spark_environment(), start_new_session=True)
    if on_start is not None:
        on_start(process.pid)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout] and None, daemon=True).start()
    result: dict | None = None
    tail: list[str] = []
    cancelled = False
    with open(log_path, "w") as log:
        last_check = 0.0
        while True:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                line = None
            if line is not None:
                log.write(line)
                log.flush()
                tail = (tail + [line.rstrip()])[-400:]
                match = _LINE.match(line)
                if match and match.group(1) == "PROGRESS":
                    on_progress(json.loads(match.group(2))["done"])
                elif match:
                    result = json.loads(match.group(2))
                continue
            if process.poll() is not None and lines.empty():
                break
            if time.monotonic() - last_check >= poll_s:
                last_check = time.monotonic()
                if not cancelled and should_cancel():
                    cancelled = True
                    log.write("\n[console] cancel requested: stopping the Spark driver\n")
                    _stop(process)
    _settle_archive(command, keep=process.returncode == 0 and not cancelled)
    if cancelled:
        return {"state": "cancelled", "result": result, "error": "Cancelled by request."}
    if process.returncode == 0 and result is not None:
        return {"state": "succeeded", "result": result, "error": ""}
    return {"state": "failed", "result": result, "error": failure_sentence(tail)}


def _settle_archive(command: list[str], *, keep: bool) -> None:
    """Moves a class archive this run dumped into place (the first to finish wins), or drops it."""
    prefix = "spark.driver.extraJavaOptions="
    for value in (c.removeprefix(prefix) for c in command if c.startswith(prefix)):
        for option in shlex.split(value):
            if option.startswith("-XX:ArchiveClassesAtExit="):
                dumped = Path(option.split("=", 1)[1])
                if keep and dumped.is_file():
                    os.replace(dumped, dumped.with_name(dumped.name.split(".jsa.", 1)[0] + ".jsa"))
                dumped.unlink(missing_ok=True)


def stop_orphan(pid: int, job_id: int) -> bool:
    """Stops a driver whose worker died, if it runs here and is that job's (its command line names the job)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    if f"console-replay-{job_id} " not in cmdline + " " and f"/{job_id}/spec.json" not in cmdline:
        return False
    try:
        os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
            time.sleep(0.2)
        if Path(f"/proc/{pid}").exists():
            os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return True


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the whole session (spark-submit, the JVM and the Python driver), SIGKILL after 15 s."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
