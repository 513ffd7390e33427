"""Keep a scanning process's resident memory from growing with the bytes it has read.

scan_range reads blocks (8 MiB when measured here, 1 MiB now) and makes a few
same-sized copies of each (the carry joined to the block, the complete lines,
their last cut). glibc serves
such big allocations with mmap and returns them to the system on free, until
a free of an mmapped block raises its threshold (dynamic, up to 32 MiB): from
then on they come from the heap, whose top is rarely trimmed, so a process's
RSS grows with the number of blocks it has scanned. Measured on one file of
the bench's 1 GB bundle: peak RSS 81 MiB after a 16 MiB range, 98 after 64 MiB
(Python's own allocations: 44-45 MiB both); with the threshold fixed at
1 MiB, 73 and 86. A fixed threshold turns the dynamic adjustment off.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3    # glibc's mallopt parameter number (malloc.h)
THRESHOLD = 1024 * 1024
_done = False


def fix_mmap_threshold() -> bool:
    """Once per process; False where there is no glibc mallopt (musl, macOS): nothing to do there."""
    global _done
    if _done:
        return True
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _done = bool(libc.mallopt(M_MMAP_THRESHOLD, THRESHOLD))
    except (OSError, AttributeError):
        _done = False
    return _done
