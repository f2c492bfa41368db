"""docker-compose.yml is a valid Compose file with the services the deployment needs."""

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_compose_file_validates_against_the_compose_specification():
    checker = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")

    result = subprocess.run([checker, "--builtin-schema", "vendor.compose-spec", str(ROOT / "docker-compose.yml")],
                            capture_output=True, text=True, timeout=120)

    assert result.returncode == 0, result.stdout + result.stderr


def test_app_services_share_one_definition_and_kafka_is_the_official_image():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]

    assert {"kafka", "redis", "postgres", "web", "worker", "beat", "recorder"} <= set(services)
    assert services["kafka"]["image"] == "apache/kafka:4.3.1"
    app = [services[name] for name in ("web", "worker", "beat", "recorder")]
    assert len({s["image"] for s in app}) == 1
    assert all(s["environment"] == app[0]["environment"] for s in app)
    assert "gunicorn" in " ".join(map(str, services["web"]["command"]))
