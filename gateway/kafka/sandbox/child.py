"""The client process of one cluster connection on this host (the server side of gateway.kafka.sandbox).

It holds that connection's librdkafka clients (and drives the host's Java Admin JVM) for every web and Celery
process of the host, which reach it over a Unix socket in a private folder (gateway.kafka.sandbox.sockets). If
librdkafka aborts, only this process dies; each caller notices its socket close and answers for it.

Started as `python -m gateway.kafka.sandbox.child` by the first process that needs it: it reads the connection
(secrets included), the socket path, the host's token and its idle time from stdin, never from its command line,
binds the socket, then detaches (a second fork) so it outlives its starter, and prints its pid. A peer must send
the token before anything of it is read as a request: requests are pickles, which only our own processes may
send. Each request runs on a thread, so a slow call does not hold up the others; answers carry the request id.
It stops when no request came for its idle time, or when a caller retires it (STOP).
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import pickle
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from gateway.kafka.admin import KafkaAdmin
from gateway.kafka.java import host_jvm
from gateway.kafka import reachability
from gateway.kafka.errors import ClusterUnavailable, KafkaRequestFailed
from gateway.kafka.librdkafka.client import forget_clients
from gateway.kafka.librdkafka.mapping import map_exception
from gateway.kafka.sandbox.sockets import INFO_SUFFIX
from gateway.kafka.sandbox.wire import FORGET, IDLE_NOTICE, STOP, read_message, read_messages, send_message
from gateway.secret_files import write_secret_file
from gateway.kafka.types.cluster import BACKGROUND

# Shared by every process of the host: enough for all their request threads at once (8 gunicorn workers x 8
# threads), so a queue here never outlasts a caller's bounded wait and gets the process killed as stuck.
MAX_THREADS = 64
TOKEN_DEADLINE_S = 5.0  # a peer that has not sent its token by then is dropped
MAX_UNAUTHENTICATED = 64  # peers waiting to send their token; more are closed at once


def _picklable_error(exc: BaseException, cluster: str) -> BaseException:
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # an exception whose constructor pickle cannot replay
        return KafkaRequestFailed(f"{type(exc).__name__}: {exc}", cluster=cluster)


def _receive_exactly(sock: socket.socket, size: int) -> bytes | None:
    chunks, received = [], 0
    while received < size:
        chunk = sock.recv(size - received)
        if not chunk:
            return None
        chunks.append(chunk)
        received += len(chunk)
    return b"".join(chunks)


class Server:
    def __init__(self, connection, listener: socket.socket, path: str, token: bytes, idle_s: float) -> None:
        self.connection, self.listener, self.path, self.token, self.idle_s = connection, listener, path, token, idle_s
        self.inode = os.stat(path).st_ino  # so a stop never unlinks a successor's socket at the same path
        self.lock = threading.Lock()
        self.in_flight = 0
        self.last_used = time.monotonic()
        self.stopping = False
        self.peers: dict[socket.socket, threading.Lock] = {}
        self.waiting_for_token = threading.BoundedSemaphore(MAX_UNAUTHENTICATED)
        self.pool = ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="kafka-call")

    def serve_forever(self) -> None:
        self.listener.settimeout(max(0.05, min(1.0, self.idle_s / 4)))
        while True:
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                self._stop_if_idle()
                continue
            except OSError:  # out of file descriptors, say: the peers already connected are still served
                time.sleep(0.1)
                continue
            if not self.waiting_for_token.acquire(blocking=False):
                sock.close()
                continue
            threading.Thread(target=self._serve_peer, args=(sock,), daemon=True).start()
            self._stop_if_idle()

    def _authenticated(self, sock: socket.socket) -> bool:
        try:
            sock.settimeout(TOKEN_DEADLINE_S)
            presented = _receive_exactly(sock, len(self.token))
        except OSError:
            return False
        finally:
            self.waiting_for_token.release()
        return presented is not None and hmac.compare_digest(presented, self.token)

    def _serve_peer(self, sock: socket.socket) -> None:
        if not self._authenticated(sock):
            sock.close()  # nothing is sent to a peer without the token
            return
        sock.settimeout(None)
        send_lock = threading.Lock()
        with self.lock:
            if self.stopping:
                sock.close()
                return
            self.peers[sock] = send_lock
        try:
            send_message(sock, send_lock, ("hello", os.getpid()))
            stream = sock.makefile("rb")
            for request in read_messages(stream):
                if request[1] == STOP:
                    log.warning("Kafka client process for cluster '%s' retired by a caller", self.connection.name)
                    self._exit()
                with self.lock:
                    if self.stopping:
                        break
                    self.in_flight += 1
                    self.last_used = time.monotonic()
                self.pool.submit(self._run, sock, send_lock, *request)
        except OSError:
            pass
        finally:
            with self.lock:
                self.peers.pop(sock, None)
            sock.close()

    def _run(self, sock, send_lock, request_id: int, method: str, args: tuple, kwargs: dict, timeout: float,
             backoff: float, lane: str = "") -> None:
        try:
            if method == FORGET:
                forget_clients()
                value = None
            else:
                # Only the lanes there are: a peer's word cannot make clients without bound.
                connection = replace(self.connection, lane=BACKGROUND if lane == BACKGROUND else "")
                admin = KafkaAdmin(connection, timeout=timeout, unreachable_backoff=backoff)
                value = getattr(admin, method)(*args, **kwargs)
            answer = (request_id, True, value)
        except BaseException as exc:  # everything goes back to the caller, mapped like an in-process call
            mapped = map_exception(exc, cluster=self.connection.name, timeout=timeout)
            down_for = reachability.known_down_for(self.connection)
            if down_for and isinstance(mapped, ClusterUnavailable):
                mapped.down_for_s = down_for  # so the caller fails its other lane's calls at once too
            answer = (request_id, False, _picklable_error(mapped, self.connection.name))
        try:
            send_message(sock, send_lock, answer)
        except OSError:
            pass  # the caller's process is gone
        finally:
            with self.lock:
                self.in_flight -= 1
                self.last_used = time.monotonic()

    def _stop_if_idle(self) -> None:
        with self.lock:
            if self.in_flight or time.monotonic() - self.last_used < self.idle_s:
                return
            self.stopping = True  # from here on no request is taken: what peers still await never ran
            peers = list(self.peers.items())
        self._unlink()
        for sock, send_lock in peers:
            try:
                send_message(sock, send_lock, (IDLE_NOTICE, False, None))
            except OSError:
                pass
        log.info("Kafka client process for cluster '%s' stops: idle for %.0f s", self.connection.name, self.idle_s)
        self._stop_jvm_if_last()
        os._exit(0)

    def _stop_jvm_if_last(self) -> None:
        """The host's Java Admin JVM serves the client processes: the last of them to stop idle stops it too (a
        process starting meanwhile starts another on its first Java call)."""
        folder = Path(self.path).parent
        if not any(folder.glob("*.sock")):
            try:
                host_jvm.stop(folder)
            except OSError:
                pass

    @property
    def info_path(self) -> Path:
        return Path(self.path).with_suffix(INFO_SUFFIX)

    def _unlink(self) -> None:
        try:
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        except OSError:
            pass
        try:
            if json.loads(self.info_path.read_text()).get("pid") == os.getpid():
                self.info_path.unlink()
        except (OSError, ValueError, AttributeError):
            pass

    def _exit(self) -> None:
        self._unlink()
        os._exit(0)


log = logging.getLogger("gateway.kafka.client_process")


def main() -> None:
    setup = read_message(sys.stdin.buffer)
    if setup is None:
        return
    connection, path, token, idle_s = setup
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)  # in a 0700 folder; the mode below is a second fence
    os.chmod(path, 0o600)
    listener.listen(128)
    pid = os.fork()
    if pid:
        sys.stdout.write(f"{pid}\n")
        sys.stdout.flush()
        os._exit(0)
    # Detached: a session of its own, and nothing of the starter's pipes held open (a starter that reads its
    # child's output to the end must not wait for this process's idle stop).
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    sys.stdout = sys.stderr
    logging.basicConfig(level=os.environ.get("LIBRDKAFKA_LOG_LEVEL", "CRITICAL"), stream=sys.stderr,
                        format="%(asctime)s kafka-client[%(process)d] %(levelname)s %(message)s")
    server = Server(connection, listener, path, token, idle_s)
    # Which cluster and lane this process serves, for the host's memory report (the socket's name says nothing).
    write_secret_file(server.info_path, json.dumps({"pid": os.getpid(), "cluster": connection.name,
                                                    "lane": connection.lane}))
    server.serve_forever()


if __name__ == "__main__":
    main()
