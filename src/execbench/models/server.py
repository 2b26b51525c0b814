"""An in-process llama.cpp OpenAI-compatible server (``xllamacpp``) for local GGUF models.

    with LocalServer(model, parallel=2) as server:
        server.base_url   # "http://127.0.0.1:PORT/v1"
        with server.environment():   # LOCAL_BASE_URL / LOCAL_API_KEY for openai-api/local/...
            ...

The server binds 127.0.0.1 only, on a free port, and requires a random API key (so no
other local process or web page can use it). The port is derived from the model's
fingerprint when that port is free: Inspect's response cache keys on the base URL, and a
stable port is what lets a rerun hit the cache; if the port is taken another free port is
used (correct, only cache-cold). The server stops when the block exits, including on
Ctrl-C and errors.

llama.cpp slows down ~100x when its worker threads spin against other busy threads on a
small machine: ``OMP_WAIT_POLICY=PASSIVE`` is set before llama.cpp loads (unless the user
set it), and the thread count defaults to the usable cores, capped at 8
(``EXECBENCH_LOCAL_THREADS`` overrides; ``EXECBENCH_LOCAL_CTX`` sets the per-slot context).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import secrets
import socket
import time
import urllib.error
import urllib.request
from typing import Any, Iterator

from execbench.errors import InternalError
from execbench.models.names import LOCAL_SERVICE, LocalModel, LocalModelDescription

DEFAULT_SLOT_CONTEXT = 8192
PORT_RANGE = (20000, 40000)


class ServerError(InternalError, RuntimeError):
    """The local model server could not start or answer."""


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    explicit = os.environ.get("EXECBENCH_LOCAL_THREADS")
    if explicit:
        try:
            return max(1, int(explicit))
        except ValueError:
            raise ServerError(f"EXECBENCH_LOCAL_THREADS={explicit!r} is not an integer") from None
    return min(usable_cores(), 8)


def _port_is_free(port: int) -> bool:
    """Nothing listens on 127.0.0.1:port (connections left in TIME_WAIT by a previous run do not count:
    the server binds with SO_REUSEADDR, like this probe)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def preferred_port(fingerprint: str) -> int:
    low, high = PORT_RANGE
    return low + int(fingerprint[:8], 16) % (high - low)


class ServerDescription(LocalModelDescription):
    """:meth:`LocalServer.describe`: the server's settings beside its model's record."""

    server: str
    address: str | None  # (None before the server started)
    threads: int
    parallel: int
    slot_context: int
    startup_seconds: float


class LocalServer:
    """Context manager running llama.cpp's server on ``model`` in this process."""

    def __init__(self, model: LocalModel, *, parallel: int = 1, threads: int | None = None,
                 slot_context: int | None = None, startup_timeout: float = 120.0) -> None:
        self.model = model
        self.parallel = max(1, parallel)
        self.threads = threads or default_threads()
        ctx = slot_context or int(os.environ.get("EXECBENCH_LOCAL_CTX", DEFAULT_SLOT_CONTEXT))
        self.slot_context = max(512, ctx)
        self.startup_timeout = startup_timeout
        self.api_key = secrets.token_urlsafe(24)
        self.address: str | None = None
        self.startup_seconds: float | None = None
        self._server: Any = None

    # -- lifecycle -----------------------------------------------------------------------
    def _params(self, port: int) -> Any:
        import xllamacpp as xlc

        params = xlc.CommonParams()
        params.model.path = str(self.model.path)
        params.model_alias = {self.model.served_name}
        params.port = port
        params.hostnames = ["127.0.0.1"]
        params.api_keys = [self.api_key]
        params.n_parallel = self.parallel
        params.n_ctx = self.slot_context * self.parallel
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.verbosity = 0  # llama.cpp logs only errors
        params.warmup = False
        return params

    def start(self) -> "LocalServer":
        if self._server is not None:
            return self
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before llama.cpp's OpenMP starts
        try:
            import xllamacpp as xlc
        except ImportError:
            raise ServerError("the local model server needs the package xllamacpp "
                              "(pip install 'xllamacpp>=2026.10.11549')") from None
        started = time.perf_counter()
        port = preferred_port(self.model.fingerprint)
        ports = [port, 0] if _port_is_free(port) else [0]
        error: Exception | None = None
        for candidate in ports:
            try:
                self._server = xlc.Server(self._params(candidate))
                break
            except RuntimeError as exc:  # port taken between the probe and the bind, bad model...
                error = exc
        if self._server is None:
            raise ServerError(f"llama.cpp could not start on {self.model.path}: {error}")
        self.address = str(self._server.listening_address).rstrip("/")
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.perf_counter() - started
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.address}/health", timeout=5) as response:
                    if json.loads(response.read() or b"{}").get("status") == "ok":
                        return
            except (OSError, urllib.error.URLError, ValueError) as exc:
                last = exc
            time.sleep(0.1)
        raise ServerError(f"llama.cpp server at {self.address} not ready after {self.startup_timeout:.0f} s: {last}")

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            del server  # the C++ destructor stops the HTTP thread and frees the model
            gc.collect()

    @property
    def running(self) -> bool:
        return self._server is not None

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- clients ------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self.address is None:
            raise ServerError("the local server is not running")
        return f"{self.address}/v1"

    @contextlib.contextmanager
    def environment(self) -> Iterator[dict[str, str]]:
        """Set ``LOCAL_BASE_URL``/``LOCAL_API_KEY`` (Inspect's openai-api/local provider) for the block."""
        service = LOCAL_SERVICE.upper().replace("-", "_")
        values = {f"{service}_BASE_URL": self.base_url, f"{service}_API_KEY": self.api_key}
        saved = {key: os.environ.get(key) for key in values}
        os.environ.update(values)
        try:
            yield values
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    def describe(self) -> ServerDescription:
        """The server's settings and its model's record (an eval's ``local_model`` metadata)."""
        return {"server": "llama.cpp (xllamacpp, in-process)", "address": self.address, "threads": self.threads,
                "parallel": self.parallel, "slot_context": self.slot_context,
                "startup_seconds": round(self.startup_seconds or 0.0, 3), **self.model.describe()}
