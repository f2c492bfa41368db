import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from alerts.models import AlertRule
from console.audit.models import AuditEvent

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command("alerts", *args, stdout=out)
    return out.getvalue()


def test_add_list_silence_unsilence_remove(local_cluster, operator, webhook):
    said = run("add", "lagging", "--kind", "lag", "--group", "orders-*", "--threshold", "1000", "--for-minutes", "3",
               "--webhook", "oncall", "--email", "oncall@example.com", "--actor", "otto")
    assert "total lag above 1,000 for 3 min" in said
    run("add", "storm", "--kind", "rebalances", "--threshold", "5", "--window-minutes", "10", "--email",
        "x@example.com", "--actor", "otto")
    listing = json.loads(run("list", "--format", "json"))
    assert [r["name"] for r in listing["rules"]] == ["lagging", "storm"]
    assert listing["rules"][1]["when"] == "at least 5 rebalances within 10 min"
    said = run("silence", "--rule", "lagging", "--hours", "1.5", "--actor", "otto", "--reason", "deploy")
    silence_id = json.loads(run("list", "--format", "json"))["silences"][0]["id"]
    assert f"Silence #{silence_id}" in said
    run("unsilence", str(silence_id), "--actor", "otto", "--reason", "done")
    assert json.loads(run("list", "--format", "json"))["silences"] == []
    run("remove", "storm", "--actor", "otto", "--reason", "too noisy")
    assert list(AlertRule.objects.values_list("name", flat=True)) == ["lagging"]
    assert "0 opened" in run("evaluate")
    assert AuditEvent.objects.filter(action__startswith="alert.", outcome="success", source="cli").count() == 5


def test_viewers_cannot_change_rules_and_bad_input_says_why(local_cluster, viewer, operator, webhook):
    with pytest.raises(CommandError, match="This needs the operator role"):
        run("add", "x", "--kind", "lag", "--threshold", "1", "--email", "a@example.com", "--actor", "vera")
    with pytest.raises(CommandError, match="needs its zone"):
        run("silence", "--until", "2030-01-01T00:00:00", "--actor", "otto", "--reason", "r")
    with pytest.raises(CommandError, match="must end in the future"):
        run("silence", "--until", "2020-01-01T00:00:00+00:00", "--actor", "otto", "--reason", "r")
    with pytest.raises(CommandError, match="No webhook named 'pager': CONSOLE_ALERT_WEBHOOKS names oncall"):
        run("add", "x", "--kind", "lag", "--threshold", "1", "--webhook", "pager", "--actor", "otto")
    with pytest.raises(CommandError, match="No cluster named 'nope'"):
        run("add", "x", "--kind", "lag", "--threshold", "1", "--email", "a@example.com", "--cluster", "nope",
            "--actor", "otto")
    with pytest.raises(CommandError, match="No alert rule named 'ghost'"):
        run("remove", "ghost", "--actor", "otto", "--reason", "r")
    assert not AlertRule.objects.exists()
