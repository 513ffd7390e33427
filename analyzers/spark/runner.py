"""The Spark RangeRunner: the engine's ByteRanges scanned in Spark tasks.

What the engine gives a runner is a list of ByteRanges (byte ranges of staged
files); what it wants back is one RangeResult per task, in task order,
exactly what run_ranges_local would return. This runner:

1. splits each task into pieces of at most `piece_bytes` (64 MiB; less for
   small bundles or many cores, so that every core gets about 4 tasks) and
   packs consecutive small pieces into one partition (so a bundle of 5,000
   small files is not 5,000 Spark tasks at 20-100 ms of overhead each);
2. runs analyzers.scan.scan_range on every piece inside a Python worker. The
   driver compiles the signature set's Hyperscan databases once, serialises
   them (serialised_matcher.matcher_bytes) and broadcasts them with the signatures,
   once per signature set and SparkContext; each Python worker loads them
   once (0.1 ms, not a 0.6 s compile per database) and keeps the matcher in a
   module-level cache keyed by the signature-set hash (worker reuse keeps the
   process, and its matcher, across tasks and analyses);
3. merges the pieces of each task back into one RangeResult: line numbers
   shifted by the lines of the pieces before, the error-line sample cut at the
   same MAX_ERROR_LINES. A range's lines are those whose first byte lies in
   it, so pieces cover each line exactly once and the merge equals one scan
   of the whole range (tests/analyzers/test_spark_engine.py checks it), but
   for the error-line count statistic once sampling kicks in (merge_pieces).

Only the matched lines travel back to the driver; files are read by the
executors themselves, so they must see the same paths as the driver (which
stages the bundle and reads the structured files for facts): in local and
single-machine standalone modes they do; on a real cluster BUNDLES_DIR (and
the staging directory) must be shared storage mounted at the same path.

Trade-off: this is the RDD API (parallelize + mapPartitions + an accumulator
for progress). Spark Connect is DataFrame-only (no RDD, no SparkContext), so
this runner needs a classic session; on Connect the same scan would have to
go through mapInPandas/mapInArrow over a DataFrame of ranges.
"""

from __future__ import annotations

import functools
import threading
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence

from analyzers.lead_scan import MAX_LEAD_KEYS, MAX_STOPS
from analyzers.scan import MAX_ERROR_LINES, RANGE_BYTES, RangeResult, scan_range
from analyzers.serialised_matcher import matcher_bytes, signature_set_hash
from analyzers.signatures import Signature
from analyzers.spark import wire

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from analyzers.engine import ByteRange

# Bytes one Spark task scans, at most; the engine's RANGE_BYTES, so one range is
# one piece. Smaller pieces cost more than Spark's per-task overhead
# (20-100 ms of CPU a task here): each range samples up to MAX_ERROR_LINES
# unmatched error lines (decode, header lookup, pickled back), so scanning the
# bench's 1 GB bundle took 2.7 CPU-s in 64 MiB pieces, 3.9 in 16 MiB and 4.9 in
# 8 MiB, before Spark's own costs.
PIECE_BYTES = RANGE_BYTES
# Below this a piece is not worth its own Spark task.
MIN_PIECE_BYTES = 1024 * 1024
POLL_SECONDS = 0.25

# (task index, piece index, path, disk path, start, end): plain tuples, so that
# executors need not import analyzers.engine to unpickle them.
Piece = tuple[int, int, str, str, int, int]
Progress = Callable[[int, int], None]   # (bytes scanned, bytes to scan)


class SparkRangeRunner:
    """A RangeRunner (analyzers.engine) that scans ranges in Spark tasks.

    `piece_bytes`: the most one Spark task scans (default: between
    MIN_PIECE_BYTES and PIECE_BYTES, aiming at >= 4 tasks per core).
    `progress(done, total)`: called from the calling thread, in bytes, as
    Spark tasks finish. If the calling thread is interrupted (KeyboardInterrupt,
    Celery's SoftTimeLimitExceeded), the Spark job is cancelled before the
    exception propagates.
    """

    def __init__(self, spark: SparkSession, *, piece_bytes: int | None = None,
                 progress: Progress | None = None, record_start: Callable[[str], bool] | None = None):
        self.spark = spark
        self.piece_bytes = piece_bytes
        self.progress = progress
        self._record_start = record_start   # None: analyzers.timestamps.is_record_start, on the executor

    def __call__(self, tasks: Sequence[ByteRange], signatures: list[Signature],
                 max_line: int) -> list[RangeResult]:
        if not tasks:
            return []
        sc = self.spark.sparkContext
        total = sum(t.end - t.start for t in tasks)
        piece_bytes = self.piece_bytes or auto_piece_bytes(total, sc.defaultParallelism)
        partitions = pack(split(tasks, piece_bytes), piece_bytes)
        # Largest first: the last wave of tasks is then the short one.
        partitions.sort(key=lambda part: -sum(p[5] - p[4] for p in part))
        done = sc.accumulator(0)
        digest, shipped = shipped_signatures(sc, signatures)
        scan = functools.partial(scan_partition, digest, shipped, max_line, done, self._record_start)
        rdd = sc.parallelize(partitions, numSlices=len(partitions)).mapPartitions(scan)
        scanned = self._collect(sc, rdd, done, total)
        return merge(tasks, scanned)

    def _collect(self, sc, rdd, done, total: int) -> list[tuple[int, int, bytes]]:
        """rdd.collect() in a helper thread, so this thread can report progress and cancel."""
        from pyspark.util import InheritableThread

        group = f"kb-scan-{uuid.uuid4().hex[:12]}"
        box: dict[str, object] = {}

        def run() -> None:
            try:
                sc.setJobGroup(group, "kb: scan byte ranges", interruptOnCancel=True)
                box["rows"] = rdd.collect()
            except BaseException as exc:   # noqa: BLE001 - re-raised in the calling thread
                box["error"] = exc

        worker = InheritableThread(target=run, daemon=True)
        worker.start()
        reported = -1
        try:
            while worker.is_alive():
                worker.join(POLL_SECONDS)
                if self.progress and done.value != reported:
                    reported = done.value
                    self.progress(reported, total)
        except BaseException:
            sc.cancelJobGroup(group)
            worker.join(30)
            raise
        if "error" in box:
            raise box["error"]   # type: ignore[misc]
        if self.progress and reported != total:
            self.progress(total, total)
        return box["rows"]   # type: ignore[return-value]


def auto_piece_bytes(total: int, parallelism: int) -> int:
    """Aim at >= 4 Spark tasks per core (small bundles, big clusters), each between
    MIN_PIECE_BYTES and PIECE_BYTES."""
    return max(MIN_PIECE_BYTES, min(PIECE_BYTES, -(-total // (4 * max(1, parallelism)))))


def split(tasks: Sequence[ByteRange], piece_bytes: int) -> list[Piece]:
    """Each task cut into consecutive pieces of at most piece_bytes, in task order."""
    out: list[Piece] = []
    for i, t in enumerate(tasks):
        starts = range(t.start, t.end, piece_bytes) if t.end > t.start else [t.start]
        for k, s in enumerate(starts):
            out.append((i, k, t.path, t.disk_path, s, min(s + piece_bytes, t.end)))
    return out


def pack(pieces: Iterable[Piece], target: int) -> list[list[Piece]]:
    """Consecutive pieces grouped into partitions of about `target` bytes."""
    parts: list[list[Piece]] = []
    size = 0
    for p in pieces:
        n = p[5] - p[4]
        if not parts or (size + n > target and parts[-1]):
            parts.append([])
            size = 0
        parts[-1].append(p)
        size += n
    return parts


# (SparkContext's application id, signature-set hash) -> Broadcast of (signatures, matcher bytes).
_SHIPPED: dict[tuple[str, str], object] = {}
_SHIPPING = threading.Lock()
SHIPPED_KEPT = 4   # signature sets broadcast at a time (teams with edited symptoms each have their own)
# In a Python worker: signature-set hash -> its loaded Matcher (one at a time, like matcher_for).
_WORKER_MATCHER: dict[str, object] = {}


def shipped_signatures(sc, signatures: list[Signature]) -> tuple[str, object]:
    """The signature set and its compiled matcher, broadcast once per set and SparkContext.

    Broadcast, not in each task's closure: an executor fetches it once and
    every Python worker reads it from the executor's block store. The driver
    compiles (0.6 s per database) once per set and SparkContext."""
    digest = signature_set_hash(signatures)
    key = (sc.applicationId, digest)
    with _SHIPPING:   # a warm-up thread and a task may ship the same set at once: compile once
        return digest, _ship(sc, key, signatures)


def _ship(sc, key: tuple[str, str], signatures: list[Signature]):
    if key not in _SHIPPED:
        for old in [k for k in _SHIPPED if k[0] != sc.applicationId]:
            del _SHIPPED[old]   # a stopped context's: its broadcasts went with it
        while len(_SHIPPED) >= SHIPPED_KEPT:
            _SHIPPED.pop(next(iter(_SHIPPED))).unpersist()
        _SHIPPED[key] = sc.broadcast((signatures, matcher_bytes(signatures)))
    return _SHIPPED[key]


def worker_matcher(digest: str, shipped):
    """This Python worker's matcher for the broadcast signature set, loaded on first use."""
    from analyzers.serialised_matcher import matcher_from_bytes

    matcher = _WORKER_MATCHER.get(digest)
    if matcher is None:
        signatures, blob = shipped.value
        matcher = matcher_from_bytes(signatures, blob)
        _WORKER_MATCHER.clear()
        _WORKER_MATCHER[digest] = matcher
    return matcher


def scan_partition(digest: str, shipped, max_line: int, done, record_start,
                   partitions: Iterator[list[Piece]]) -> Iterator[tuple[int, int, bytes]]:
    """Runs on an executor, in a (reused) Python worker."""
    from analyzers.heap import fix_mmap_threshold

    if record_start is None:
        from analyzers.timestamps import is_record_start as record_start
    fix_mmap_threshold()   # the worker's RSS then does not grow with the blocks it has read
    matcher = worker_matcher(digest, shipped)
    for part in partitions:
        for task_idx, piece_idx, path, disk_path, start, end in part:
            result = scan_range(path, disk_path, start, end, matcher, max_line, record_start)
            done.add(end - start)
            yield task_idx, piece_idx, wire.encode(result)   # small and cheap to unpickle (wire.py)


def merge(tasks: Sequence[ByteRange], scanned: Iterable[tuple[int, int, RangeResult | bytes]]) -> list[RangeResult]:
    """The pieces of each task (RangeResults, or as wire.encode sent them) joined into
    the RangeResult one scan of the task gives."""
    pieces: list[list[tuple[int, RangeResult]]] = [[] for _ in tasks]
    for task_idx, piece_idx, result in scanned:
        pieces[task_idx].append((piece_idx, wire.decode(result) if isinstance(result, bytes) else result))
    out = []
    for t, parts in zip(tasks, pieces):
        parts.sort(key=lambda p: p[0])
        if len(parts) == 1:
            out.append(parts[0][1])
            continue
        out.append(merge_pieces(t.path, t.start, [r for _, r in parts]))
    return out


def merge_pieces(path: str, start: int, parts: Sequence[RangeResult]) -> RangeResult:
    """One RangeResult from consecutive pieces of a range.

    Equal to one scan of the range in everything but the error-line counters:
    the sample (`errors`) is the range's first MAX_ERROR_LINES error lines
    either way, but scan_range stops counting error lines a block after its
    sample is full, so `error_count` (a statistic) is exact only when no piece
    filled its sample, and `errors_sampled` says whether one did. Likewise the
    lead records (one per template key, first occurrence first) and their
    counts are exact unless a piece reached MAX_LEAD_LINES (`leads_sampled`).
    A record is kept by the piece holding its first candidate line
    (analyzers/lead_scan.py), so no record comes back twice.
    """
    whole = RangeResult(path=path, start=start)
    offset = 0
    for r in parts:
        # Hits as they are (packed ones stay packed), with the lines of the pieces before.
        if r.hits:
            whole.packed.append((r.hits, offset))
        whole.packed.extend((payload, off + offset) for payload, off in r.packed)
        room = MAX_ERROR_LINES - len(whole.errors)
        whole.errors.extend((ln + offset, text) for ln, text in r.errors[:max(0, room)])
        whole.errors_sampled = whole.errors_sampled or r.errors_sampled or len(r.errors) > room
        whole.error_count += r.error_count
        whole.versions.extend((comp, ver, ln + offset, text) for comp, ver, ln, text in r.versions)
        whole.cut_lines.extend((ln + offset, kept) for ln, kept in r.cut_lines)
        _merge_leads(whole, r, offset)
        whole.lines += r.lines
        whole.bytes += r.bytes
        offset += r.lines
    return whole


def _merge_leads(whole: RangeResult, r: RangeResult, offset: int) -> None:
    """Add a later piece's lead records as one scan would have met them: known keys add up,
    new keys join while the range has room for them."""
    for key, rec in r.leads.items():
        found = whole.leads.get(key)
        if found is not None:
            found.count += rec.count
            found.last_line = rec.last_line + offset
        elif len(whole.leads) < MAX_LEAD_KEYS:
            whole.leads[key] = replace(rec, line_in_range=rec.line_in_range + offset,
                                       last_line=rec.last_line + offset)
        else:
            whole.leads_sampled = True
    whole.lead_lines += r.lead_lines
    whole.leads_sampled = whole.leads_sampled or r.leads_sampled
    whole.stops.extend(ln + offset for ln in r.stops[:max(0, MAX_STOPS - len(whole.stops))])
