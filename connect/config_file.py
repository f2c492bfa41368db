"""A connector's settings for `manage.py connect create|edit`, so that a secret never is an argument (`ps` and the
shell's history show every argument to any local user): from a file only its owner may read (`--config-file
PATH`), or from standard input (`--config-file -`), as KEY=VALUE lines or one JSON object. `--config KEY=VALUE`
stays for settings that are not secrets, and refuses those that are (by name or by the shape of the value)."""

from __future__ import annotations

import json
import os
import stat

from connect.forms import config_lines
from connect.masking import MASK, is_masked_secret
from console.errors import ConsoleError

MAX_BYTES = 1024 * 1024
STDIN = "-"
MSG_OPEN = "Cannot read the configuration file {path}: {reason}."
MSG_NOT_A_FILE = "{path} is not a regular file."
MSG_MODE = ("{path} may be read or written by other users (mode {mode:04o}): a file of a connector's settings holds "
            "its secrets, so it must be the owner's alone (chmod 600 {path}).")
MSG_TOO_BIG = "The configuration ({where}) is larger than {limit} bytes."
MSG_JSON = "The configuration ({where}) is JSON but not one object of settings: {reason}"
MSG_SECRET_ARGUMENT = ("--config {key}=…: that value is a secret, and an argument shows in `ps` and the shell's "
                       "history. Give it in a file only you may read (--config-file PATH, chmod 600) or on standard "
                       "input (--config-file -).")


def _text_from(path: str, stdin) -> str:
    if path == STDIN:
        text = stdin.read(MAX_BYTES + 1)
        if len(text) > MAX_BYTES:
            raise ConsoleError(MSG_TOO_BIG.format(where="standard input", limit=MAX_BYTES))
        return text
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)  # a FIFO must not hang it
    except OSError as exc:
        raise ConsoleError(MSG_OPEN.format(path=path, reason=exc.strerror or exc)) from None
    # The mode of what was opened, not of the name: a link swapped between a check and the open is not missed.
    found = os.fstat(descriptor)
    problem = (MSG_NOT_A_FILE.format(path=path) if not stat.S_ISREG(found.st_mode)
               else MSG_MODE.format(path=path, mode=stat.S_IMODE(found.st_mode)) if found.st_mode & 0o077 else "")
    if problem:
        os.close(descriptor)
        raise ConsoleError(problem)
    with os.fdopen(descriptor, "rb") as handle:
        raw = handle.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise ConsoleError(MSG_TOO_BIG.format(where=path, limit=MAX_BYTES))
    return raw.decode("utf-8")


def _from_json(text: str, where: str) -> dict[str, str]:
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise ConsoleError(MSG_JSON.format(where=where, reason=exc)) from None
    if not isinstance(parsed, dict):
        raise ConsoleError(MSG_JSON.format(where=where, reason="not an object"))
    config = {}
    for key, value in parsed.items():
        if isinstance(value, bool):
            value = str(value).lower()
        if not isinstance(value, (str, int, float)):
            raise ConsoleError(MSG_JSON.format(where=where, reason=f"the value of {key!r} is not text or a number"))
        config[key] = str(value)
    return config


def read_config_file(path: str, stdin) -> dict[str, str]:
    """The settings of `path` (STDIN: standard input). Refuses a file anyone but its owner may read or write."""
    text = _text_from(path, stdin)
    where = "standard input" if path == STDIN else path
    if text.lstrip().startswith("{"):
        return _from_json(text, where)
    return config_lines(text)


def check_not_secret(key: str, value: str) -> None:
    """For a setting given as an argument: refused if it is a secret (MASK, which keeps one, is not)."""
    if value != MASK and is_masked_secret(key, value):
        raise ConsoleError(MSG_SECRET_ARGUMENT.format(key=key))
