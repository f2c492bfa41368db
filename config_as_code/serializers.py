"""A plan and an apply's result as text for people (the shell's table) and JSON (the shell's --format json and the
API's answer)."""

from __future__ import annotations

import json

from config_as_code.models import AppliedConfig
from config_as_code.plan import Plan

SIGNS = {"create": "+", "change": "~", "delete": "-"}


def _short(value) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def plan_lines(plan: Plan) -> list[str]:
    lines = []
    for change in plan.changes:
        sign = SIGNS[change.action]
        note = "  (kept: deletes are off; --delete applies them)" if change.skipped else ""
        detail = {"create": _short(change.after), "delete": "",
                  "change": f"{_short(change.before)} -> {_short(change.after)}"}[change.action]
        lines.append(f"{sign} {change.section:<15} {change.key}  {detail}{note}".rstrip())
        if change.problem:
            lines.append(f"    problem: {change.problem}")
    counts = plan.counts()
    if not plan.changes:
        lines.append("No change: the cluster matches the file.")
    lines.append(f"Plan: {counts['create']} to create, {counts['change']} to change, {counts['delete']} to delete"
                 + (f", {counts['skipped']} delete(s) kept" if counts["skipped"] else "") + ".")
    for problem in plan.problems:
        lines.append(f"Problem: {problem}")
    if plan.applicable and not plan.problems:
        lines.append(f"To apply exactly this plan: --if-unchanged {plan.fingerprint}"
                     + (" --delete" if plan.allow_deletes else ""))
    return lines


def applied_json(plan: Plan, applied: AppliedConfig) -> dict:
    return {"applied": applied.changes, "fingerprint": plan.fingerprint, "change_set": str(applied.change_set),
            "applied_at": applied.applied_at.isoformat(), "applied_by": applied.applied_by,
            "changes": [c.as_json() for c in plan.applicable]}
