from django.conf import settings
from django.db import models


class SsoIdentity(models.Model):
    """Links a console user to one identity of the company's OpenID Connect provider (issuer + subject, the only
    pair an IdP promises never to reuse). The user's roles are re-derived from the claims at every login."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="sso_identity")
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    email = models.CharField(max_length=254, blank=True)
    role_claims = models.JSONField(default=list, blank=True)  # the claim's values at the last login
    last_login_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_unique")]

    def __str__(self) -> str:
        return f"{self.user.get_username()} ({self.issuer} {self.subject})"
