"""`make run`'s web process: the production server (gunicorn, DEBUG off, static files from WhiteNoise) unless
DJANGO_DEBUG is on (`make dev`), which gets Django's development server with autoreload and tracebacks.

    .venv/bin/python -m devstack.web [--bind 127.0.0.1:8000]

One kind of server for `make run`, the bench and production: what a team trying the console shares with colleagues
is what it will deploy."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# Two cores here: three workers keep a page answering while another waits on a slow cluster, threads cover the
# htmx polls; a request that needs more than the timeout is a bug to see in the log, not to wait for.
WORKERS = int(os.environ.get("WEB_WORKERS", "3"))
THREADS = int(os.environ.get("WEB_THREADS", "4"))
TIMEOUT_S = int(os.environ.get("WEB_TIMEOUT_S", "60"))


def debug_on() -> bool:
    return os.environ.get("DJANGO_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


def command(bind: str) -> list[str]:
    bin_dir = Path(sys.executable).parent
    if debug_on():
        return [sys.executable, "manage.py", "runserver", bind]
    workers = int(os.environ.get("WEB_WORKERS", WORKERS))
    return [str(bin_dir / "gunicorn"), "console.wsgi:application", "--bind", bind, "--workers", str(workers),
            "--threads", str(THREADS), "--timeout", str(TIMEOUT_S), "--graceful-timeout", "10",
            "--access-logfile", "-", "--access-logformat", '%(h)s "%(r)s" %(s)s %(b)s %(M)sms']


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bind", default="127.0.0.1:8000")
    args = parser.parse_args()
    argv = command(args.bind)
    print(("Development server (DJANGO_DEBUG on): " if debug_on() else "gunicorn, DEBUG off: ") + " ".join(argv),
          flush=True)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
