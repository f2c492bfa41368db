import os
import subprocess
import sys

import pytest

from console.paths import PROJECT_DIR
from console.settings import MSG_AUDIT_HASH_KEY


def _django_setup(env_overrides: dict) -> subprocess.CompletedProcess:
    # What .env put in this process's environment (console/settings.py reads it) must not reach the child either.
    env = {k: v for k, v in os.environ.items()
           if k not in ("SECRET_KEY", "DJANGO_DEBUG", "AUDIT_HASH_KEY", "AUDIT_HASH_KEY_OF_DEVELOPMENT")}
    env.update(env_overrides)
    return subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=PROJECT_DIR, env=env,
                          capture_output=True, text=True, timeout=60)


def test_secret_key_is_required_outside_development():
    result = _django_setup({"DJANGO_SETTINGS_MODULE": "console.settings", "DJANGO_ENV_FILE": ""})

    assert result.returncode != 0 and "SECRET_KEY" in result.stderr


def test_secret_key_and_a_separate_audit_hash_key_from_the_environment_are_enough():
    result = _django_setup({"DJANGO_SETTINGS_MODULE": "console.settings", "SECRET_KEY": "x" * 50,
                            "AUDIT_HASH_KEY": "y" * 50, "DJANGO_ENV_FILE": ""})

    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("audit_key", [None, "", "x" * 50], ids=["unset", "empty", "same-as-secret-key"])
def test_production_without_an_audit_hash_key_of_its_own_fails_to_load(audit_key):
    overrides = {"DJANGO_SETTINGS_MODULE": "console.settings", "SECRET_KEY": "x" * 50, "DJANGO_ENV_FILE": ""}
    if audit_key is not None:
        overrides["AUDIT_HASH_KEY"] = audit_key

    result = _django_setup(overrides)

    assert result.returncode != 0 and "ImproperlyConfigured" in result.stderr
    assert MSG_AUDIT_HASH_KEY in result.stderr


def test_development_may_share_the_secret_key_as_audit_hash_key():
    result = _django_setup({"DJANGO_SETTINGS_MODULE": "console.settings", "DJANGO_DEBUG": "1",
                            "SECRET_KEY": "x" * 50, "DJANGO_ENV_FILE": ""})

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
    # No DJANGO_DEBUG: make run serves with DEBUG off, make dev and make test say otherwise themselves.
    assert "DJANGO_DEBUG" not in written and len(written.split("SECRET_KEY=local-")[1].split()[0]) == 64
    subprocess.run(["make", "-s", ".env"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert (tmp_path / ".env").read_text() == written
    # The audit chain's key of its own, as DEBUG off needs; written once too.
    (tmp_path / ".data").mkdir()
    keyed = subprocess.run(["make", "-s", ".data/.audit-key"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=30)
    assert keyed.returncode == 0, keyed.stderr
    key = (tmp_path / ".env").read_text().split("AUDIT_HASH_KEY=audit-")[1].split()[0]
    assert len(key) == 64 and key not in written


def test_an_env_of_a_development_database_keeps_the_key_its_chain_was_written_with(tmp_path):
    import shutil

    shutil.copy(PROJECT_DIR / "Makefile", tmp_path / "Makefile")
    (tmp_path / ".data").mkdir()
    (tmp_path / ".data" / "console.sqlite3").write_bytes(b"")
    (tmp_path / ".env").write_text("DJANGO_DEBUG=1\nSECRET_KEY=dev-abc\n")
    subprocess.run(["make", "-s", ".data/.audit-key"], cwd=tmp_path, capture_output=True, text=True, timeout=30,
                   check=True)
    env = (tmp_path / ".env").read_text()
    assert "AUDIT_HASH_KEY=dev-abc\n" in env and "AUDIT_HASH_KEY_OF_DEVELOPMENT=1" in env


def test_single_sign_on_needs_the_issuer():
    sso = {"DJANGO_SETTINGS_MODULE": "console.settings", "SECRET_KEY": "x" * 50, "AUDIT_HASH_KEY": "y" * 50,
           "DJANGO_ENV_FILE": "",
           "OIDC_RP_CLIENT_ID": "console", "OIDC_RP_CLIENT_SECRET": "s", "CONSOLE_SSO_ROLE_MAP": "admins=admin",
           **{f"OIDC_OP_{name}_ENDPOINT": f"https://idp.example/{name.lower()}" for name in
              ("AUTHORIZATION", "TOKEN", "USER", "JWKS")}}

    without = _django_setup(sso)
    assert without.returncode != 0 and "single sign-on also needs OIDC_OP_ISSUER" in without.stderr
    assert _django_setup({**sso, "OIDC_OP_ISSUER": "https://idp.example"}).returncode == 0


def test_outside_development_the_audit_key_is_its_own_unless_a_development_database_needs_the_old_one():
    same = {"DJANGO_SETTINGS_MODULE": "console.settings", "SECRET_KEY": "k" * 50, "AUDIT_HASH_KEY": "k" * 50,
            "DJANGO_ENV_FILE": "", "DJANGO_DEBUG": "0"}
    refused = _django_setup(same)
    assert refused.returncode != 0 and "AUDIT_HASH_KEY must be set, and differ from SECRET_KEY" in refused.stderr
    assert _django_setup({**same, "AUDIT_HASH_KEY_OF_DEVELOPMENT": "1"}).returncode == 0
