import os
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from console.commands import ConsoleCommand


class Command(ConsoleCommand):
    help = (
        "Creates the first admin account unless one exists. Honours DJANGO_SUPERUSER_USERNAME, "
        "DJANGO_SUPERUSER_PASSWORD and DJANGO_SUPERUSER_EMAIL; otherwise generates a password and prints it once."
    )

    def handle(self, *args, **options):
        user_model = get_user_model()
        username = os.environ.get("DJANGO_SUPERUSER_USERNAME", "admin")
        if user_model.objects.filter(username=username).exists():
            self.stdout.write(f"Admin account '{username}' already exists.")
            return
        password = os.environ.get("DJANGO_SUPERUSER_PASSWORD")
        generated = not password
        password = password or secrets.token_urlsafe(12)
        user = user_model.objects.create_superuser(
            username=username, email=os.environ.get("DJANGO_SUPERUSER_EMAIL", ""), password=password
        )
        user.groups.add(Group.objects.get(name="admin"))
        if generated:
            self.stdout.write(self.style.WARNING(
                f"Created admin account '{username}' with password: {password}\n"
                "It is shown only this once; change it at /accounts/password_change/."
            ))
        else:
            self.stdout.write(f"Created admin account '{username}' (password from DJANGO_SUPERUSER_PASSWORD).")
