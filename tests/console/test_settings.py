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
    result = _django_setup({"DJANGO_SETTINGS_MODULE": "console.settings", "DJANGO_ENV_FILE": ""})

    assert result.returncode != 0 and "SECRET_KEY" in result.stderr


def test_secret_key_from_the_environment_is_enough():
    result = _django_setup({"DJANGO_SETTINGS_MODULE": "console.settings", "SECRET_KEY": "x" * 50,
                            "DJANGO_ENV_FILE": ""})

    assert result.returncode == 0, result.stderr


def test_the_env_file_make_writes_is_enough_in_a_new_terminal(tmp_path):
    """What `make` writes: a new shell with neither DJANGO_DEBUG nor SECRET_KEY set still starts Django."""
    env_file = tmp_path / ".env"
    env_file.write_text("DJANGO_DEBUG=1\nSECRET_KEY=dev-" + "a" * 64 + "\n")

    result = _django_setup({"DJANGO_SETTINGS_MODULE": "console.settings", "DJANGO_ENV_FILE": str(env_file)})

    assert result.returncode == 0, result.stderr


def test_make_writes_the_env_file_once_and_keeps_it(tmp_path):
    import shutil

    shutil.copy(PROJECT_DIR / "Makefile", tmp_path / "Makefile")
    first = subprocess.run(["make", "-s", ".env"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert first.returncode == 0, first.stderr
    written = (tmp_path / ".env").read_text()
    assert "DJANGO_DEBUG=1" in written and len(written.split("SECRET_KEY=dev-")[1].split()[0]) == 64
    subprocess.run(["make", "-s", ".env"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert (tmp_path / ".env").read_text() == written
