"""A job handler for tests/sandbox/test_jobs.py, imported by the job runner inside the sandbox
(by module name, as every family's handler is; no pytest import: other interpreters lack it)."""


def run_python_file(args: dict) -> dict:
    """Run a file of the job's directory as __main__, return its global ``result``."""
    namespace: dict = {"__name__": "__main__"}
    with open(args["file"]) as fh:
        exec(compile(fh.read(), args["file"], "exec"), namespace)  # noqa: S102 - a test program, in the sandbox
    return {"result": namespace.get("result")}
