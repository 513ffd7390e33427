"""A template key for a log message that ignores what varies between runs and hosts.

    template_key("Failed to connect to 10.0.0.7:9000 after 3 attempts (blk_1073741825_1001)")
        -> "Failed to connect to %ID after N attempts %ID"

Two bundles of the same cluster (an incident and a healthy day) share a message
when their keys are equal, whatever the timestamps, ids, numbers, hex, hosts'
numbers and temporary paths in it: the baseline diff (analyzers/leads.py) and the
leads' counts group records by this key.

The approach is LogJuicer's (github:logjuicer/logjuicer, crates/tokenizer/src/
tokenizer.rs at 5822d6e1): split on blanks, trim quotes and brackets off each
word, replace a word that looks like a uid (hex, digits with separators, no
vowel), a uuid, a hash, a url, a date word or a temporary path by a
placeholder, keep `key=value` keys and tokenise the value, and turn the digits
left in other words into N. A word-wise key is steadier than masking regexes
over the whole line: "hadoop-080-037" and "hadoop-081-159" both become
"hadoop-N-N", and a timestamp at the front becomes placeholders.
"""

from __future__ import annotations

import re

# Everything before the level (timestamps, pids, thread names) varies per line.
_PREFIX = re.compile(
    r"^.*?\b(?:ERROR|FATAL|SEVERE|CRITICAL|WARN(?:ING)?|INFO)\b\s*[:\]-]*\s*"
)
_SPLIT = re.compile(r"(?:[ \t]|\\[nr])+")
_TRIM = "'\",;()[]{}<>\\"
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_DIGITS_TO_ZERO = str.maketrans("123456789", "000000000")
# LogJuicer's uid is `(:*[\[\]0-9a-fA-FxZ,]+[:.-]*)+`: the same words, without the nested
# repetition (which backtracks exponentially on a long hex word that ends otherwise), and only
# with a digit (a word of hex letters is a word: "Added", "dead").
_UID = re.compile(r"[:\[\]0-9a-fA-FxZ,][\[\]0-9a-fA-FxZ,:.\-]*")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HASH = re.compile(r"(?i:(?:hash|sha|md)[0-9]*[:~])|[a-zA-Z0-9_+/\-]{40,}")
_URL = re.compile(r"(?i)(?:https?|ftp|ssh|hdfs|s3a?|gs|file)://")
_DATE_WORDS = frozenset(
    "sunday monday tuesday wednesday thursday friday saturday sun mon tue wed thu fri sat "
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep oct nov dec".split())
_VOWELS = frozenset("aeiouyAEIOUY")
_KEY_VALUE = re.compile(r"([A-Za-z_][\w.\-]*)([=:])(.+)")
# Many keys are computed per range, and most messages differ only in their digits: the key
# depends on where digits are, not on which, so it is cached under the digits-as-zero form.
_CACHE_MAX = 50_000
_cache: dict[str, str] = {}
_word_cache: dict[str, str] = {}     # a word (digits as 0) -> its part of the key


def _no_vowel(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    return bool(letters) and not any(c in _VOWELS for c in letters)


def _word(word: str, depth: int = 0) -> str:
    word = word.strip(_TRIM)
    if not word:
        return ""
    if word.lower() in _DATE_WORDS:
        return "%DATE"
    if _URL.match(word):
        return "%URL"
    if "tmp/" in word or "/tmp" in word or word.startswith("tmp"):
        return "%PATH"
    if _UUID.search(word):
        return "%UID"
    if not word.startswith("/") and _HASH.match(word):
        return "%HASH"
    if any(c.isdigit() for c in word) and (_UID.fullmatch(word) or _no_vowel(word)):
        return "%ID"
    kv = _KEY_VALUE.fullmatch(word) if depth < 3 else None
    if kv:
        return kv.group(1) + kv.group(2) + _word(kv.group(3), depth + 1)
    if "/" in word:
        return "/".join("%ID" if any(c.isdigit() for c in part) else part for part in word.split("/"))
    return _NUMBER.sub("N", word)


def _cached_word(word: str) -> str:
    # Messages differ in how many digits their ids have ("blk_1073741825_1001" and "..._10012"),
    # so the whole-message cache misses; their words repeat, and a word's key depends on it alone.
    found = _word_cache.get(word)
    if found is None:
        found = _word_cache[word] = _word(word)
    return found


def template_key(message: str) -> str:
    """The message's words with the variable ones replaced by placeholders (see module doc)."""
    probe = message.translate(_DIGITS_TO_ZERO)
    found = _cache.get(probe)
    if found is None:
        found = " ".join(w for w in map(_cached_word, _SPLIT.split(probe.strip())) if w)
        if len(_cache) >= _CACHE_MAX or len(_word_cache) >= _CACHE_MAX:
            _cache.clear()
            _word_cache.clear()
        _cache[probe] = found
    return found


def message_part(line: str) -> str:
    """The line after its level word (or the whole line): what the process said."""
    m = _PREFIX.match(line)
    rest = line[m.end():] if m else line
    return rest.strip() or line.strip()
