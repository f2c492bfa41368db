from django.db import migrations

ROLES = ("viewer", "operator", "admin")


def create_roles(apps, schema_editor):
    group_model = apps.get_model("auth", "Group")
    for name in ROLES:
        group_model.objects.get_or_create(name=name)


def remove_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [("auth", "0012_alter_user_first_name_max_length")]
    operations = [migrations.RunPython(create_roles, remove_roles)]
