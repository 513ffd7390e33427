"""The Celery app. Configuration comes from Django settings (CELERY_ prefix)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kb.settings")


def _closed_redis_channel_raises_a_connection_error() -> None:
    """Work around kombu 5.7's Redis transport under Celery 5.7 (reliability check R6,
    tests/reliability/test_broker_faults.py): when Redis goes away while a late-acked
    task runs, the consumer collects the broken connection and then closes it; the
    close asks the Redis channel to restore its unacked messages through a transport
    that is already gone, `_connparams` raises AttributeError ('NoneType' object has
    no attribute 'hostname'), Celery calls that unrecoverable and the worker exits.
    Raising the connection error it stands for lets Celery reconnect instead. Nothing
    is lost: the message stays in Redis' unacked hash (restored after the visibility
    timeout) and an analysis' lease makes that redelivery harmless."""
    from kombu.transport import redis as kombu_redis
    from redis.exceptions import ConnectionError as RedisConnectionError

    original = kombu_redis.Channel._connparams

    def _connparams(self, asynchronous=False):
        if self.connection.client is None:
            raise RedisConnectionError("the broker connection is closed")
        return original(self, asynchronous=asynchronous)

    kombu_redis.Channel._connparams = _connparams


_closed_redis_channel_raises_a_connection_error()

app = Celery("kb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
