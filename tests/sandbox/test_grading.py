"""Grading cannot be stalled (issue 14): sympy answers that would evaluate huge numbers
are refused before sympy sees them, the in-process part runs under an alarm, and off the
main thread the whole comparison runs in the sandbox."""

from __future__ import annotations

import threading

import pytest

from execbench.families.repo.grading import sympy_parse
from execbench.families.repo.grading.sympy_parse import SympyParseError


@pytest.mark.parametrize("text", ["floor(exp(10**4000))", "ceiling(exp(exp(exp(5))))",
                                  "floor(exp(10**40))", "Max(3, exp(10**40))", "Mod(exp(2**4000), 3)"])
def test_huge_evaluations_are_refused(text):
    with pytest.raises(SympyParseError, match="digits"):
        sympy_parse.equivalent(text, "1")


@pytest.mark.parametrize("text,oracle", [("floor(exp(100))", "floor(exp(100))"), ("floor(7/2)", "3"),
                                         ("Mod(2**1000, 7)", "2")])
def test_ordinary_evaluations_still_work(text, oracle):
    assert sympy_parse.equivalent(text, oracle)[0]


def test_in_process_alarm_makes_a_grading_timeout(monkeypatch):
    def stall(*args):
        while True:
            pass
    monkeypatch.setattr(sympy_parse, "IN_PROCESS_SECONDS", 0.2)
    monkeypatch.setattr(sympy_parse, "_cheap_expand_equal", stall)
    assert sympy_parse.equivalent("x*(x+1)", "x**2 + x") == (False, "grading_timeout")
    assert sympy_parse.equivalent("x", "x") == (True, "structural")  # the alarm is gone


def test_off_the_main_thread_everything_is_sandboxed(monkeypatch):
    called = []
    original = sympy_parse._sandboxed
    monkeypatch.setattr(sympy_parse, "_sandboxed",
                        lambda *a, **k: called.append(k) or original(*a, **k))
    out: dict = {}

    def work():
        out["equal"] = sympy_parse.equivalent("x*(x+1)", "x**2 + x")
        try:
            sympy_parse.equivalent("ceiling(exp(exp(exp(5))))", "1")
        except SympyParseError as exc:
            out["refused"] = str(exc)
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert out["equal"] == (True, "expand") and "digits" in out["refused"]
    assert called == [{"full": True}, {"full": True}]
