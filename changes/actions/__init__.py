"""Every change a request can hold, by its action name."""

from __future__ import annotations

from changes.actions import access, connectors, offsets, replays, topics
from changes.registry import ChangeAction
from console.errors import ConsoleError

MSG_UNKNOWN_ACTION = "'{action}' is not a change a request can hold ({known})."
ACTIONS: dict[str, ChangeAction] = {action.name: action
                                    for action in (*offsets.ACTIONS, *topics.ACTIONS, *access.ACTIONS,
                                                   *connectors.ACTIONS, *replays.ACTIONS)}


def action_named(name: str) -> ChangeAction:
    if name not in ACTIONS:
        raise ConsoleError(MSG_UNKNOWN_ACTION.format(action=name, known=", ".join(sorted(ACTIONS))))
    return ACTIONS[name]
