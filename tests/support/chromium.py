"""Debian's chromium as the browser tests and the web benchmark launch it, and the phone they emulate."""

from __future__ import annotations

from typing import Any

CHROMIUM = "/usr/bin/chromium"
# Flags for a headless chromium in a container (see ../shared/TOOLCHAIN.md).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
# A phone-sized browser context: 390×844 CSS pixels, touch, device pixel ratio 3. Playwright's
# `wait_for_function` compiles its predicate with eval, which the app's Content-Security-Policy forbids,
# so test contexts bypass the policy; tests/hostile/test_headers.py runs the app under it (no bypass).
PHONE: dict[str, Any] = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 3,
    "has_touch": True,
    "is_mobile": True,
    "bypass_csp": True,
}
