"""What every collector layout shares: sections, and routing lines that no prefix claims."""

from __future__ import annotations

from dataclasses import dataclass

# A "host" or "service" prefix that is really a level word belongs to a log layout, not a collector.
LEVEL_WORDS = {"TRACE", "DEBUG", "INFO", "NOTICE", "WARN", "WARNING", "ERROR", "FATAL", "SEVERE", "CRITICAL"}


@dataclass(frozen=True)
class Section:
    name: str                  # path under the stream's own path: "dn1/container_..._000002/stderr"
    host: str | None
    component: str | None = None   # None: from the name and the content, like any file


class Demuxer:
    """Feed lines (with their line ends) in order; each comes back with the section it belongs to.

    feed() returns a list: usually one (section, text), none for a line that was only a header,
    two when a held-back line turns out to be content after all.
    """

    label = ""                 # the command that makes this layout, for notes
    preamble = Section("collector-output.log", None)

    def __init__(self) -> None:
        self.current: Section | None = None
        self.known: dict[tuple, Section] = {}      # interleaved streams come back to a section often

    def section(self, key: tuple, make) -> Section:
        """The section for key (pod and container, service, host and unit), made once."""
        found = self.known.get(key)
        if found is None:
            found = self.known[key] = make()
        return found

    @classmethod
    def recognises(cls, lines: list[str]) -> bool:
        raise NotImplementedError

    def feed(self, line: str) -> list[tuple[Section, str]]:
        raise NotImplementedError

    def other(self, line: str) -> list[tuple[Section, str]]:
        """A line no prefix claims: it continues whatever came before it."""
        return [((self.current or self.preamble), line)]


def share(lines: list[str], test, minimum: float = 0.8, at_least: int = 2) -> bool:
    """Do most non-blank lines pass `test`? (at least `at_least` of them)"""
    body = [ln for ln in lines if ln.strip()]
    hits = sum(1 for ln in body if test(ln))
    return hits >= at_least and hits >= minimum * len(body)


def safe_part(name: str) -> str:
    """A path component from a name a collector printed: no separators, no dot-dot."""
    cleaned = "".join(c if c.isalnum() or c in "-_.@:" else "_" for c in name.strip())[:200]
    return cleaned.strip(".") or "_"
