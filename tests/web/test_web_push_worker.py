"""web/push-sw.js, the service worker's push and notificationclick handlers, run by Node in a stand-in
worker scope: which pushes are shown and how, and what a tap on a notification opens or focuses.
(The browser test of Web Push shows a real notification; a tap on one cannot be driven there.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

WORKER = Path(__file__).resolve().parents[2] / "web" / "push-sw.js"

HARNESS = r"""
const fs = require("fs");
const vm = require("vm");
const [path, casesJson] = process.argv.slice(1);

async function run(c) {
  const listeners = {};
  const log = { shown: [], focused: [], opened: [] };
  const windows = (c.windows || []).map((w) => ({
    url: w.url, visibilityState: w.visible ? "visible" : "hidden", focused: !!w.focused,
    focus: async () => { log.focused.push(w.url); },
  }));
  const self = {
    addEventListener: (type, fn) => { listeners[type] = fn; },
    registration: { showNotification: async (title, options) => { log.shown.push({ title, ...options }); } },
    clients: {
      matchAll: async () => windows,
      openWindow: async (url) => { log.opened.push(url); },
    },
  };
  vm.runInNewContext(fs.readFileSync(path, "utf8"), { self, URL });
  let pending = null;
  const event = { waitUntil: (p) => { pending = p; } };
  if (c.type === "push") {
    event.data = c.raw === undefined ? null : { json: () => JSON.parse(c.raw) };
  } else {
    event.notification = { data: c.data, close: () => { log.closed = true; } };
  }
  listeners[c.type](event);
  await pending;
  return log;
}

(async () => {
  const out = [];
  for (const c of JSON.parse(casesJson)) out.push(await run(c));
  console.log(JSON.stringify(out));
})();
"""

ORIGIN = "https://dotfight.example"
MESSAGE = {
    "title": "Your move — Dotfight",
    "body": "Blue is ready. Arrange your soldiers.",
    "url": "/p/abc123",
    "tag": "dotfight-abc123",
    "page": "abc123",
    "side": "red",
    "version": 2,
}


def run_worker(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    done = subprocess.run(
        [node, "-e", HARNESS, str(WORKER), json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result


def test_a_push_is_shown_unless_its_page_is_in_front_of_the_player() -> None:
    page = f"{ORIGIN}/p/abc123"
    alone, in_front, hidden, elsewhere = run_worker(
        [
            {"type": "push", "raw": json.dumps(MESSAGE)},
            {
                "type": "push",
                "raw": json.dumps(MESSAGE),
                "windows": [{"url": page, "visible": True, "focused": True}],
            },
            {"type": "push", "raw": json.dumps(MESSAGE), "windows": [{"url": page, "visible": False}]},
            {
                "type": "push",
                "raw": json.dumps(MESSAGE),
                "windows": [{"url": f"{ORIGIN}/", "visible": True, "focused": True}],
            },
        ]
    )
    [shown] = alone["shown"]
    assert shown["title"] == MESSAGE["title"] and shown["body"] == MESSAGE["body"]
    assert shown["tag"] == "dotfight-abc123" and shown["renotify"] is True
    assert shown["data"] == {"url": "/p/abc123", "page": "abc123", "version": 2}
    assert in_front["shown"] == []  # the page already shows the move
    assert len(hidden["shown"]) == 1 and len(elsewhere["shown"]) == 1


def test_a_push_that_cannot_be_read_or_points_elsewhere_still_opens_only_the_app() -> None:
    garbled, foreign, empty = run_worker(
        [
            {"type": "push", "raw": "not json"},
            {"type": "push", "raw": json.dumps({**MESSAGE, "url": "https://evil.example/p/abc"})},
            {"type": "push"},
        ]
    )
    assert garbled["shown"][0]["title"] == "Dotfight" and garbled["shown"][0]["data"]["url"] == "/"
    assert foreign["shown"][0]["data"]["url"] == "/"
    assert empty["shown"][0]["title"] == "Dotfight"


def test_a_tap_focuses_the_pages_window_or_opens_the_page() -> None:
    data = {"url": "/p/abc123", "page": "abc123", "version": 2}
    with_window, without, foreign = run_worker(
        [
            {
                "type": "notificationclick",
                "data": data,
                "windows": [{"url": f"{ORIGIN}/"}, {"url": f"{ORIGIN}/p/abc123"}],
            },
            {"type": "notificationclick", "data": data, "windows": [{"url": f"{ORIGIN}/p/other"}]},
            {"type": "notificationclick", "data": {"url": "//evil.example/x"}},
        ]
    )
    assert with_window["closed"] and with_window["focused"] == [f"{ORIGIN}/p/abc123"]
    assert with_window["opened"] == []
    assert without["focused"] == [] and without["opened"] == ["/p/abc123"]
    assert foreign["opened"] == ["/"]
