"""Which connector settings are secrets, and how they are shown: masked in pages, JSON output and audit rows.

A setting is secret when its plugin declares it a PASSWORD, when its name says so (password, secret, credential,
token, authorization, JAAS configurations, names ending in "key": api.key, aws.access.key), or when its value
holds one whatever the name: a URL with credentials before its host (`https://user:pw@host`, only the credentials
are masked), or a `password=` / `token:` / `Authorization:` pair inside the value (a header list, a JDBC URL's
query: the whole value is masked). A value made only of config provider references
(`${file:/etc/secrets.properties:password}`) holds no secret: the worker resolves it, and it is shown as written.
Pure: no Django, no Connect."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

MASK = "********"
_SECRET_NAME = re.compile(r"password|passwd|passphrase|secret|credential|token|authori[sz]ation|jaas|(key$)",
                          re.IGNORECASE)
_ONLY_REFERENCES = re.compile(r"(\$\{[^{}]+\})+")
REFERENCE = re.compile(r"\$\{[^{}]*\}")
# The credentials of a URL (RFC 3986 userinfo): after "scheme://", up to the last '@' before the host's end.
_USERINFO = re.compile(r"(?<=://)[^/?#\s]*@")
# A secret's name followed by ':' or '=' inside a value: `Authorization: Bearer …`, `;password=…`,
# `X-Api-Token:…`, `password="…"` in a JAAS line.
_SECRET_PAIR = re.compile(r"(password|passwd|passphrase|secret|credential|token|authori[sz]ation|api[._-]?key"
                          r"|access[._-]?key)[\w.-]*[\"']?\s*[:=]\s*[\"']?[^\"'\s;,&|]", re.IGNORECASE)


def is_secret_key(key: str, declared: Iterable[str] = ()) -> bool:
    return key in set(declared) or bool(_SECRET_NAME.search(key))


def is_reference(value: object) -> bool:
    return isinstance(value, str) and bool(_ONLY_REFERENCES.fullmatch(value.strip()))


def has_reference(value: object) -> bool:
    """Whether the worker would resolve part of the value through a config provider (`${provider:path:key}`)."""
    return isinstance(value, str) and bool(REFERENCE.search(value))


def _masked_shape(value: str) -> str:
    """The value with what its shape says is secret masked: the whole value for a secret pair, else the
    credentials of every URL in it."""
    if _SECRET_PAIR.search(REFERENCE.sub("", value)):
        return MASK
    return _USERINFO.sub(MASK + "@", value)


def mask_value(key: str, value, declared: Iterable[str] = ()):
    if value is None or value == "" or is_reference(value):
        return value
    if is_secret_key(key, declared):
        return MASK
    return _masked_shape(value) if isinstance(value, str) else value


def is_masked_secret(key: str, value, declared: Iterable[str] = ()) -> bool:
    """Whether any part of the value is hidden when it is shown."""
    return mask_value(key, value, declared) != value


def mask_config(config: Mapping[str, object], declared: Iterable[str] = ()) -> dict:
    declared = frozenset(declared)
    return {key: mask_value(key, value, declared) for key, value in config.items()}


def mask_rest(entry: Mapping, declared: Iterable[str] = ()) -> dict:
    """A REST answer with every "config" object in it masked (GET /connectors/{name}, the expanded list's entry)."""
    masked = {}
    for key, value in entry.items():
        if key == "config" and isinstance(value, Mapping):
            masked[key] = mask_config(value, declared)
        elif isinstance(value, Mapping):
            masked[key] = mask_rest(value, declared)
        else:
            masked[key] = value
    return masked


def kept_secrets(submitted: Mapping[str, str], current: Mapping[str, str],
                 declared: Iterable[str] = ()) -> frozenset[str]:
    """The settings submitted exactly as the running value is shown masked: the person kept a secret they never
    saw (a whole masked value, or a URL whose credentials are masked)."""
    declared = frozenset(declared)
    return frozenset(key for key, value in submitted.items()
                     if key in current and value != current[key]
                     and (value == MASK or value == mask_value(key, current[key], declared)))


def unmask(submitted: Mapping[str, str], current: Mapping[str, str], declared: Iterable[str] = ()) -> dict[str, str]:
    """A configuration edited from a masked one: a secret left as it was shown keeps its current value."""
    kept = kept_secrets(submitted, current, declared)
    return {key: current[key] if key in kept else value for key, value in submitted.items()}


def scrub_text(text: str, config: Mapping[str, object], declared: Iterable[str] = ()) -> str:
    """A text about a connector (a task's failure trace, Connect's validation message) without the secrets of its
    configuration: each secret value it quotes is replaced by the value as it is shown (masked), and the
    credentials of any URL in it by the mask."""
    if not text:
        return text
    declared = frozenset(declared)
    shown = {value: mask_value(key, value, declared) for key, value in config.items()
             if isinstance(value, str) and len(value) >= 4 and is_masked_secret(key, value, declared)}
    for value in list(shown):  # a URL's credentials may be quoted without the URL: "user:password", "password"
        for userinfo in _USERINFO.findall(value):
            for part in (userinfo[:-1], userinfo[:-1].partition(":")[2]):
                if len(part) >= 4:
                    shown.setdefault(part, MASK)
    for value in sorted(shown, key=len, reverse=True):
        text = text.replace(value, shown[value])
    return _USERINFO.sub(MASK + "@", text)
