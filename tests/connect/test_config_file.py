"""connect/config_file.py: a connector's settings from a file only its owner may read, or from standard input, and
no secret as an argument."""

import io
import os

import pytest

from connect.config_file import (
    MSG_MODE, MSG_SECRET_ARGUMENT, check_not_secret, read_config_file,
)
from connect.masking import MASK
from console.errors import ConsoleError


def private(path, text: str):
    path.write_text(text)
    path.chmod(0o600)
    return str(path)


def test_key_value_lines_and_json_are_read(tmp_path):
    lines = private(tmp_path / "c.properties", "# comment\nconnection.password = p=w,1 \n\ntasks.max=2\n")
    assert read_config_file(lines, None) == {"connection.password": "p=w,1", "tasks.max": "2"}
    as_json = private(tmp_path / "c.json", '{"connection.password": "x", "tasks.max": 2, "flag": true}')
    assert read_config_file(as_json, None) == {"connection.password": "x", "tasks.max": "2", "flag": "true"}
    assert read_config_file("-", io.StringIO("a=1\n")) == {"a": "1"}


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o620, 0o660, 0o700 | 0o007])
def test_a_file_others_may_read_or_write_is_refused(tmp_path, mode):
    path = tmp_path / "c.properties"
    path.write_text("connection.password=x\n")
    path.chmod(mode)
    with pytest.raises(ConsoleError) as caught:
        read_config_file(str(path), None)
    assert caught.value.message == MSG_MODE.format(path=path, mode=mode)


def test_a_folder_a_missing_file_and_bad_json_are_refused_with_their_reason(tmp_path):
    with pytest.raises(ConsoleError, match="not a regular file"):
        read_config_file(str(tmp_path), None)
    with pytest.raises(ConsoleError, match="Cannot read the configuration file"):
        read_config_file(str(tmp_path / "none"), None)
    with pytest.raises(ConsoleError, match="not one object of settings"):
        read_config_file("-", io.StringIO('{"a": [1]}'))
    link = tmp_path / "link"
    os.symlink(private(tmp_path / "target", "a=1\n"), link)
    assert read_config_file(str(link), None) == {"a": "1"}  # the mode of the file read, not of the link


@pytest.mark.parametrize(("key", "value"), [("connection.password", "x"), ("connection.url", "https://u:p@h/"),
                                            ("headers", "Authorization: Bearer t")])
def test_a_secret_as_an_argument_is_refused(key, value):
    with pytest.raises(ConsoleError) as caught:
        check_not_secret(key, value)
    assert caught.value.message == MSG_SECRET_ARGUMENT.format(key=key)


def test_settings_that_are_not_secrets_and_the_mask_pass_as_arguments():
    for key, value in (("tasks.max", "2"), ("connection.url", "https://h/"), ("connection.password", MASK),
                       ("db.password", "${file:/s:p}")):
        check_not_secret(key, value)
