"""Ctrl-C during `execbench eval`, then the same command again: finished samples are not asked again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eval_support import SCRIPTED
from execbench.eval.run import EvalRequest, run_eval


@pytest.mark.slow
def test_interrupted_eval_resumes_without_repeating_samples(dataset, script, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    log_dir = tmp_path / "logs"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2] / "src"),
                                                        os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("interrupt_runner.py")), str(marks), "eval", str(dataset),
         "--model", SCRIPTED, "--log-dir", str(log_dir), "--max-connections", "1", "--no-cache"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 240
        while len(list(marks.iterdir())) < 3:  # two answered, the third in flight
            assert child.poll() is None, child.stdout.read()
            assert time.monotonic() < deadline, "the child never reached its third call"
            time.sleep(0.1)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130, out
    assert "interrupted" in out and "again to resume" in out

    from inspect_ai.log import list_eval_logs, read_eval_log

    (info,) = list_eval_logs(str(log_dir))
    cancelled = read_eval_log(info.name)
    assert cancelled.status == "cancelled"
    done = sum(1 for s in cancelled.samples or [] if s.scores and s.error is None)
    assert 2 <= done < 6

    outcome = run_eval(EvalRequest(dataset=dataset, model=SCRIPTED, log_dir=log_dir, max_connections=1,
                                   cache=False))
    assert outcome.success
    assert script.calls == 6 - done  # only the samples without a result ran again
    total = outcome.summaries[0]["total"]
    assert (total["N"], total["R"], total["C"]) == (6, 6, 6)
