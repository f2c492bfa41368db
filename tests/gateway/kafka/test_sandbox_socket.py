"""Where the host's Kafka client processes listen (no broker): a private folder, a token only this user reads, socket
names that fit AF_UNIX and reveal nothing of the settings, and a start lock that lets one process through."""

from __future__ import annotations

import os
import stat
import tempfile
import threading
import time
from pathlib import Path

import pytest

from gateway.kafka.sandbox import sockets
from gateway.kafka.errors import ClusterUnavailable


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_long_folder_is_swapped_for_a_short_private_one_every_process_agrees_on(tmp_path):
    long = tmp_path / ("x" * 120)
    chosen = sockets.effective_dir(long)
    assert chosen != long and chosen == sockets.effective_dir(long)
    socket_path = chosen / f"{'f' * sockets.NAME_HEX}.sock"
    assert len(os.fsencode(str(socket_path))) <= sockets.MAX_SOCKET_PATH
    short = Path(tempfile.mkdtemp(prefix="s"))  # tmp_path itself may be long (pytest-xdist adds a folder)
    try:
        assert sockets.effective_dir(short / "c") == short / "c"
    finally:
        short.rmdir()


def test_the_folder_is_made_private_and_a_foreign_one_refused(tmp_path):
    folder = tmp_path / "clients"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    assert _mode(sockets.private_dir(folder)) == 0o700

    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "linked"
    link.symlink_to(target)
    with pytest.raises(ClusterUnavailable) as refused:
        sockets.private_dir(link)
    assert refused.value.message == sockets.MSG_DIR_NOT_PRIVATE.format(path=link)


def test_the_token_is_made_once_readable_by_this_user_only(tmp_path):
    folder = sockets.private_dir(tmp_path / "clients")
    tokens: list[bytes] = []
    threads = [threading.Thread(target=lambda: tokens.append(sockets.host_token(folder))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(tokens)) == 1 and len(tokens[0]) == sockets.TOKEN_HEX
    assert _mode(folder / sockets.TOKEN_FILE) == 0o600


def test_socket_names_follow_the_key_and_hide_it():
    token = b"a" * sockets.TOKEN_HEX
    key = ("prod", "broker:9093", (("sasl.password", "hunter2-secret"),), (), "", ())
    name = sockets.socket_name(token, key)
    assert name == sockets.socket_name(token, key) and len(name) == sockets.NAME_HEX
    assert "hunter2" not in name
    assert sockets.socket_name(token, key[:1] + ("broker:9094",) + key[2:]) != name
    assert sockets.socket_name(b"b" * sockets.TOKEN_HEX, key) != name  # another folder's token


def test_the_start_lock_lets_one_holder_through_and_bounds_the_wait(tmp_path):
    lock = tmp_path / "x.lock"
    with sockets.file_lock(lock, 1.0):
        started = time.monotonic()
        with pytest.raises(TimeoutError), sockets.file_lock(lock, 0.3):
            pass
        assert 0.25 <= time.monotonic() - started < 2
    with sockets.file_lock(lock, 0.3):  # released with the block
        pass
