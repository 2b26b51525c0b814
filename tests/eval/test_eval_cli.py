"""`execbench eval`, `execbench models` and `execbench demo` as a user types them."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from eval_support import SCRIPTED
from execbench.cli import app

runner = CliRunner()


def test_help_does_not_import_inspect():
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom execbench.cli import app\n"
            "for args in (['--help'], ['eval', '--help'], ['demo', '--help'], ['models', '--json']):\n"
            "    assert CliRunner().invoke(app, args).exit_code == 0, args\n"
            "assert 'inspect_ai' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_models_lists_the_local_default():
    result = runner.invoke(app, ["models", "--json"])
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    assert rows[0]["model"] == "local" and any(row["model"] == "local/PATH.gguf" for row in rows)


def test_eval_runs_with_passthrough_flags(dataset, script, tmp_path):
    result = runner.invoke(app, ["eval", str(dataset), "--model", SCRIPTED, "--limit", "2", "--log-dir",
                                 str(tmp_path / "logs"), "--seed", "3", "--mode", "cot"])
    assert result.exit_code == 0, result.output
    assert script.calls == 2
    assert "C/R" in result.output and "inspect view --log-dir" in result.output
    assert list((tmp_path / "logs").glob("*.eval"))


def test_eval_reports_setup_errors_without_a_traceback(dataset, tmp_path):
    cases = [
        (["--variant", "telepathic"], "no prompt variant"),
        (["--mode", "agent"], "repo"),
        (["--model", "nonsense"], "provider/model"),
        (["--model", SCRIPTED, "--bogus-flag", "1"], "not an Inspect"),
        (["--model", "nosuchprovider/x"], "not recognized"),
    ]
    for args, message in cases:
        result = runner.invoke(app, ["eval", str(dataset), "--log-dir", str(tmp_path / "l"), *args])
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["eval", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "not a dataset directory" in result.output
