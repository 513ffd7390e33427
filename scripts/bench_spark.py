"""The Spark engine against its baselines (issue 16), for scripts/bench.py.

On one bundle, in one run: ripgrep with 2 threads and the same patterns, the
local engine (one process), the Spark engine's first analysis in a new
session (session start, including its warm-up, reported apart) and a warm
one; the Spark driver tree's peak RSS on each --rss-mb bundle. Targets on 2
cores: warm <= 1.5x ripgrep's time and >= 1.6x the local engine's
throughput; first <= 1.3x warm; peak RSS flat from 100 MB to 1 GB.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

MB = 1_000_000
TARGET_VS_RG = 1.5       # warm Spark scan time <= 1.5x ripgrep's
TARGET_VS_LOCAL = 1.6    # warm Spark throughput >= 1.6x the local engine's
TARGET_FIRST = 1.3       # first analysis in a new session <= 1.3x a warm one
RG_THREADS = 2


def ripgrep(bundle: Path, patterns: list[str]) -> dict | None:
    """`rg -c` with every pattern on RG_THREADS threads, patterns it cannot parse left out."""
    if shutil.which("rg") is None:
        return None
    usable = [p for p in patterns if _rg_parses(p)]
    with tempfile.NamedTemporaryFile("w", suffix=".patterns", delete=False) as fh:
        fh.write("\n".join(usable) + "\n")
        pattern_file = fh.name
    try:
        cmd = ["rg", "--no-config", "-c", "--no-filename", "-a", "-uuu", "-j", str(RG_THREADS),
               "-f", pattern_file, "--", str(bundle)]
        t0 = time.monotonic()
        out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
        seconds = time.monotonic() - t0
    finally:
        os.unlink(pattern_file)
    if out.returncode > 1:
        raise RuntimeError(out.stderr[-2000:])
    return {"seconds": seconds, "lines": sum(int(x) for x in out.stdout.split()),
            "patterns": len(usable), "skipped": len(patterns) - len(usable)}


def _rg_parses(pattern: str) -> bool:
    proc = subprocess.run(["rg", "--no-config", "-q", "-e", pattern, "--", "/dev/null"], capture_output=True)
    return proc.returncode in (0, 1)


def report(row, rg: dict | None, local: dict, spark: dict, rss: dict[int, dict]) -> None:
    size = spark["bytes"] / MB
    warm, first = spark["scan_seconds"], spark["first_scan_seconds"]
    if rg:
        row(f"ripgrep, {RG_THREADS} threads, same patterns, {size:.0f} MB",
            f"{rg['seconds']:.2f} s, {size / rg['seconds']:.0f} MB/s ({rg['patterns']} patterns"
            f"{', %d rg cannot parse' % rg['skipped'] if rg['skipped'] else ''}; {rg['lines']} lines)")
    else:
        row("ripgrep", "not installed (scripts/system-deps.sh installs it)")
    row(f"local engine, one process, {size:.0f} MB",
        f"{local['scan_seconds']:.2f} s scan, {size / local['scan_seconds']:.0f} MB/s")
    row(f"spark engine, warm (best of {spark['warm_runs']}), {size:.0f} MB",
        f"{warm:.2f} s scan, {size / warm:.0f} MB/s; {spark['seconds']:.2f} s end to end")
    if rg:
        ratio = warm / rg["seconds"]
        row("  warm vs ripgrep (time)", f"{ratio:.2f}x; target <= {TARGET_VS_RG}: {_met(ratio <= TARGET_VS_RG)}")
    speedup = local["scan_seconds"] / warm
    row("  warm vs local engine (throughput)",
        f"{speedup:.2f}x; target >= {TARGET_VS_LOCAL}: {_met(speedup >= TARGET_VS_LOCAL)}")
    row("spark engine, first analysis in a new session",
        f"{first:.2f} s scan ({first / warm:.2f}x warm; target <= {TARGET_FIRST}: {_met(first <= TARGET_FIRST * warm)}); "
        f"{spark['first_seconds']:.2f} s end to end; session start incl. warm-up {spark['startup_seconds']:.1f} s")
    row("  CPU-s of driver+JVM+workers, first / warm / local",
        f"{spark['first_scan_cpu_seconds']:.1f} / {spark['scan_cpu_seconds']:.1f} / {local['scan_cpu_seconds']:.1f}")
    for mb, res in sorted(rss.items()):
        row(f"spark peak RSS, {res['bytes'] / MB:.0f} MB bundle",
            f"{res['tree_hwm_mib']} MiB driver+JVM+workers "
            f"({', '.join(f'{n} {m}' for n, m in res['tree'])}; sum of per-process peaks)")
    if len(rss) > 1:
        low, high = (rss[k]["tree_hwm_mib"] for k in (min(rss), max(rss)))
        row("  peak RSS growth, smallest to largest bundle", f"{high / low:.2f}x ({low} -> {high} MiB)")


def _met(ok: bool) -> str:
    return "MET" if ok else "MISSED"
