"""Where the host's Kafka client processes listen, and how a process reaches one or starts it.

Every process of the host (web workers, Celery workers, the shell) that asks a cluster uses the same client
process: its Unix socket is named from the connection key, so a connection whose settings or certificate files
change gets a socket, and a process, of its own. The folder is private to this user (0700) and holds a token file
(0600): a peer that does not send the token first is closed unheard, because requests are pickles. The socket's
name is an HMAC of the key (and of the code the process would run) under that token, so it reveals nothing of
the settings and secrets in the key.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import hashlib
import hmac
import importlib.metadata
import os
import secrets
import socket
import stat
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from gateway.kafka.errors import ClusterUnavailable
from gateway.kafka.sandbox.wire import encode_message, read_message
from gateway.secret_files import write_secret_file

_GATEWAY_DIR = Path(__file__).resolve().parents[1]
_PROJECT_DIR = _GATEWAY_DIR.parents[1]
DEFAULT_SOCKET_DIR = _PROJECT_DIR / ".data" / "kafka-clients"
TOKEN_FILE = "token"
INFO_SUFFIX = ".json"  # beside each socket: the pid, cluster and lane of the process listening there
TOKEN_HEX = 64  # characters, as sent on the socket
NAME_HEX = 32
# AF_UNIX paths hold 108 bytes with their final NUL; a longer folder is swapped for a short private one.
MAX_SOCKET_PATH = 107
CONNECT_TIMEOUT_S = 5.0  # connecting and hearing the hello of a live process
START_TIMEOUT_S = 30.0  # a cold Python with confluent-kafka on a busy machine, bound and listening

MSG_DIR_NOT_PRIVATE = ("The Kafka client socket folder {path} is not a folder of this user's own; set "
                       "KAFKA_CLIENT_SOCKET_DIR to one.")
MSG_START_FAILED = "The Kafka client process for cluster '{cluster}' could not be started: {reason}"
MSG_TOKEN_REFUSED = ("The Kafka client process for cluster '{cluster}' did not accept this process ({path}): "
                     "does another console with another token file use the same socket folder?")


def configured_dir() -> Path:
    from django.conf import settings

    return Path(getattr(settings, "KAFKA_CLIENT_SOCKET_DIR", None) or DEFAULT_SOCKET_DIR)


def effective_dir(configured: Path) -> Path:
    """`configured`, or a short private folder in the temporary folder named from it when a socket path in it
    would pass the AF_UNIX limit (every process computes the same one)."""
    longest = len(os.fsencode(str(configured / f"{'0' * NAME_HEX}.sock")))
    if longest <= MAX_SOCKET_PATH:
        return configured
    digest = hashlib.sha256(os.fsencode(str(configured.resolve()))).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"console-kafka-{digest}"


def private_dir(path: Path) -> Path:
    """Makes `path` a 0700 folder owned by this user, or refuses one owned by someone else or a symlink."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise ClusterUnavailable(MSG_DIR_NOT_PRIVATE.format(path=path), code="_TRANSPORT")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


@contextmanager
def file_lock(path: Path, timeout: float):
    """An exclusive flock on `path`, waited for at most `timeout` seconds (TimeoutError past it)."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"{path} stayed locked for {timeout:g} s") from None
                time.sleep(0.02)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def host_token(folder: Path) -> bytes:
    """The folder's token, made on first use (0600, under a lock so racing processes agree on one)."""
    path = folder / TOKEN_FILE
    with file_lock(folder / ".token.lock", START_TIMEOUT_S):
        try:
            token = path.read_bytes().strip()
        except FileNotFoundError:
            token = b""
        if len(token) != TOKEN_HEX:
            token = secrets.token_hex(TOKEN_HEX // 2).encode()
            write_secret_file(path, token)
    return token


@functools.cache
def code_stamp() -> str:
    """What the client process would run: the gateway's files, the interpreter and confluent-kafka. Part of each
    socket's name, so after a deploy (or an edit in development) callers start client processes of the new code
    instead of sending requests to old ones that keep running while they are used."""
    # The interpreter by its real path: gunicorn's and celery's scripts name it through their shebang, the Procfile
    # through a symlinked .venv; by name, the same code got a client process per spelling of its path.
    parts = [sys.version, os.path.realpath(sys.executable), importlib.metadata.version("confluent-kafka")]
    for path in sorted(_GATEWAY_DIR.rglob("*.py")):
        info = path.stat()
        parts.append(f"{path.relative_to(_GATEWAY_DIR)}:{info.st_mtime_ns}:{info.st_size}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def socket_name(token: bytes, key: tuple) -> str:
    return hmac.new(token, repr((code_stamp(), key)).encode(), hashlib.sha256).hexdigest()[:NAME_HEX]


class Link:
    """An authenticated socket to a client process, and that process's id from its hello."""

    def __init__(self, sock: socket.socket, pid: int) -> None:
        self.sock, self.pid = sock, pid


def connect(path: Path, token: bytes, *, cluster: str, timeout: float = CONNECT_TIMEOUT_S) -> Link | None:
    """A link to the process listening at `path`; None when none listens there (no socket, or a dead one's)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.ENOENT, errno.ECONNREFUSED):
            return None
        raise ClusterUnavailable(MSG_START_FAILED.format(cluster=cluster, reason=exc), code="_TRANSPORT",
                                 cluster=cluster) from None
    try:
        sock.sendall(token)
        hello = read_message(sock.makefile("rb"))
    except (OSError, EOFError, ValueError):
        hello = None
    if not (isinstance(hello, tuple) and len(hello) == 2 and hello[0] == "hello"):
        sock.close()
        if not path.exists():  # it stopped (idle) as we knocked: the caller starts a fresh one
            return None
        raise ClusterUnavailable(MSG_TOKEN_REFUSED.format(cluster=cluster, path=path), code="_TRANSPORT",
                                 cluster=cluster)
    sock.settimeout(None)
    return Link(sock, hello[1])


def _launch(connection, path: Path, token: bytes, idle_s: float, log_path: Path) -> int:
    """Starts a client process that binds `path` and detaches; returns its pid once it listens."""
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(_PROJECT_DIR), os.environ.get("PYTHONPATH")]))}
    descriptor = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "gateway.kafka.sandbox.child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=descriptor, cwd=_PROJECT_DIR, env=env, start_new_session=True,
        )
    finally:
        os.close(descriptor)
    try:
        # Secrets travel on the pipe, never on the command line.
        output, _ = process.communicate(encode_message((connection, str(path), token, idle_s)),
                                        timeout=START_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise ClusterUnavailable(
            MSG_START_FAILED.format(cluster=connection.name, reason=f"not listening within {START_TIMEOUT_S:g} s"),
            code="_TRANSPORT", cluster=connection.name) from None
    if process.returncode != 0 or not output.strip().isdigit():
        raise ClusterUnavailable(
            MSG_START_FAILED.format(cluster=connection.name, reason=f"exit code {process.returncode}, see {log_path}"),
            code="_TRANSPORT", cluster=connection.name)
    return int(output)


def connect_or_start(connection, key: tuple, *, idle_s: float) -> Link:
    """A link to the host's client process for this connection key, started here if none listens (under a
    lock, so of processes racing to start it, one does and the others connect to it)."""
    folder = private_dir(effective_dir(configured_dir()))
    token = host_token(folder)
    name = socket_name(token, key)
    path = folder / f"{name}.sock"
    link = connect(path, token, cluster=connection.name)
    if link is not None:
        return link
    try:
        with file_lock(folder / f"{name}.lock", START_TIMEOUT_S + CONNECT_TIMEOUT_S):
            link = connect(path, token, cluster=connection.name)
            if link is None:
                path.unlink(missing_ok=True)  # a dead process's socket
                _launch(connection, path, token, idle_s, folder / f"{name}.log")
                link = connect(path, token, cluster=connection.name)
    except TimeoutError as exc:
        raise ClusterUnavailable(MSG_START_FAILED.format(cluster=connection.name, reason=exc), code="_TRANSPORT",
                                 cluster=connection.name) from None
    if link is None:
        raise ClusterUnavailable(MSG_START_FAILED.format(cluster=connection.name, reason="it stopped at once"),
                                 code="_TRANSPORT", cluster=connection.name)
    return link


def host_sockets() -> tuple[Path, bytes, list[Path]]:
    """The folder, its token and the sockets in it (for stopping every client process of the folder)."""
    folder = private_dir(effective_dir(configured_dir()))
    return folder, host_token(folder), sorted(folder.glob("*.sock"))

