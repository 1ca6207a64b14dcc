"""Canonical JSON v2: RFC 8785, the JSON Canonicalization Scheme (JCS).

Hash format 2 (docs/event-log.md) hashes this encoding, because any language
reproduces it: keys sorted by UTF-16 code units, no whitespace, strings with
only the escapes JCS allows, and numbers written as ECMAScript's
``Number.prototype.toString`` writes them (``1``, not ``1.0``; ``1e+21``;
``1e-7``). Python's ``json`` writes floats its own way, which a JavaScript
verifier can't match.

Standard library only, on purpose: ``tools/talekeeper_verify.py`` carries a
copy of this file's functions so a third party needs nothing else.
"""

from __future__ import annotations

import math
import re
from typing import Any

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_MAX_SAFE_INTEGER = 2**53
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]')


def jcs(value: Any) -> bytes:
    """The RFC 8785 encoding of a JSON value (dicts, lists, str, int, float, bool, None), as UTF-8."""
    return _encode(value).encode("utf-8")


def _encode(value: Any) -> str:
    kind = type(value)  # the common exact types first: this runs for every event appended
    if kind is str:
        return _string(value)
    if kind is dict:
        return _object(value)
    if kind is list:
        return "[" + ",".join([_encode(v) for v in value]) + "]"
    if kind is int:
        return str(value) if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER else _number(float(value))
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        # JSON numbers are IEEE doubles to every other reader: beyond 2**53 an
        # integer is what a double makes of it, exactly as JavaScript prints it.
        return str(value) if abs(value) <= _MAX_SAFE_INTEGER else _number(float(value))
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join([_encode(v) for v in value]) + "]"
    if isinstance(value, dict):
        return _object(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _object(value: dict) -> str:
    for key in value:
        if not isinstance(key, str):
            raise TypeError(f"JSON object keys must be strings, not {type(key).__name__}")
    # UTF-16 code unit order; for ASCII keys (nearly all) that is the order of str.
    keys = sorted(value) if all(k.isascii() for k in value) else sorted(value, key=lambda k: k.encode("utf-16-be"))
    return "{" + ",".join([_string(k) + ":" + _encode(value[k]) for k in keys]) + "}"


def _string(text: str) -> str:
    if _NEEDS_ESCAPE.search(text) is None:
        return '"' + text + '"'
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _number(x: float) -> str:
    """ECMAScript Number::toString(x) (ECMA-262 7.1.12.1) for a finite double."""
    if math.isnan(x) or math.isinf(x):
        raise ValueError("NaN and Infinity are not JSON")
    if x == 0:
        return "0"  # also -0
    if x < 0:
        return "-" + _number(-x)
    # repr gives the shortest digits that round-trip, as ECMAScript requires.
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) + int(exponent or 0)  # position of the decimal point in whole+fraction
    point -= len(whole + fraction) - len((whole + fraction).lstrip("0"))
    digits = digits.rstrip("0") or "0"
    k, n = len(digits), point  # x = 0.digits * 10**n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    return digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
