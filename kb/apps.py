from django.apps import AppConfig


class KbConfig(AppConfig):
    name = "kb"
    default_auto_field = "django.db.models.BigAutoField"
