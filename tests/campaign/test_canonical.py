"""Canonical JSON v2 is RFC 8785 (JCS), so a verifier in any language hashes what the server hashed."""

from __future__ import annotations

import functools
import importlib.util
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from campaign.canonical import jcs

# RFC 8785 appendix B: IEEE 754 doubles (as bit patterns) and how JCS writes them.
NUMBERS = [
    ("0000000000000000", "0"), ("8000000000000000", "0"), ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"), ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"), ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"), ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"), ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"), ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"), ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"), ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"), ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"), ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"), ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize("bits, text", NUMBERS)
def test_numbers_are_written_as_ecmascript_writes_them(bits, text):
    assert jcs(struct.unpack(">d", bytes.fromhex(bits))[0]) == text.encode()


def test_keys_sort_by_utf16_code_units_and_strings_escape_only_what_jcs_escapes():
    # RFC 8785 section 3.2.3's sorting example, and its string escapes.
    value = {"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
             "1": "One", "\U0001f600": "Emoji: Grinning Face", "\x80": "Control", "\xf6": "Latin Small Letter O"}
    keys = [k for k in value]
    expected_order = ["\r", "1", "\x80", "\xf6", "\u20ac", "\U0001f600", "\ufb33"]
    assert sorted(keys, key=lambda k: k.encode("utf-16-be")) == expected_order
    assert jcs({"s": "\u20ac$\x0f\nA'B\"\\\\\"/"}) == '{"s":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'.encode()
    assert jcs({"b": [1.0, True, None], "a": 1}) == b'{"a":1,"b":[1,true,null]}'


def test_values_json_cannot_hold_are_refused():
    for bad in (float("nan"), float("inf"), {1: "x"}, {"x": object()}):
        with pytest.raises((TypeError, ValueError)):
            jcs(bad)


@functools.cache
def _standalone():
    path = Path(__file__).resolve().parents[2] / "tools" / "talekeeper_verify.py"
    spec = importlib.util.spec_from_file_location("talekeeper_verify", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


JSON = st.recursive(st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False,
                    allow_infinity=False) | st.text(), lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=12)


@settings(deadline=None)  # a shared machine: no timing in tests
@given(JSON)
def test_the_standalone_verifiers_copy_encodes_exactly_the_same(value):
    assert _standalone().jcs(value) == jcs(value)
