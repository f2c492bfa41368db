"""The refusals of a call's credentials, shared by console tokens and single sign-on access tokens."""

from __future__ import annotations

from console.errors import ConsoleError


class TokenRefused(ConsoleError):
    """No token, or one that is not (or no longer) valid: 401."""

    status = 401


class RateLimited(ConsoleError):
    status = 429

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
