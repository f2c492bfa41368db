import os
import subprocess
import sys

from console.devstack.paths import PROJECT_DIR


def _django_setup(env_overrides: dict) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DJANGO_DEBUG")}
    env.update(env_overrides)
    return subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=PROJECT_DIR, env=env,
                          capture_output=True, text=True, timeout=60)


def test_secret_key_is_required_outside_development():
    result = _django_setup({"DJANGO_SETTINGS_MODULE": "console.settings"})

    assert result.returncode != 0 and "SECRET_KEY" in result.stderr


def test_secret_key_from_the_environment_is_enough():
    result = _django_setup({"DJANGO_SETTINGS_MODULE": "console.settings", "SECRET_KEY": "x" * 50})

    assert result.returncode == 0, result.stderr
