"""Evaluation against stored facts: when alerts open, fire, resolve, and what reaches the webhook and the mail."""

from datetime import UTC, datetime, timedelta

import pytest
from urllib.parse import unquote, urlsplit

from django.core import mail
from django.urls import resolve

from alerts.evaluation import alerts_evaluate
from alerts.models import Alert, AlertRule, Silence
from offsets.models import GroupLagStatus, LagSweep

pytestmark = pytest.mark.django_db
T0 = datetime.now(UTC).replace(microsecond=0)


def status_now(group: str, status: str, reason: str = "stalled", lag: int = 42, cluster: str = "local") -> None:
    GroupLagStatus.objects.update_or_create(cluster=cluster, group=group, defaults={
        "status": status, "reason": reason, "totals": [lag]})


def make_rule(**fields) -> AlertRule:
    defaults = {"name": "stalled", "kind": "status", "statuses": ["ERR", "STOP"], "for_minutes": 5,
                "webhook": "oncall", "emails": ["oncall@example.com"], "created_by": "test", "created_at": T0}
    return AlertRule.objects.create(**{**defaults, **fields})


def test_fires_once_after_holding_for_its_minutes_then_resolves_once(local_cluster, webhook):
    make_rule()
    status_now("orders", "ERR")
    assert alerts_evaluate(now=T0).opened == 1
    assert alerts_evaluate(now=T0 + timedelta(minutes=4)).fired == 0
    assert webhook.received == [] and mail.outbox == []
    result = alerts_evaluate(now=T0 + timedelta(minutes=5))
    assert (result.fired, result.sent) == (1, 2)
    for minute in range(6, 12):  # still stalled: nothing more is sent
        alerts_evaluate(now=T0 + timedelta(minutes=minute))
    assert len(webhook.received) == 1 and len(mail.outbox) == 1
    firing_msg = webhook.received[0]
    assert firing_msg["alert"]["state"] == "firing" and firing_msg["alert"]["group"] == "orders"
    assert "ERR: stalled" in firing_msg["text"] and "/clusters/local/groups/orders/" in firing_msg["text"]
    assert mail.outbox[0].to == ["oncall@example.com"] and "[FIRING] stalled" in mail.outbox[0].subject

    status_now("orders", "OK")
    assert alerts_evaluate(now=T0 + timedelta(minutes=12)).resolved == 1
    alerts_evaluate(now=T0 + timedelta(minutes=13))
    assert [m["alert"]["state"] for m in webhook.received] == ["firing", "resolved"]
    assert len(mail.outbox) == 2 and "[RESOLVED]" in mail.outbox[1].subject
    assert "after 12 min" in webhook.received[1]["text"]


def test_a_blip_shorter_than_the_rule_sends_nothing(local_cluster, webhook):
    make_rule()
    status_now("orders", "STOP")
    alerts_evaluate(now=T0)
    status_now("orders", "OK")
    alerts_evaluate(now=T0 + timedelta(minutes=1))
    assert not Alert.objects.exists() and webhook.received == [] and mail.outbox == []


def test_a_silenced_alert_is_sent_when_the_silence_ends_and_only_then(local_cluster, webhook):
    rule = make_rule(for_minutes=0)
    silence = Silence.objects.create(rule=rule, group_pattern="ord*", ends_at=T0 + timedelta(minutes=10),
                                     reason="maintenance", created_by="test", created_at=T0)
    status_now("orders", "ERR")
    status_now("billing", "ERR")
    alerts_evaluate(now=T0)
    assert [m["alert"]["group"] for m in webhook.received] == ["billing"]
    alerts_evaluate(now=T0 + timedelta(minutes=11))
    assert sorted(m["alert"]["group"] for m in webhook.received) == ["billing", "orders"]
    assert silence.pk


def test_resolved_during_a_silence_tells_nobody(local_cluster, webhook):
    rule = make_rule(for_minutes=0)
    Silence.objects.create(rule=None, ends_at=T0 + timedelta(hours=1), reason="m", created_by="t", created_at=T0)
    status_now("orders", "ERR")
    alerts_evaluate(now=T0)
    status_now("orders", "OK")
    alerts_evaluate(now=T0 + timedelta(minutes=1))
    assert webhook.received == [] and mail.outbox == []
    assert rule.alerts.get().state == Alert.RESOLVED


def test_a_failing_webhook_is_retried_without_sending_the_email_again(local_cluster, webhook):
    make_rule(for_minutes=0)
    status_now("orders", "ERR")
    webhook.status = 500
    result = alerts_evaluate(now=T0)
    assert (result.sent, result.failed) == (1, 1)
    assert "HTTP Error 500" in Alert.objects.get().delivery_error
    webhook.status = 200
    alerts_evaluate(now=T0 + timedelta(seconds=30))
    assert len(webhook.received) == 1 and len(mail.outbox) == 1
    assert Alert.objects.get().delivery_error == ""


def test_a_group_that_disappears_resolves_and_a_new_stall_opens_a_new_alert(local_cluster, webhook):
    make_rule(for_minutes=0)
    status_now("orders", "ERR")
    alerts_evaluate(now=T0)
    GroupLagStatus.objects.filter(group="orders").delete()
    alerts_evaluate(now=T0 + timedelta(minutes=1))
    status_now("orders", "ERR")
    alerts_evaluate(now=T0 + timedelta(minutes=2))
    assert list(Alert.objects.order_by("id").values_list("state", flat=True)) == ["resolved", "firing"]
    assert [m["alert"]["state"] for m in webhook.received] == ["firing", "resolved", "firing"]


def test_sampler_rule_fires_for_a_cluster_whose_sweeps_fail(local_cluster, webhook, settings):
    settings.LAG_SAMPLE_INTERVAL_S = 30
    make_rule(name="sampler", kind="sampler", statuses=[], for_minutes=2, emails=[])
    LagSweep.objects.create(cluster="local", last_ok_at=T0 - timedelta(minutes=3),
                            last_error="Cluster 'local' did not answer within 3 s", last_error_at=T0)
    alerts_evaluate(now=T0)
    assert len(webhook.received) == 1
    assert webhook.received[0]["alert"]["group"] == "" and "did not answer" in webhook.received[0]["text"]
    assert webhook.received[0]["alert"]["link"].endswith("/clusters/local/")


def test_hostile_group_ids_reach_the_receiver_whole(local_cluster, webhook):
    make_rule(for_minutes=0, emails=[])
    odd = 'a/b c#d%e"f<script>x</script>ü\u202e'
    status_now(odd, "ERR")
    alerts_evaluate(now=T0)
    assert webhook.received[0]["alert"]["group"] == odd
    # the link leads back to that group's page: what a server decodes resolves to the same id
    link = urlsplit(webhook.received[0]["alert"]["link"])
    assert resolve(unquote(link.path)).kwargs == {"cluster": "local", "group": odd}
