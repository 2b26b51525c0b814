"""Headless Chromium for the report's browser tests: render a page, dump its DOM, screenshot it."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
MISSING = "chromium is not installed (apt-get install -y chromium); the browser test needs /usr/bin/chromium"


def chromium(tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess:
    assert CHROMIUM is not None, MISSING
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}", "--window-size=1280,2000",
               *args, page.resolve().as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=180)


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", header[16:24])
