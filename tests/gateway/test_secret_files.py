"""Secret files are 0600 from the moment they exist, whatever the umask, and never chmodded afterwards."""

import os
import stat
import tempfile
from pathlib import Path

import pytest

from gateway import secret_files
from gateway.secret_files import temporary_secret_file, write_secret_file


@pytest.fixture
def open_umask(monkeypatch):
    """umask 0, so a mode that only the umask narrows would show as 0644 or wider; chmod forbidden."""
    previous = os.umask(0)

    def refused(*args, **kwargs):
        raise AssertionError("a secret file was chmodded after it was created")

    for target, name in ((os, "chmod"), (os, "fchmod"), (Path, "chmod")):
        monkeypatch.setattr(target, name, refused)
    yield
    os.umask(previous)


@pytest.fixture
def creations(monkeypatch):
    """The mode of each file the helpers create, taken the instant mkstemp returns (before any byte is written),
    and whether the target already existed then."""
    seen = []
    real = tempfile.mkstemp

    def watched(*args, **kwargs):
        descriptor, name = real(*args, **kwargs)
        seen.append((name, stat.S_IMODE(os.stat(name).st_mode), os.path.getsize(name)))
        return descriptor, name

    monkeypatch.setattr(secret_files.tempfile, "mkstemp", watched)
    return seen


def test_a_new_secret_file_is_0600_from_creation_and_appears_whole(tmp_path, open_umask, creations):
    target = tmp_path / "spec.json"

    write_secret_file(target, '{"password": "s3cr3t"}')

    [(name, mode, size)] = creations
    assert (mode, size) == (0o600, 0) and Path(name).parent == tmp_path and Path(name) != target
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and target.read_text() == '{"password": "s3cr3t"}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.json"]  # no temporary left behind


def test_replacing_a_readable_file_leaves_a_0600_one(tmp_path, open_umask, creations):
    target = tmp_path / "driver.json"
    target.write_text("old")
    assert stat.S_IMODE(target.stat().st_mode) == 0o666

    write_secret_file(target, b"new token")

    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and target.read_bytes() == b"new token"
    assert creations[0][1] == 0o600


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "state.json"
    target.write_text("old")

    def broken(source, destination):
        raise OSError("disk full")

    monkeypatch.setattr(secret_files.os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        write_secret_file(target, "new")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_temporary_secret_file_is_0600_and_gone_after_its_block_even_on_error(open_umask, creations):
    with temporary_secret_file("sasl.jaas.config=...", suffix=".properties") as path:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text() == "sasl.jaas.config=..."
        assert path.suffix == ".properties"
    assert not path.exists() and creations[0][1:] == (0o600, 0)

    with pytest.raises(RuntimeError), temporary_secret_file("x") as failing:
        raise RuntimeError("the tool failed")
    assert not failing.exists()
