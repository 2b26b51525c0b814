"""A traced program cannot fool the tracer: crashes are crashes, and a program that disables,
replaces or bypasses the tracer is traced correctly anyway or marked ``tampered``.

Every program runs through the real sandbox (``trace_calls`` / ``trace_script``)."""

from __future__ import annotations

import textwrap

import pytest

from execbench.tracing import trace_calls, trace_script

LOOP = """
    t = 0
    for i in range(n):
        t += i
    return t
"""


def calls(body: str, prelude: str = "import sys, threading\n") -> dict:
    program = prelude + "def f(n):\n" + textwrap.indent(textwrap.dedent(body), "    ") + textwrap.dedent(
        LOOP).replace("\n", "\n    ").rstrip() + "\n"
    run = trace_calls(program, ["f(3)"])
    assert run.ok, run.reason()
    if run.value["module"]["status"] != "ok":
        return run.value["module"]
    return run.value["calls"][0]


@pytest.mark.parametrize("body, signal_words", [
    ("import ctypes\nctypes.string_at(0)\n", "SIGSEGV"),
    ("import os\nos.abort()\n", "SIGABRT"),
    ("import os\nos._exit(0)\n", "exit status 0"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "SIGKILL"),
])
def test_a_call_whose_process_dies_is_a_crash_never_a_partial_trace(body, signal_words):
    result = calls(body)
    assert result["status"] == "crash" and "lines" not in result
    assert signal_words in result["error"]["message"]


def test_a_script_whose_process_dies_has_no_result():
    run = trace_script("import ctypes\nx = 1\nctypes.string_at(0)\nprint(x)\n")
    assert not run.ok and "SIGSEGV" in run.reason()


@pytest.mark.parametrize("body, why", [
    # plain uses are refused before the program runs (static check)
    ("sys.settrace(None)\nthreading.settrace(None)\n", "settrace"),
    ("sys.setprofile(lambda *a: None)\n", "setprofile"),
    ("sys._getframe().f_trace = None\n", "f_trace"),
    ("sys._getframe().f_trace_lines = False\n", "f_trace_lines"),
    ("sys.gettrace = lambda: None\n", "gettrace"),
    ("sys.monitoring.use_tool_id(3, 'x')\n", "monitoring"),
    ("import execbench.tracing.tracer as t\nt.Tracer._on_primary_line = lambda *a: None\n", "execbench"),
    # obfuscated uses are caught while the program runs
    ("getattr(sys, 'set' + 'trace')(None)\n", "sys.settrace called"),
    ("getattr(threading, 'set' + 'trace')(None)\n", "threading.settrace called"),
    ("getattr(sys, 'set' + 'profile')(print)\n", "sys.setprofile called"),
    ("getattr(threading, 'set' + 'profile')(print)\n", "threading.setprofile called"),
    ("setattr(sys._getframe(), 'f_' + 'trace', None)\n", "frame was changed"),
    ("setattr(sys._getframe(), 'f_' + 'trace_lines', False)\n", "were turned off"),
    ("class Eq:\n    def __eq__(self, o): return True\n    def __ne__(self, o): return False\n"
     "    def __call__(self, *a): return self\nsetattr(sys._getframe(), 'f_' + 'trace', Eq())\n", "frame was changed"),
    ("setattr(sys, 'get' + 'trace', lambda: None)\n", "sys.gettrace was replaced"),
    ("try:\n    getattr(sys, 'set' + 'trace')(None)\nexcept BaseException:\n    pass\n", "sys.settrace called"),
])
def test_tampering_is_rejected(body, why):
    result = calls(body)
    assert result["status"] == "tampered" and "lines" not in result
    assert why in result["tampered"]


def test_reading_the_tracer_sees_what_an_untraced_program_sees():
    # gettrace() returns None as it would without a tracer, and a missing sys.monitoring
    # (CPython 3.11) is simply absent: the trace is the program's real trace
    result = calls("seen = getattr(sys, 'get' + 'trace')()\nassert seen is None\n"
                   "m = getattr(sys, 'moni' + 'toring', None)\nassert m is None\n")
    assert result["status"] == "ok"
    assert result["lines"] == [3, 4, 5, 6, 8, 9, 10, 9, 10, 9, 10, 9, 11]


def test_threads_still_trace_under_the_guard():
    program = textwrap.dedent("""\
        import threading
        def work(out):
            out.append(1)
        def f():
            out = []
            t = threading.Thread(target=work, args=(out,))
            t.start()
            t.join()
            return out
        """)
    run = trace_calls(program, ["f()"])
    result = run.value["calls"][0]
    assert result["status"] == "ok"
    assert result["lines"] == [5, 6, 7, [3, 8], 9]
