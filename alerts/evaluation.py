"""Evaluation: after each lag sweep, every rule is checked against what was stored; alerts open, fire, resolve and
are delivered. One unresolved alert per rule and group means one message when a group stalls however long it
stays stalled, and one when it recovers."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from alerts.broker_conditions import BROKER_KINDS, RETENTION
from alerts.channels import DeliveryFailed, email_send, webhook_send
from alerts.conditions import CONNECTOR, firing, hold_s, matches
from alerts.facts import facts_gather
from alerts.links import alert_path
from alerts.models import Alert, AlertRule, Silence

log = logging.getLogger(__name__)
# A resolve message that cannot be delivered is retried this long, then given up (the alert stays in the page).
RESOLVE_RETRY = timedelta(hours=24)


@dataclass(frozen=True)
class EvaluationResult:
    opened: int
    fired: int
    resolved: int
    sent: int
    failed: int


def _silenced(alert: Alert, silences: list[Silence]) -> bool:
    return any((s.rule_id is None or s.rule_id == alert.rule_id) and (not s.cluster or s.cluster == alert.cluster)
               and matches(s.group_pattern, alert.group) for s in silences)


def alerts_evaluate(*, now: datetime | None = None) -> EvaluationResult:
    """Checks every rule now; returns how many alerts opened, fired, resolved and how deliveries went."""
    now = now or datetime.now(UTC)
    rules = list(AlertRule.objects.all())
    facts = facts_gather(rules, now)
    opened = fired = resolved = 0
    with transaction.atomic():
        for rule in rules:
            holding = firing(rule, facts)
            open_alerts = {(a.cluster, a.group): a for a in rule.alerts.exclude(state=Alert.RESOLVED)}
            for key, reason in holding.items():
                alert = open_alerts.get(key)
                if alert is None:
                    alert = Alert(rule=rule, cluster=key[0], group=key[1], reason=reason, since=now)
                    opened += 1
                alert.reason = reason
                if alert.state == Alert.PENDING and (now - alert.since).total_seconds() >= hold_s(rule):
                    alert.state, alert.fired_at = Alert.FIRING, now
                    fired += 1
                alert.save()
            for key, alert in open_alerts.items():
                if key in holding:
                    continue
                if alert.state == Alert.PENDING:  # never fired, so nobody waits for its end
                    alert.delete()
                    continue
                alert.state, alert.resolved_at = Alert.RESOLVED, now
                alert.save(update_fields=["state", "resolved_at"])
                resolved += 1
    sent, failed = _deliver(now)
    return EvaluationResult(opened, fired, resolved, sent, failed)


def _channels(rule: AlertRule) -> list[str]:
    return (["webhook"] if rule.webhook else []) + (["email"] if rule.emails else [])


def _deliver(now: datetime) -> tuple[int, int]:
    """Sends what is due on each channel once: firing alerts not silenced, and the resolve of alerts whose firing
    reached someone. A channel that fails is retried at the next evaluation, the others are not sent again."""
    silences = list(Silence.objects.filter(ends_at__gt=now))
    due = Alert.objects.select_related("rule").filter(
        Q(state=Alert.FIRING) | Q(state=Alert.RESOLVED, resolved_at__gte=now - RESOLVE_RETRY))
    sent = failed = 0
    for alert in due:
        resolving = alert.state == Alert.RESOLVED
        if not resolving and _silenced(alert, silences):
            continue
        done = alert.sent_resolved if resolving else alert.sent_firing
        wanted = [c for c in _channels(alert.rule) if c not in done and (not resolving or c in alert.sent_firing)]
        if not wanted:
            continue
        errors = []
        for channel in wanted:
            try:
                _send(alert, channel, resolving)
                done[channel] = now.isoformat()
                sent += 1
            except DeliveryFailed as exc:
                log.warning("Alert %s (%s) not delivered: %s", alert.pk, alert.rule.name, exc)
                errors.append(str(exc))
                failed += 1
        alert.delivery_error = "; ".join(errors)
        alert.save(update_fields=["sent_resolved" if resolving else "sent_firing", "delivery_error"])
    return sent, failed


def alert_link(alert: Alert) -> str:
    return settings.CONSOLE_BASE_URL.rstrip("/") + alert_path(alert.rule.kind, alert.cluster, alert.group)


def alert_message(alert: Alert, resolving: bool) -> tuple[str, str]:
    """(subject line, text): what the webhook's text and the email say."""
    if alert.rule.kind == CONNECTOR:
        connect, _, connector = alert.group.partition("/")
        subject_of = f"connector {connector} (Connect {connect}) on cluster {alert.cluster}"
    elif alert.rule.kind == RETENTION:
        subject_of = f"partition {alert.group} of cluster {alert.cluster}"
    elif alert.rule.kind in BROKER_KINDS:
        subject_of = f"{alert.group} of cluster {alert.cluster}" if alert.group else f"cluster {alert.cluster}"
    elif alert.group:
        subject_of = f"group {alert.group} on cluster {alert.cluster}"
    else:
        subject_of = f"cluster {alert.cluster}"
    if resolving:
        lasted = (alert.resolved_at - alert.since).total_seconds() / 60
        subject = f"[RESOLVED] {alert.rule.name}: {subject_of}"
        text = f"{subject} is clear again after {lasted:.0f} min. It was: {alert.reason}"
    else:
        subject = f"[FIRING] {alert.rule.name}: {subject_of}"
        text = f"{subject}: {alert.reason} (since {alert.since:%Y-%m-%d %H:%M:%S} UTC)"
    return subject, f"{text}\n{alert_link(alert)}"


def _send(alert: Alert, channel: str, resolving: bool) -> None:
    subject, text = alert_message(alert, resolving)
    if channel == "webhook":
        webhook_send(alert.rule.webhook, {"text": text, "alert": {
            "id": alert.pk, "rule": alert.rule.name, "kind": alert.rule.kind, "cluster": alert.cluster,
            "group": alert.group, "state": "resolved" if resolving else "firing", "reason": alert.reason,
            "since": alert.since.isoformat(), "link": alert_link(alert)}})
    else:
        email_send(alert.rule.emails, f"[kafka-console] {subject}", text)
