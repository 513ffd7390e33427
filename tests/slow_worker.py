"""`python -m tests.slow_worker worker ...`: a Celery worker whose analyses of
bundles named slow-* pause KB_TEST_STAGE_DELAY seconds between unpacking and
scanning (lease held, staged files on disk), so a fault test can kill or stop
the worker mid-analysis. tests.celery_harness.Worker starts this instead of
`python -m celery` when that variable is set.

The pause wraps kb.services.analyses.stage_logs in the worker's main process
before it forks its pool, so production code carries no test hook.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def install_stage_delay(seconds: float) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kb.settings")
    django.setup()
    from kb.services import analyses

    stage = analyses.stage_logs

    def slow_stage_logs(paths, workdir, limits, *, label=None):
        staged = stage(paths, workdir, limits, label=label)
        if Path(paths[0]).name.startswith("slow-"):   # the upload, under its own (safe) name
            time.sleep(seconds)
        return staged

    analyses.stage_logs = slow_stage_logs


if __name__ == "__main__":
    install_stage_delay(float(os.environ["KB_TEST_STAGE_DELAY"]))
    from celery.__main__ import main

    sys.argv = ["celery", *sys.argv[1:]]
    sys.exit(main())
