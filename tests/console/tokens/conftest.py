import pytest


@pytest.fixture
def make_token(db):
    """make_token(user, role=..., **options) -> (ApiToken, secret), made through the service as that user."""
    from console.accounts.roles import Role
    from console.audit.actor import Actor
    from console.tokens.services import token_create

    def make(user, *, role: Role = Role.VIEWER, days: int = 30, **options):
        return token_create(actor=Actor(user=user, source="web"), name=options.pop("name", f"t-{user.username}"),
                            role=role, expires_days=days, **options)

    return make
