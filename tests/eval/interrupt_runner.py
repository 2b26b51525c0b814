"""Child process of test_eval_interrupt: `execbench eval` on the scripted model, one slow call at a time."""

import signal
import sys
import time
from pathlib import Path

signal.signal(signal.SIGINT, signal.default_int_handler)  # a background parent may have ignored SIGINT
sys.path.insert(0, str(Path(__file__).parent))

from eval_support import answer_for, called_x, output, register_scripted_model, reset_script  # noqa: E402 - after the sys.path entry it needs

register_scripted_model()
marks = Path(sys.argv[1])


def slow(number, prompt):
    (marks / f"call-{number}").write_text("")
    time.sleep(0.5)
    return output(str(answer_for(called_x(prompt))))


reset_script().handler = slow

from execbench.cli import main  # noqa: E402 - after the script is registered

sys.argv = ["execbench", *sys.argv[2:]]
main()
