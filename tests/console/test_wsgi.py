"""console/wsgi.py: what a web worker loads at start is left out of the cycle collector's full passes."""

from __future__ import annotations

import os
import subprocess
import sys

from console.paths import PROJECT_DIR

PROBE = """
import gc, sys
views = [name for name in ("offsets.views", "topics.views") if name in sys.modules]
import console.wsgi
gc.collect()
# the collector's full passes walk only what is not frozen
loaded = int(all(name in sys.modules for name in ("offsets.views", "topics.views")))
print(gc.get_freeze_count(), len(gc.get_objects()), loaded, len(views))
"""


def test_a_web_worker_freezes_its_startup_objects():
    env = {**os.environ, "DJANGO_DEBUG": "1", "DJANGO_SETTINGS_MODULE": "console.settings"}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=PROJECT_DIR, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    frozen, walked, views_loaded, views_before = map(int, done.stdout.split())
    assert views_before == 0 and views_loaded == 1  # the URL patterns imported the views before the freeze
    assert frozen > 50_000 and walked < frozen / 10  # Django, every app's modules, the URL patterns
