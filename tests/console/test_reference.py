"""The documentation cannot drift from the code: the reference pages (settings, commands, metrics) are what the
code says now, each setting, command and series is on them, and the site builds with every warning an error (a
broken link, a page left out of the navigation)."""

from __future__ import annotations

import os
import subprocess
import sys

from console import reference
from console.paths import PROJECT_DIR


def test_the_reference_pages_are_what_the_code_says():
    done = subprocess.run([sys.executable, "-m", "console.reference", "--check"], cwd=PROJECT_DIR,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_every_setting_command_and_series_has_its_line():
    pages = {name: (reference.OUT / name).read_text() for name in reference.PAGES}
    for setting in reference.all_settings():
        assert f"| `{setting.name}` |" in pages["settings.md"]
    for name in reference.command_names():
        assert f"## `manage.py {name}`" in pages["commands.md"]
    for name, *_ in reference.all_metrics():
        assert f"| `{name}` |" in pages["metrics.md"]
    # The scan finds what it must: settings read in settings.py, in apps' conf.py, and by os.environ.get.
    names = {s.name for s in reference.all_settings()}
    assert {"AUDIT_HASH_KEY", "IMPORT_MAX_BYTES", "CONSOLE_MASKING_HASH_KEY", "REDIS_URL"} <= names
    assert {"messages", "reset_offsets", "connect"} <= set(reference.command_names())


def test_the_documentation_site_builds_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d",
                           str(tmp_path / "site")], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "settings" / "index.html").exists()
