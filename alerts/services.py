"""Changes to alert rules and silences: validated, audited (who changed what the on-call engineer is told).
Callers check the role (operator) first."""

from __future__ import annotations

import re
from datetime import datetime

from django.core.validators import validate_email
from django.core.exceptions import ValidationError
from django.utils import timezone

from alerts.broker_conditions import BROKER_KINDS, DEFAULT_RETENTION_PERCENT, IDLE, RETENTION, THRESHOLD_KINDS
from alerts.channels import webhook_check
from alerts.conditions import ALERTABLE_STATUSES, CONNECTOR, CONNECTOR_STATUSES, GROUP_KINDS, LAG, REBALANCES, STATUS
from alerts.models import AlertRule, Silence
from console.audit.guarded import MSG_REASON
from console.audit.actor import Actor
from console.audit.services import audited
from console.clusters.models import Cluster
from console.errors import Conflict, ConsoleError, NotFound

MSG_NAME = "A rule name is 1 to 100 characters of letters, digits, '.', '_' or '-'."
MSG_EXISTS = "An alert rule named '{name}' exists already."
MSG_NO_RULE = "No alert rule named '{name}'."
MSG_KIND = "The kind is one of {kinds}."
MSG_STATUSES = "A status rule needs one or more of {statuses}."
MSG_CONNECTOR_STATUSES = ("A connector rule fires on FAILED (a connector or task failed) or NOT_RUNNING (anything but "
                          "RUNNING, paused and stopped included).")
MSG_THRESHOLD = "A lag rule needs a threshold of 0 records or more."
MSG_REBALANCES = "A rebalance rule needs at least 1 rebalance (threshold) within a window of 1 minute or more."
MSG_BROKER_THRESHOLD = "An idle rule needs a threshold of 0 to 100 (%), a p99_latency rule one of 0 ms or more."
MSG_RETENTION_THRESHOLD = ("A retention rule's threshold is a share of retention.bytes of 1 % or more (90 when none is "
                           "given).")
MSG_NO_CHANNEL = "Say where the alert goes: a webhook, one or more email addresses, or both."
MSG_EMAIL = "'{address}' is not an email address."
MSG_CLUSTER = "No cluster named '{cluster}' is registered."
MSG_SILENCE_END = "A silence must end in the future."
MSG_NO_SILENCE = "No active silence #{id}."
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")


def _rule_json(rule: AlertRule) -> dict:
    return {"name": rule.name, "kind": rule.kind, "cluster": rule.cluster, "group_pattern": rule.group_pattern,
            "statuses": rule.statuses, "for_minutes": rule.for_minutes, "threshold": rule.threshold,
            "window_minutes": rule.window_minutes, "webhook": rule.webhook, "emails": rule.emails}


def _check_cluster(cluster: str) -> None:
    if cluster and not Cluster.objects.filter(name=cluster).exists():
        raise NotFound(MSG_CLUSTER.format(cluster=cluster))


def alert_rule_create(*, actor: Actor, name: str, kind: str, cluster: str = "", group_pattern: str = "*",
                      statuses: list[str] | None = None, for_minutes: int = 0, threshold: int | None = None,
                      window_minutes: int | None = None, webhook: str = "", emails: list[str] | None = None,
                      reason: str = "") -> AlertRule:
    """A new rule, checked whole before anything is stored; its first evaluation is the next lag sweep's."""
    statuses, emails = [s.strip().upper() for s in statuses or [] if s.strip()], [e.strip() for e in emails or [] if e.strip()]
    if not _NAME.match(name or ""):
        raise ConsoleError(MSG_NAME)
    if kind not in AlertRule.Kind.values:
        raise ConsoleError(MSG_KIND.format(kinds=", ".join(AlertRule.Kind.values)))
    if kind == STATUS and (not statuses or not set(statuses) <= set(ALERTABLE_STATUSES)):
        raise ConsoleError(MSG_STATUSES.format(statuses=", ".join(ALERTABLE_STATUSES)))
    if kind == CONNECTOR:
        statuses = statuses or ["FAILED"]
        if len(statuses) != 1 or statuses[0] not in CONNECTOR_STATUSES:
            raise ConsoleError(MSG_CONNECTOR_STATUSES)
    if kind == LAG and (threshold is None or threshold < 0):
        raise ConsoleError(MSG_THRESHOLD)
    if kind == REBALANCES and (not threshold or threshold < 1 or not window_minutes or window_minutes < 1):
        raise ConsoleError(MSG_REBALANCES)
    if kind in THRESHOLD_KINDS and (threshold is None or threshold < 0 or (kind == IDLE and threshold > 100)):
        raise ConsoleError(MSG_BROKER_THRESHOLD)
    if kind == RETENTION:
        threshold = DEFAULT_RETENTION_PERCENT if threshold is None else threshold
        if threshold < 1:
            raise ConsoleError(MSG_RETENTION_THRESHOLD)
    if for_minutes < 0:
        raise ConsoleError("Minutes cannot be negative.")
    if not webhook and not emails:
        raise ConsoleError(MSG_NO_CHANNEL)
    webhook_check(webhook)
    for address in emails:
        try:
            validate_email(address)
        except ValidationError as exc:
            raise ConsoleError(MSG_EMAIL.format(address=address)) from exc
    _check_cluster(cluster)
    if AlertRule.objects.filter(name=name).exists():
        raise Conflict(MSG_EXISTS.format(name=name))
    rule = AlertRule(name=name, kind=kind, cluster=cluster, group_pattern=group_pattern or "*",
                     statuses=statuses if kind in (STATUS, CONNECTOR) else [], for_minutes=for_minutes,
                     threshold=threshold if kind in (LAG, REBALANCES, *BROKER_KINDS) else None,
                     window_minutes=window_minutes if kind == REBALANCES else None, webhook=webhook, emails=emails,
                     created_by=actor.name, created_at=timezone.now())
    if kind not in (*GROUP_KINDS, CONNECTOR, RETENTION):
        rule.group_pattern = "*"
    with audited(actor=actor, action="alert.rule.create", cluster=cluster, target=f"alert-rule:{name}",
                 reason=reason, params=_rule_json(rule)) as record:
        rule.save()
        record.after = _rule_json(rule)
    return rule


def alert_rule_remove(*, actor: Actor, name: str, reason: str) -> None:
    """Removes the rule with its alerts (an open one is not resolved: nobody is told it cleared)."""
    rule = AlertRule.objects.filter(name=name).first()
    if rule is None:
        raise NotFound(MSG_NO_RULE.format(name=name))
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    with audited(actor=actor, action="alert.rule.remove", cluster=rule.cluster, target=f"alert-rule:{name}",
                 reason=reason, before=_rule_json(rule)):
        rule.delete()


def alert_silence_create(*, actor: Actor, ends_at: datetime, reason: str, rule: str = "", cluster: str = "",
                         group_pattern: str = "*") -> Silence:
    """Nobody is notified of the matching alerts until `ends_at`; alerts still open and resolve meanwhile."""
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    if ends_at <= timezone.now():
        raise ConsoleError(MSG_SILENCE_END)
    target_rule = None
    if rule:
        target_rule = AlertRule.objects.filter(name=rule).first()
        if target_rule is None:
            raise NotFound(MSG_NO_RULE.format(name=rule))
    _check_cluster(cluster)
    silence = Silence(rule=target_rule, cluster=cluster, group_pattern=group_pattern or "*", ends_at=ends_at,
                      reason=reason, created_by=actor.name, created_at=timezone.now())
    params = {"rule": rule, "cluster": cluster, "group_pattern": silence.group_pattern, "ends_at": ends_at.isoformat()}
    with audited(actor=actor, action="alert.silence.create", cluster=cluster, target=f"alert-rule:{rule or '*'}",
                 reason=reason, params=params) as record:
        silence.save()
        record.after = {**params, "id": silence.pk}
    return silence


def alert_silence_end(*, actor: Actor, silence_id: int, reason: str) -> None:
    """Ends a silence now; alerts it held back and still firing are sent at the next evaluation."""
    if not reason.strip():
        raise ConsoleError(MSG_REASON)
    silence = Silence.objects.filter(pk=silence_id, ends_at__gt=timezone.now()).first()
    if silence is None:
        raise NotFound(MSG_NO_SILENCE.format(id=silence_id))
    with audited(actor=actor, action="alert.silence.end", cluster=silence.cluster,
                 target=f"alert-rule:{silence.rule.name if silence.rule else '*'}", reason=reason,
                 before={"id": silence.pk, "ends_at": silence.ends_at.isoformat()}) as record:
        silence.ends_at = timezone.now()
        silence.save(update_fields=["ends_at"])
        record.after = {"id": silence.pk, "ends_at": silence.ends_at.isoformat()}
