"""Load runbook files (runbooks/<slug>.md) and the symptom library
(runbooks/symptoms/<id>.yaml); see runbooks/README.md.

Plain Python: the CLI and the Django sync command both call load_runbooks().
A runbook lists the symptoms it uses by id, with its own role and weight;
the definition (patterns, captures, examples) lives once in the library.
`Runbook.meta` is the front matter with each symptom's definition merged in
(the form the app stores as JSON); `Runbook.spec` is the same typed, with
durations parsed (analyzers/runbook_spec.py), the form the engine reads;
`dump_runbook` writes the file form back.
Validation is strict on purpose: an unknown key is usually a typo that would
silently disable a signature. Every problem of a file is reported at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from analyzers.runbook_checks import (  # noqa: F401  (RunbookError: the loader's error)
    Problems, RunbookError, check_runbook_meta, check_symptom_definition,
)
from analyzers.runbook_links import link_problems
from analyzers.runbook_spec import RunbookSpec, runbook_spec
from analyzers.runbook_vocabulary import SYMPTOM_DEF_KEYS

SYMPTOMS_DIR = "symptoms"
Library = dict[str, dict[str, Any]]  # symptom id -> definition (id, title, patterns|fact, ...)


@dataclass
class Runbook:
    slug: str
    meta: dict[str, Any]  # symptoms resolved: definition + this runbook's usage
    body: str
    path: str = ""
    warnings: list[str] = field(default_factory=list)
    spec: RunbookSpec | None = None   # meta typed, as the engine reads it (set by parse_runbook)

    @property
    def title(self) -> str:
        return self.meta["title"]

    @property
    def symptoms(self) -> list[dict[str, Any]]:
        return self.meta["symptoms"]


@dataclass
class Catalog:
    runbooks: dict[str, Runbook] = field(default_factory=dict)
    symptoms: Library = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def symptom_users(self) -> dict[str, list[str]]:
        """Symptom id -> slugs that list it as required or supporting."""
        users: dict[str, list[str]] = {}
        for rb in self.runbooks.values():
            for s in rb.symptoms:
                if s.get("role", "supporting") != "excluding":
                    users.setdefault(s["id"], []).append(rb.slug)
        return users

    def symptom_runbooks(self) -> dict[str, list[str]]:
        """Symptom id -> every slug that lists it, whatever the role."""
        out: dict[str, list[str]] = {sid: [] for sid in self.symptoms}
        for rb in self.runbooks.values():
            for s in rb.symptoms:
                out.setdefault(s["id"], []).append(rb.slug)
        return out


# libyaml's safe loader (PyYAML's C binding) reads the catalog ten times faster than
# the pure-Python one, in every process that loads it (CLI, worker, sync, tests), and
# gives the same data for every shipped file (tests/runbooks/test_catalog.py checks).
# A text it refuses is read again by the Python loader: its result or its error
# message is what the loader always gave.
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(text: str, path: str) -> Any:
    try:
        return yaml.load(text, Loader=_FAST_LOADER)  # noqa: S506 (a safe loader)
    except yaml.YAMLError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RunbookError(f"{path}: invalid YAML: {exc}") from None


def split_front_matter(text: str, path: str = "<text>") -> tuple[dict[str, Any], str]:
    if not text.startswith("---"):
        raise RunbookError(f"{path}: does not start with '---' (YAML front matter)")
    parts = re.split(r"^---\s*$", text, maxsplit=2, flags=re.M)
    if len(parts) < 3:
        raise RunbookError(f"{path}: front matter is not closed by a '---' line")
    meta = _load_yaml(parts[1], path)
    if not isinstance(meta, dict):
        raise RunbookError(f"{path}: front matter must be a mapping")
    return meta, parts[2].lstrip("\n")


# --- the symptom library ------------------------------------------------------

def parse_symptom(text: str, path: str = "<text>", expected_id: str | None = None) -> dict[str, Any]:
    """One library file -> its definition; RunbookError lists every problem."""
    definition = _load_yaml(text, path)
    p = Problems(path)
    check_symptom_definition(definition, p, expected_id)
    p.raise_if_any()
    return definition


def dump_symptom(definition: dict[str, Any]) -> str:
    ordered = {k: definition[k] for k in
               ("id", "title", "description", "look_in", "patterns", "fact", "captures", "level", "examples", "sources")
               if k in definition}
    return yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, width=4096)


def _read_library(directory: Path) -> tuple[Library, list[str]]:
    """The valid symptom files of `directory`, and the problems of the others.
    An invalid file still counts as known, so its users are not also told
    that the symptom does not exist."""
    library: Library = {}
    errors: list[str] = []
    for p in sorted(directory.glob("*.yaml")) if directory.is_dir() else []:
        try:
            library[p.stem] = parse_symptom(p.read_text(encoding="utf-8"), str(p), expected_id=p.stem)
        except RunbookError as exc:
            errors.extend(exc.problems)
            library[p.stem] = {"id": p.stem, "title": p.stem, "invalid": True}
    return library, errors


def resolve_symptoms(uses: list[dict[str, Any]], library: Library) -> list[dict[str, Any]]:
    """A runbook's symptom uses with their library definitions merged in."""
    return [{**library.get(u["id"], {}), **u} for u in uses]


def symptom_uses(meta: dict[str, Any]) -> dict[str, Any]:
    """The file form of a (resolved) front matter: symptoms by id and usage only."""
    front = dict(meta)
    front["symptoms"] = [
        {k: v for k, v in s.items() if k == "id" or k not in SYMPTOM_DEF_KEYS} for s in meta.get("symptoms") or []
    ]
    return front


# --- runbooks -----------------------------------------------------------------

def parse_runbook(text: str, path: str = "<text>", expected_slug: str | None = None, *, library: Library) -> Runbook:
    """One runbook file, resolved against a symptom library (the files' in
    load_runbooks, the database's in the app)."""
    meta, body = split_front_matter(text, path)
    p = Problems(path)
    check_runbook_meta(meta, p, library)
    if expected_slug is not None and meta.get("slug") != expected_slug:
        p.error("slug", f"'{meta.get('slug')}' does not match the file name '{expected_slug}'")
    p.raise_if_any()
    meta = dict(meta)
    meta["symptoms"] = resolve_symptoms(meta["symptoms"], library)
    return Runbook(slug=meta["slug"], meta=meta, body=body, path=path, warnings=p.warnings, spec=runbook_spec(meta))


def dump_runbook(meta: dict[str, Any], body: str) -> str:
    """The inverse of parse_runbook: front matter (symptoms by id) + body."""
    front = yaml.safe_dump(symptom_uses(meta), sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{front}---\n{body}"


def load_runbooks(directory: str | Path) -> Catalog:
    """Every runbook of `directory` and its symptoms/ library, all problems
    of all files in one RunbookError."""
    directory = Path(directory)
    library, errors = _read_library(directory / SYMPTOMS_DIR)
    catalog = Catalog(symptoms=library)
    for p in sorted(p for p in directory.glob("*.md") if p.name.lower() != "readme.md"):
        try:
            rb = parse_runbook(p.read_text(encoding="utf-8"), str(p), expected_slug=p.stem, library=library)
        except RunbookError as exc:
            errors.extend(exc.problems)
            continue
        catalog.runbooks[rb.slug] = rb
        catalog.warnings.extend(rb.warnings)
    if errors:
        raise RunbookError("\n".join(errors), errors)
    check_catalog(catalog, library_dir=str(directory / SYMPTOMS_DIR))
    return catalog


def check_catalog(catalog: Catalog, library_dir: str = f"runbooks/{SYMPTOMS_DIR}") -> None:
    """Cross-file checks: differentials and leads_to links name runbooks that
    exist, and the links rank no runbook above itself; library symptoms that no
    runbook uses are reported as warnings."""
    errors = [
        f"{rb.path}: differential names unknown runbook '{d['slug']}'"
        for rb in catalog.runbooks.values() for d in rb.meta.get("differential") or []
        if d["slug"] not in catalog.runbooks
    ]
    errors += link_problems({s: rb.meta for s, rb in catalog.runbooks.items()},
                            {s: rb.path for s, rb in catalog.runbooks.items()})
    if errors:
        raise RunbookError("\n".join(errors), errors)
    for sid, slugs in catalog.symptom_runbooks().items():
        if not slugs:
            catalog.warnings.append(f"{library_dir}/{sid}.yaml: no runbook uses this symptom")


if __name__ == "__main__":  # python -m analyzers.runbooks [DIR]: validate, one line per problem
    import sys

    try:
        cat = load_runbooks(sys.argv[1] if len(sys.argv) > 1 else "runbooks")
    except RunbookError as exc:
        print("\n".join(exc.problems), file=sys.stderr)
        sys.exit(1)
    for w in cat.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(f"{len(cat.runbooks)} runbooks, {len(cat.symptoms)} symptoms OK")
