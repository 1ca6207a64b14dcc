"""``rules.base.copy_json``: what a handler stores from a payload shares nothing with it."""

from collections import OrderedDict

from hypothesis import given
from hypothesis import strategies as st

from rules.base import copy_json

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=20)


def containers(value):
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from containers(item)
    elif isinstance(value, (list, tuple)):
        yield value
        for item in value:
            yield from containers(item)


@given(json_values)
def test_a_copy_is_equal_and_shares_no_list_or_dict(value):
    copied = copy_json(value)
    assert copied == value
    originals = {id(c) for c in containers(value) if not isinstance(c, tuple)}
    assert not originals & {id(c) for c in containers(copied) if not isinstance(c, tuple)}


def test_tuples_stay_tuples_and_a_dict_subclass_becomes_a_dict():
    value = {"a": (1, [2]), "b": OrderedDict(x=[3])}
    copied = copy_json(value)
    assert copied == value and type(copied["a"]) is tuple and type(copied["b"]) is dict
    assert copied["a"][1] is not value["a"][1] and copied["b"]["x"] is not value["b"]["x"]
