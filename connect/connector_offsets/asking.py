"""A change of a connector's offsets on a protected cluster, asked for instead of run: the page, the shell and the
API make the change request here from the preview the person saw (the entries it resolved, or the reset), after
the checks the service would make first, so the request holds the plan they confirmed."""

from __future__ import annotations

from changes.actions import connectors as connector_changes
from changes.guard import is_protected
from changes.models import ChangeRequest
from changes.proposals import propose_if_protected
from connect.connector_offsets.preview import OffsetsPreview
from connect.connector_offsets.services import MSG_CONFIRM, MSG_MOVED
from console.audit.actor import Actor
from console.audit.guarded import change_checked
from console.errors import Conflict


def offsets_change_proposal(*, actor: Actor, cluster: str, preview: OffsetsPreview, reset: bool, reason: str,
                            confirm: str, expected_fingerprint: str | None, revert_of: int | None = None
                            ) -> ChangeRequest | None:
    """The request made for this change when the connector is protected; None when the caller runs the service
    (which makes its own checks)."""
    if reset:
        action = connector_changes.RESET
        kwargs = connector_changes.reset_kwargs(connect=preview.connect, connector=preview.connector)
    else:
        action = connector_changes.ALTER
        kwargs = connector_changes.alter_kwargs(preview, revert_of=revert_of)
    if not is_protected(cluster, connector_changes.connector_target(preview.connect, preview.connector)):
        return None
    change_checked(confirm=confirm, name=preview.connector, what="connector", reason=reason,
                   message=MSG_CONFIRM.format(name=preview.connector))
    if expected_fingerprint is not None and expected_fingerprint != preview.fingerprint:
        # The request would keep a plan made from offsets the person did not see.
        raise Conflict(MSG_MOVED.format(name=preview.connector))
    return propose_if_protected(actor=actor, action=action, cluster=cluster, kwargs=kwargs, reason=reason)
