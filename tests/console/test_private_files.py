"""The console's files are its own (console/private_files.py): what finds and tightens open modes, and the test
session's own servers and database, started by the fixtures as `make run` starts them, keeping theirs private."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from console.paths import PROJECT_DIR
from console.private_files import MSG_TIGHTENED, open_paths, tighten


def _open_to_others(root: Path) -> list[str]:
    """The paths under `root` another user could read, write or list: open modes in folders they can enter. What a
    private folder holds is out of their reach whatever its own mode (Spark, for one, marks the files it copies for
    its executors 0711 inside its 0700 folders)."""
    found = []
    for folder, folders, files in os.walk(root):
        here = Path(folder)
        if here.stat().st_mode & 0o077:
            found.append(f"{here} {here.stat().st_mode & 0o777:04o}")
        if not here.stat().st_mode & 0o011:  # nobody else may enter: nothing below is theirs to see
            folders[:] = []
            continue
        for name in files:
            mode = (here / name).lstat().st_mode
            if not stat.S_ISLNK(mode) and mode & 0o077:
                found.append(f"{here / name} {mode & 0o777:04o}")
    return found


def test_every_process_that_imports_the_console_has_umask_077():
    shown = subprocess.run([sys.executable, "-c", "import os, console; print(oct(os.umask(0)))"], cwd=PROJECT_DIR,
                           capture_output=True, text=True, timeout=60, preexec_fn=lambda: os.umask(0o022))
    assert shown.stdout.strip() == "0o77", shown.stderr
    assert os.umask(os.umask(0o077)) == 0o077  # this test session's too


def test_open_paths_names_what_others_may_read_and_leaves_links_alone(tmp_path):
    private, shared, target = tmp_path / "private", tmp_path / "shared", tmp_path / "target"
    private.mkdir(mode=0o700)
    shared.mkdir()
    shared.chmod(0o755)
    target.write_text("x")
    target.chmod(0o644)
    (tmp_path / "link").symlink_to(target)
    found = open_paths([private, shared, tmp_path / "link", tmp_path / "missing"])
    assert [(p.path, p.as_json()["mode"]) for p in found] == [(str(shared), "0755")]


def test_tighten_says_what_it_did_once_and_nothing_when_all_is_private(tmp_path):
    root = tmp_path / "data"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f").write_text("x")
    for path, mode in ((root, 0o755), (root / "a", 0o750), (root / "a" / "b", 0o700), (root / "a" / "b" / "f", 0o604)):
        path.chmod(mode)
    assert tighten(root) == MSG_TIGHTENED.format(path=root, mode=0o755, count=2)
    assert _open_to_others(root) == []
    assert stat.S_IMODE((root / "a" / "b" / "f").stat().st_mode) == 0o600  # the owner's own bits stay
    assert tighten(root) == "" and tighten(tmp_path / "missing") == ""


@pytest.mark.kafka
def test_the_sessions_servers_and_database_keep_their_files_private(kafka_node, redis_node, schema_registry,
                                                                    celery_worker_process, topic_factory, produce, db):
    """What the fixtures started (the broker with segments of a topic just written, Redis, the registry, the Celery
    worker and its Spark driver's folder) wrote nothing another user could read."""
    from django.conf import settings

    from tests.fixtures.celery import WORKER_REPLAY_DIR

    produce(topic_factory("private"), [(0, None, b"x" * 100, None) for _ in range(20)])
    for home in (kafka_node.home, redis_node.home, schema_registry.home, WORKER_REPLAY_DIR):
        assert home.exists(), home
        opened = _open_to_others(home)
        assert not opened, f"open to others under {home}: {', '.join(opened[:8])}"  # the summary line names them
    database = Path(settings.DATABASES["default"]["NAME"])
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3") and database.exists():
        assert stat.S_IMODE(database.stat().st_mode) == 0o600
