"""The JSON of `manage.py alerts list --format json`, which the API answers too."""

from __future__ import annotations


def alerts_json(rules, alerts, silences) -> dict:
    return {
        "rules": [{"name": r.name, "kind": r.kind, "cluster": r.cluster, "groups": r.group_pattern,
                   "when": r.condition, "webhook": r.webhook, "emails": r.emails} for r in rules],
        "open": [{"rule": a.rule.name, "state": a.state, "cluster": a.cluster, "group": a.group,
                  "reason": a.reason, "since": a.since.isoformat(), "sent": sorted(a.sent_firing)} for a in alerts],
        "silences": [{"id": s.pk, "rule": s.rule.name if s.rule else "", "cluster": s.cluster,
                      "groups": s.group_pattern, "until": s.ends_at.isoformat(), "reason": s.reason}
                     for s in silences]}
