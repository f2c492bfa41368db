"""What a Connect cluster's registration may carry, by the same rules as a Kafka cluster's (console/clusters/
client_settings.py): the password only as the name of an environment variable meant for cluster secrets,
certificate and key files only from CONSOLE_CLUSTER_CERT_DIRS, and an address that holds no credentials."""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from django.conf import settings

from console.clusters.client_settings import CLIENT_SETTINGS, SettingRefused, check_secret_env_name

MSG_URL = ("The Connect address must be http:// or https:// followed by a host (and port), without credentials, "
           "query or fragment: e.g. http://connect.example:8083.")
MSG_USERNAME = "The basic-auth user name is printable ASCII without ':'."
MSG_PASSWORD_WITHOUT_USER = "A basic-auth password variable needs a user name."
MSG_USER_WITHOUT_PASSWORD = "A basic-auth user needs the name of the environment variable that holds its password."
MSG_CERT_NEEDS_KEY = "A client certificate needs its key file, and a key file its certificate."
MSG_TLS_FILES_NEED_HTTPS = "Certificate files are used only with an https:// address."
MSG_PLUGIN_NAME = ("'{value}' is not a connector class name (such as "
                   "org.apache.kafka.connect.file.FileStreamSinkConnector).")
MSG_SETTING_NAME = ("'{value}' is not a setting name, or a prefix of names written as 'prefix.*' (such as "
                    "consumer.override.auto.offset.reset or transforms.*).")
MSG_FOLDER = "'{value}' is not an absolute folder path without '..' (and not '/')."
MSG_FOLDER_CONSOLE = ("'{value}' holds or lies in the console's own folder {base}, whose files (.env, the database) "
                      "are its secrets; inside it only {files} may hold connectors' files.")
MSG_TOO_MANY = "At most {limit} entries a list."
ALLOWLIST_LIMIT = 200
_CLASS = re.compile(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+")
_SETTING = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,254}?(\.\*)?")
_USER = re.compile(r"[\x21-\x39\x3b-\x7e][\x20-\x39\x3b-\x7e]{0,254}")


class RegistrationRefused(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


def check_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError:
        raise RegistrationRefused("url", MSG_URL) from None
    if (parts.scheme not in ("http", "https") or not parts.hostname or parts.username is not None
            or parts.password is not None or parts.query or parts.fragment or not port_ok
            or any(not 0x21 <= ord(ch) <= 0x7E for ch in url)):
        raise RegistrationRefused("url", MSG_URL)


def check_connect_registration(*, url: str, username: str = "", password_env: str = "", ca_file: str = "",
                               cert_file: str = "", key_file: str = "") -> None:
    """Raises RegistrationRefused for the first field the rules do not allow."""
    check_url(url)
    if username and not _USER.fullmatch(username):
        raise RegistrationRefused("username", MSG_USERNAME)
    if password_env and not username:
        raise RegistrationRefused("username", MSG_PASSWORD_WITHOUT_USER)
    if username and not password_env:
        raise RegistrationRefused("password_env", MSG_USER_WITHOUT_PASSWORD)
    if password_env:
        try:
            check_secret_env_name("the basic-auth password", password_env)
        except SettingRefused as exc:
            raise RegistrationRefused("password_env", exc.message) from None
    if bool(cert_file) != bool(key_file):
        raise RegistrationRefused("cert_file", MSG_CERT_NEEDS_KEY)
    files = {"ca_file": ca_file, "cert_file": cert_file, "key_file": key_file}
    if any(files.values()) and not url.startswith("https://"):
        raise RegistrationRefused("ca_file", MSG_TLS_FILES_NEED_HTTPS)
    for field, value in files.items():
        if value:
            try:
                CLIENT_SETTINGS["ssl.ca.location"](field, value)  # the folder rule of every certificate file
            except SettingRefused as exc:
                raise RegistrationRefused(field, exc.message) from None


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def check_file_dir(value: str) -> None:
    if (not os.path.isabs(value) or ".." in value.split("/") or os.path.normpath(value) != value or value == "/"
            or any(not 0x20 <= ord(ch) < 0x7F for ch in value)):
        raise RegistrationRefused("file_dirs", MSG_FOLDER.format(value=value))
    base, files = os.path.realpath(settings.BASE_DIR), os.path.realpath(settings.CONNECT_LOCAL_FILES_DIR)
    resolved = os.path.realpath(value)
    if (_within(base, resolved) or _within(resolved, base)) and not _within(resolved, files):
        raise RegistrationRefused("file_dirs", MSG_FOLDER_CONSOLE.format(value=value, base=base, files=files))


def check_operator_allowlist(*, plugins: list, setting_names: list, file_dirs: list) -> None:
    """The allowlist an admin keeps for operators on a Connect cluster (connect/operator_rules.py)."""
    for field, values, pattern, message in (("operator_plugins", plugins, _CLASS, MSG_PLUGIN_NAME),
                                            ("operator_settings", setting_names, _SETTING, MSG_SETTING_NAME)):
        if not isinstance(values, list) or len(values) > ALLOWLIST_LIMIT:
            raise RegistrationRefused(field, MSG_TOO_MANY.format(limit=ALLOWLIST_LIMIT))
        for value in values:
            if not isinstance(value, str) or not pattern.fullmatch(value):
                raise RegistrationRefused(field, message.format(value=str(value)[:200]))
    if not isinstance(file_dirs, list) or len(file_dirs) > ALLOWLIST_LIMIT:
        raise RegistrationRefused("file_dirs", MSG_TOO_MANY.format(limit=ALLOWLIST_LIMIT))
    for value in file_dirs:
        check_file_dir(str(value))
