# First, before anything writes a file: every process that imports the console (manage.py, gunicorn, Celery, the dev
# stack's servers, the tests) and whatever it starts (JVMs, Redis, Spark) creates files only its user can read.
from console.private_files import restrict_umask

restrict_umask()

from console.celery import app as celery_app  # noqa: E402 - after the umask, on purpose

__all__ = ["celery_app"]
