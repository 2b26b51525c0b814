"""How code inside a job sends its value: runs INSIDE the sandbox (see :mod:`.jobs`).

A job's value goes to the runner over fd :data:`VALUE_FD`, a memory file the runner made
for that job alone (never a file in a directory the program can write). A handler that
runs the program in its own process (the tracer, the state runner) binds the serialiser
with :func:`private` *before* the program's first line: these are C objects made when
this module was imported, so a program that patches ``json``, ``os.write`` or
``str.join`` by name changes nothing they do. What arrives is still hostile to the parent
(the program can write to the fd itself): it is parsed bounded and checked field by field.
"""

from __future__ import annotations

import _json
import os
from typing import Any, Callable

VALUE_FD = 3

# bytes.fromhex as the encoder's `default`: any value that is not plain JSON raises TypeError
_ENCODER = _json.make_encoder({}, bytes.fromhex, _json.encode_basestring_ascii, None, ":", ",",
                              False, False, False)
_JOIN = "".join
_WRITE = os.write


def private() -> tuple[Callable[[Any], bytes], Callable[[bytes], None]]:
    """``(encode, send)``: ``encode(value)`` is the value's JSON as bytes, ``send(data)``
    writes bytes to the value's fd. Call it before the program runs and keep the two."""
    encoder, join, write = _ENCODER, _JOIN, _WRITE

    def encode(value: Any) -> bytes:
        return join(encoder(value, 0)).encode()

    def send(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[write(VALUE_FD, view):]
    return encode, send
