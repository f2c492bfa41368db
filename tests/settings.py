"""The console's settings with one change for the tests: passwords are hashed with a cheap hasher.

Django's default hasher takes about half a second a password on a 2-core machine, on purpose. Nearly every view
test makes users with passwords, so that cost added minutes to each run and tested nothing of the console's. The
web, Celery and command subprocesses the tests start inherit DJANGO_SETTINGS_MODULE, so they check these hashes
with the same hasher.
"""

from console.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The tests start a resident Spark driver about ten times (workers of their own, drivers killed on purpose), and
# each one's warm-up took about 20 s of both cores while other tests ran. The tests of the driver's own life
# (tests/sparkjobs/test_driver.py) warm theirs up; replays run the same without it, only slower at first.
REPLAY_DRIVER_WARM_UP = env.bool("REPLAY_DRIVER_WARM_UP", default=False)  # noqa: F405
