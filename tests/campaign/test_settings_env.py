"""The settings' environment readers: a value they cannot read stops the process with the
variable's name, never a silent default (a typo in SECURE_COOKIES must not turn cookies insecure)."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from campaign.settings import env_bool, env_choice, env_float, env_int


@pytest.mark.parametrize("value, expected", [("1", True), ("TRUE", True), (" yes ", True), ("on", True),
                                             ("0", False), ("false", False), ("No", False), ("off", False)])
def test_a_yes_or_no_word_is_read(monkeypatch, value, expected):
    monkeypatch.setenv("TK_FLAG", value)
    assert env_bool("TK_FLAG", not expected) is expected


@pytest.mark.parametrize("value", [None, "", "  "])
def test_unset_or_empty_means_the_default(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("TK_FLAG", raising=False)
    else:
        monkeypatch.setenv("TK_FLAG", value)
    assert env_bool("TK_FLAG", True) is True
    assert env_int("TK_FLAG", 7) == 7
    assert env_float("TK_FLAG", 2.5) == 2.5


@pytest.mark.parametrize("reader, value", [
    (lambda: env_bool("TK_X"), "ture"),
    (lambda: env_int("TK_X", 1), "ten"),
    (lambda: env_int("TK_X", 1), "2.5"),
    (lambda: env_int("TK_X", 1), "-1"),
    (lambda: env_float("TK_X", 1.0), "two"),
    (lambda: env_float("TK_X", 1.0), "nan"),
    (lambda: env_float("TK_X", 1.0), "inf"),
    (lambda: env_float("TK_X", 1.0), "-0.5"),
    (lambda: env_choice("TK_X", "a", ("a", "b")), "c"),
])
def test_a_value_that_cannot_be_read_names_the_variable(monkeypatch, reader, value):
    monkeypatch.setenv("TK_X", value)
    with pytest.raises(ImproperlyConfigured, match="TK_X"):
        reader()


def test_numbers_are_read(monkeypatch):
    monkeypatch.setenv("TK_X", "12")
    assert env_int("TK_X", 1) == 12
    monkeypatch.setenv("TK_X", "0.25")
    assert env_float("TK_X", 1.0) == 0.25
