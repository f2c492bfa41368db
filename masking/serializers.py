"""The JSON of a masking rule, as `manage.py masking list --format json` prints it and the API answers."""

from __future__ import annotations

from masking.models import MaskRule


def mask_rule_json(rule: MaskRule) -> dict:
    return {"id": rule.pk, "topic_pattern": rule.topic_pattern, "selector": rule.selector, "target": rule.target,
            "action": rule.action, "replacement": rule.replacement, "keep_last": rule.keep_last,
            "roles": rule.roles, "created_by": rule.created_by_name}
