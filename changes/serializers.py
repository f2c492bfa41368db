"""The JSON of `manage.py changes ... --format json`, which the API answers too."""

from __future__ import annotations

from changes.models import ChangeRequest
from changes.selectors import status_now


def change_json(change: ChangeRequest, *, plan: bool = True) -> dict:
    data = {
        "id": change.pk, "cluster": change.cluster, "action": change.action, "target": change.target,
        "status": status_now(change), "reason": change.reason, "requested_by": change.requested_by_name,
        "requested_at": change.requested_at.isoformat(), "expires_at": change.expires_at.isoformat(),
        "approvals_required": change.approvals_required,
        "approvals": [{"by": a.user_name, "at": a.approved_at.isoformat(), "reason": a.reason}
                      for a in change.approvals.all()],
        "decided_by": change.decided_by_name, "decision_reason": change.decision_reason,
        "break_glass": change.break_glass, "fingerprint": change.fingerprint, "error": change.error,
        "correlation_id": str(change.correlation_id),
    }
    if plan:
        data.update(kwargs=change.kwargs, plan=change.plan, result=change.result)
    return data
