"""The Spark engine on a standalone cluster of two worker hosts that have no
checkout (tests/spark_hosts.py): the code reaches them as the shipped zip,
the signatures as a broadcast, the bundle on storage all hosts read; the
findings equal the local engine's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, SEED_BUNDLES
from tests.spark_hosts import multi_host_cluster, venv_python

pytestmark = [pytest.mark.spark, pytest.mark.timeout(600)]

SEED = SEED_BUNDLES / "000-flink-hdfs-openforwrite-after-soft-lockup"

# The driver: the kb host (this checkout). Analyses the bundle on the shared storage,
# staging it there too (executors read the staged files), then asks every executor
# where its analyzers package came from and where it runs.
DRIVER = """
import json, os, sys
from analyzers.engine import analyze_paths
from analyzers.spark import spark_runner
from tests.helpers import runbook_metas
bundle, stage = sys.argv[1], sys.argv[2]
runner, startup = spark_runner()
result = analyze_paths([bundle], runbook_metas(), engine="spark", runner=runner, range_bytes=4096, workdir=stage)
sc = runner.spark.sparkContext

def where(_):
    import os, analyzers
    from analyzers.spark import runner as shipped
    yield {"cwd": os.getcwd(), "analyzers": analyzers.__file__, "pythonpath": os.environ.get("PYTHONPATH", ""),
           "matchers": sorted(type(m).__name__ for m in shipped._WORKER_MATCHER.values())}

probes = sc.parallelize(range(16), 16).mapPartitions(where).collect()
print(json.dumps({"master": sc.master, "findings": result["findings"], "symptoms": result["symptoms"],
                  "probes": probes}))
"""


def test_two_hosts_without_the_checkout_give_the_local_findings(tmp_path):
    from analyzers.engine import analyze_paths
    from tests.helpers import runbook_metas

    local = analyze_paths([str(SEED)], runbook_metas())
    assert local["findings"], "the seed bundle should give findings"
    with multi_host_cluster(tmp_path) as cluster:
        bundle = cluster.shared / "bundle"
        shutil.copytree(SEED, bundle)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.update(SPARK_MASTER=cluster.url, SPARK_LOCAL_IP=cluster.driver_ip, PYSPARK_PYTHON=venv_python(),
                   PYTHONPATH=str(ROOT))   # the driver's own path to its code; executors get the zip
        out = subprocess.run([sys.executable, "-c", DRIVER, str(bundle), str(cluster.shared / "stage")],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=480)
        logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in cluster.logs)
        assert out.returncode == 0, out.stderr[-5000:] + logs
        remote = json.loads(out.stdout.strip().splitlines()[-1])
        executor_dirs = {h: list((h / "work").glob("app-*/*/stderr")) for h in cluster.host_dirs}
    print(f"isolated network: {cluster.isolated_network}; master {cluster.url}")
    assert remote["master"] == cluster.url
    assert all(executor_dirs.values()), f"each host should have run an executor: {executor_dirs}"
    hosts_used = {next(str(h) for h in cluster.host_dirs if p["cwd"].startswith(str(h))) for p in remote["probes"]}
    assert hosts_used == {str(h) for h in cluster.host_dirs}, remote["probes"]
    for probe in remote["probes"]:
        assert ".zip" in probe["analyzers"] and not probe["analyzers"].startswith(str(ROOT)), probe
        # Only the Python installation (pyspark's own zips; .venv sits in a CI clone's
        # checkout) may be on the path, never the checkout's code.
        python_env = str(Path(sys.prefix).resolve())
        code = [p for p in probe["pythonpath"].split(":") if p and not p.startswith(python_env)]
        assert not [p for p in code if p.startswith(str(ROOT))], probe
    assert any(p["matchers"] == ["_LoadedMatcher"] for p in remote["probes"]), remote["probes"]
    assert remote["findings"] == local["findings"]
    assert remote["symptoms"] == local["symptoms"]
