"""Output locations and the s3a settings handed to Spark (no server needed; the S3 API itself is exercised
against S3Proxy in test_replay_cluster.py)."""

import pytest

from console.errors import ConsoleError
from sparkjobs.s3 import S3Location, parse_s3a, spark_options


@pytest.mark.parametrize(("uri", "location"), [
    ("s3a://replays", S3Location("replays", "")),
    ("s3a://replays/team-a/", S3Location("replays", "team-a")),
    ("s3a://my.bucket-1/a/b", S3Location("my.bucket-1", "a/b")),
])
def test_output_locations_are_parsed(uri, location):
    assert parse_s3a(uri) == location
    assert location.child("replay-7").uri == (f"s3a://{location.bucket}/{location.prefix}/replay-7" if location.prefix
                                              else f"s3a://{location.bucket}/replay-7")


@pytest.mark.parametrize("uri", ["/etc/cron.d", "file:///tmp/x", "s3://bucket/x", "s3a://Bad_Bucket/x",
                                 "s3a://replays/../other", "s3a://replays/a b"])
def test_anything_else_is_refused(uri):
    with pytest.raises(ConsoleError, match="s3a://BUCKET"):
        parse_s3a(uri)


def test_keys_come_from_the_variables_the_settings_name(settings, monkeypatch):
    settings.REPLAY_S3_ENDPOINT, settings.REPLAY_S3_PATH_STYLE = "http://127.0.0.1:9000", True
    settings.REPLAY_S3_ACCESS_KEY_ENV, settings.REPLAY_S3_SECRET_KEY_ENV = "TEAM_S3_KEY", "TEAM_S3_SECRET"
    monkeypatch.setenv("TEAM_S3_KEY", "AKIA-team")
    monkeypatch.delenv("TEAM_S3_SECRET", raising=False)
    with pytest.raises(ConsoleError, match="TEAM_S3_SECRET is not set"):
        spark_options()

    monkeypatch.setenv("TEAM_S3_SECRET", "s3cr3t")
    options = spark_options()

    assert (options["fs.s3a.access.key"], options["fs.s3a.secret.key"]) == ("AKIA-team", "s3cr3t")
    assert options["fs.s3a.endpoint"] == "http://127.0.0.1:9000" and options["fs.s3a.path.style.access"] == "true"
    assert options["fs.s3a.connection.ssl.enabled"] == "false"
