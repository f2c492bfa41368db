from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser


@dataclass(frozen=True)
class Actor:
    """Who acts and from where; every mutating service takes one as `actor=`."""

    user: AbstractBaseUser | None
    source: str  # web, cli or system
    remote_addr: str | None = None

    @property
    def name(self) -> str:
        return self.user.get_username() if self.user is not None else self.source

    @classmethod
    def system(cls) -> Actor:
        return cls(user=None, source="system")

    @classmethod
    def from_request(cls, request) -> Actor:
        return cls(user=request.user, source="web", remote_addr=request.META.get("REMOTE_ADDR") or None)
