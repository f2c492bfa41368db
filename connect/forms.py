"""Forms of the Connect pages. A connector's settings are not a Django form's fields (each plugin has its own):
views read them from the request as `cfg:KEY` inputs and an extra KEY=VALUE text."""

from __future__ import annotations

from django import forms

from connect.connector_offsets.source_input import parse_source_offsets
from console.errors import ConsoleError
from offsets.resets.planning import ALL_TOPICS
from offsets.resets.strategy_input import scope_from, strategy_from

SINK_STRATEGIES = {
    "to-earliest": "earliest: the oldest record still in the log",
    "to-latest": "latest: the log end (skip what is not read yet)",
    "to-offset": "to offset: one offset on every chosen partition",
    "shift-by": "shift: move the offsets by a number of records (negative: back)",
    "to-datetime": "to datetime: the first record at or after a date-time (UTC unless a zone is given)",
}
MODES = ("strategy", "json", "reset")
MSG_PAIR = "Line '{line}' is not KEY=VALUE."


def config_lines(text: str) -> dict[str, str]:
    """KEY=VALUE a line (a value may hold '=' and ','); blank lines and lines starting with # are skipped."""
    pairs = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ConsoleError(MSG_PAIR.format(line=line.strip()[:80]))
        pairs[key.strip()] = value.strip()
    return pairs


def config_text(config: dict[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in sorted(config.items()))


def config_from_post(post) -> dict[str, str]:
    """The create form's settings: each non-empty `cfg:KEY` input, then the extra lines (which win)."""
    config = {key[4:]: value.strip() for key, value in post.items() if key.startswith("cfg:") and value.strip()}
    config.update(config_lines(post.get("extra", "")))
    return config


class RegistrationForm(forms.Form):
    name = forms.CharField(max_length=63, help_text="lower-case letters, digits, '-' and '_'")
    url = forms.CharField(max_length=1000, label="REST address",
                          widget=forms.TextInput(attrs={"placeholder": "http://connect.example:8083"}))
    username = forms.CharField(max_length=255, required=False, label="Basic-auth user")
    password_env = forms.CharField(max_length=255, required=False, label="Password from the environment",
                                   help_text="the NAME of a variable meant for cluster secrets (CONSOLE_SECRET_…)")
    ca_file = forms.CharField(max_length=1000, required=False, label="CA certificate file",
                              help_text="https only; files must lie in CONSOLE_CLUSTER_CERT_DIRS")
    cert_file = forms.CharField(max_length=1000, required=False, label="Client certificate file")
    key_file = forms.CharField(max_length=1000, required=False, label="Client key file")
    description = forms.CharField(max_length=300, required=False)
    operator_plugins = forms.CharField(
        required=False, max_length=20_000, label="Plugins operators may use",
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="connector classes, one a line; none: only admins create and edit connectors here")
    operator_settings = forms.CharField(
        required=False, max_length=20_000, label="Further settings operators may write",
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="one a line, 'prefix.*' for every name under it; the plugin's own settings and Kafka's basic ones "
                  "(tasks, topics, converters, error handling) need no line")
    file_dirs = forms.CharField(
        required=False, max_length=20_000, label="Folders for operators' files",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="absolute folders on the worker's host, one a line: the only places a connector an operator writes "
                  "may read or write files (FileStream's file)")
    reason = forms.CharField(max_length=1000, required=False)

    LISTS = ("operator_plugins", "operator_settings", "file_dirs")

    def __init__(self, *args, initial: dict | None = None, **kwargs) -> None:
        initial = dict(initial or {})
        for name in self.LISTS:
            if isinstance(initial.get(name), list):
                initial[name] = "\n".join(initial[name])
        super().__init__(*args, initial=initial, **kwargs)

    def _lines(self, name: str) -> list[str]:
        return [line.strip() for line in self.cleaned_data[name].splitlines() if line.strip()]

    def clean_operator_plugins(self) -> list[str]:
        return self._lines("operator_plugins")

    def clean_operator_settings(self) -> list[str]:
        return self._lines("operator_settings")

    def clean_file_dirs(self) -> list[str]:
        return self._lines("file_dirs")


class OffsetsChangeForm(forms.Form):
    """What an offsets preview was made from, carried again by its execute form."""

    mode = forms.ChoiceField(choices=[(m, m) for m in MODES])
    strategy = forms.ChoiceField(choices=[("", "")] + list(SINK_STRATEGIES.items()), required=False)
    value = forms.CharField(required=False, max_length=100)
    topics = forms.CharField(required=False, max_length=10_000,
                             help_text="TOPIC or TOPIC:0,1 separated by spaces; empty: every partition with an "
                                       "offset")
    offsets_json = forms.CharField(required=False, max_length=1_000_000, widget=forms.Textarea(attrs={"rows": 8}))

    def scope(self):
        topics = self.cleaned_data["topics"].split()
        return ALL_TOPICS if not topics else scope_from(False, topics)

    def strategy_value(self, cluster: str):
        name = self.cleaned_data["strategy"]
        if name not in SINK_STRATEGIES:
            raise ConsoleError("Choose how to move the offsets.")
        return strategy_from(cluster, name, self.cleaned_data["value"] or None)

    def writes(self):
        try:
            return parse_source_offsets(self.cleaned_data["offsets_json"])
        except ValueError as exc:
            raise ConsoleError(str(exc)) from None


class ExecuteForm(forms.Form):
    fingerprint = forms.CharField(max_length=64)
    reason = forms.CharField(max_length=1000, widget=forms.TextInput(attrs={"placeholder": "why (goes into the audit log)"}))
    confirm = forms.CharField(label="Type the connector's name to confirm", max_length=1000, strip=False)
