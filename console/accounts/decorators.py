from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from console.accounts.roles import Role, require_role


def role_required(role: Role) -> Callable:
    """Refuses the view (403 through the error middleware) unless the user holds `role`."""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            require_role(request.user, role)
            return view(request, *args, **kwargs)

        wrapper.required_role = role  # lets a test assert that every view declares its role
        return wrapper

    return decorator
