"""What the PATHs of one bundle gave -> the StagedBundle: the folders that only wrap a PATH's
files dropped, several PATHs merged at the root (each under its own name if their paths
collide), and each file's host, component and kind inferred (analyzers/hosts.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from analyzers import layouts
from analyzers.hosts import describe_file, strip_wrapper, wrapper_depth
from analyzers.layouts.folders import folder_sections
from analyzers.model import BundleError, BundleFile, Skipped, StagedBundle


@dataclass
class PathItem:
    """What one PATH argument gave: (bundle path, disk path, size, encoding, section) and skips.

    section: the collector-layout section (layouts.Section) a file was split from, else None.
    """
    prefix: str
    files: list[tuple[str, str, int, str, layouts.Section | None]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def unwrap(self) -> None:
        """Drop the folders that only wrap this PATH's files (hosts.wrapper_depth).

        A file split from a collector's stream counts as the stream: "app.log/dn1/c_01/stderr"
        sits in no folder "app.log/dn1/"."""
        depth = wrapper_depth([_stream_path(rel, section) for rel, _, _, _, section in self.files]
                              + [s.path for s in self.skipped])
        if depth and self.files:                  # with nothing to analyse, name skips in full
            self.files = [(strip_wrapper(rel, depth), *rest) for rel, *rest in self.files]
            self.skipped = [Skipped(strip_wrapper(s.path, depth), s.reason) for s in self.skipped]


def _stream_path(rel: str, section: layouts.Section | None) -> str:
    return rel[: -len(section.name) - 1] if section is not None else rel


def assemble(items: list[PathItem], notes: list[str], damage: list[str]) -> StagedBundle:
    # Several PATHs are merged at the root unless their paths collide; then each gets its name.
    for item in items:
        item.unwrap()
    names = Counter(rel for item in items for rel in {f[0] for f in item.files})
    collide = any(n > 1 for n in names.values())
    prefixes: Counter[str] = Counter()
    out = StagedBundle(notes=notes)
    placed = folder_sections([f[0] for item in items for f in item.files])
    for item in items:
        prefixes[item.prefix] += 1
        prefix = item.prefix if prefixes[item.prefix] == 1 else f"{item.prefix}-{prefixes[item.prefix]}"
        for rel, disk, size, encoding, section in item.files:
            section = section or placed.get(rel)
            path = f"{prefix}/{rel}" if collide else rel
            host, component, kind = describe_file(path, disk, section)
            out.files.append(BundleFile(path, disk, size, host, component, kind, encoding))
        out.skipped += [Skipped(f"{prefix}/{s.path}" if collide else s.path, s.reason) for s in item.skipped]
    out.total_bytes = sum(f.size for f in out.files)
    if not out.files:
        if damage:
            raise BundleError(damage[0])
        out.notes.append("no log files found")
    return out
