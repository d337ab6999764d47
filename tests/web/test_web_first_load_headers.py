"""The headers of a first load, counted as the real server sent them: the documents (the cover, a page's
link) and the service worker's script carry the policy; the app's scripts, style sheets, icons and
manifest carry no document header (they run or show under their document's), every answer keeps
nosniff, and the app and its worker's install still work under the policy, which is enforced here.
The bytes of every answer's headers are printed (`-s`): docs/SERVER.md quotes them before and after."""

from __future__ import annotations

import time
from typing import Any

import pytest
from web_helpers import page_ready_to_flick

from dotfight.server.headers import is_subresource
from tests.support.chromium import PHONE

pytestmark = pytest.mark.browser

DOCUMENT_ONLY = ("content-security-policy", "x-frame-options", "referrer-policy")
WORKER_SCRIPTS = {"/sw.js", "/push-sw.js"}


def first_load(browser: Any, server: str, path: str) -> list[tuple[str, int, dict[str, str]]]:
    """Opens `path` in a fresh phone (policy enforced) until its service worker is ready and has filled
    its cache; returns every answer of the page and of the worker: (path, header bytes sent, headers)."""
    ctx = browser.new_context(**{**PHONE, "bypass_csp": False})
    answers: list[tuple[str, int, dict[str, str]]] = []

    def finished(request: Any) -> None:
        response = request.response()
        if response is None or not request.url.startswith(server):
            return
        sent = request.sizes()["responseHeadersSize"]
        answers.append((request.url.replace(server, "").split("#")[0], sent, response.all_headers()))

    ctx.on("requestfinished", finished)
    try:
        page = ctx.new_page()
        violations: list[str] = []
        page.on("console", lambda m: violations.append(m.text) if "Security Policy" in m.text else None)
        page.goto(server + path)
        deadline = time.monotonic() + 20
        # Polled with evaluate: the enforced policy forbids wait_for_function's eval.
        while not page.evaluate(
            "navigator.serviceWorker.getRegistration('/').then((r) => !!(r && r.active))"
            " && window.dotfight !== undefined"
        ):
            assert time.monotonic() < deadline, "the app or its worker did not start"
            page.wait_for_timeout(100)
        page.wait_for_timeout(500)  # the install's last answers
        cached = page.evaluate(
            "caches.keys().then((k) => caches.open(k.find((n) => n.startsWith('dotfight-shell-'))))"
            ".then((c) => c.keys()).then((r) => r.length)"
        )
        assert cached >= 10  # the worker ran under its policy and filled the shell's cache
        assert violations == []
    finally:
        ctx.close()
    return answers


@pytest.mark.parametrize("where", ["cover", "page"])
def test_a_first_load_sends_document_headers_only_to_documents_and_workers(
    browser: Any, server: str, where: str
) -> None:
    if where == "cover":
        path = "/"
    else:
        page_id, token = page_ready_to_flick(server)
        path = f"/p/{page_id}#seat={token}"
    answers = first_load(browser, server, path)
    kinds: dict[str, list[int]] = {"document": [], "worker": [], "subresource": [], "other": []}
    kind_of = {asked: kind_of_answer(asked, headers) for asked, _, headers in answers}
    for asked, sent, _ in answers:
        kinds[kind_of[asked]].append(sent)
    # The figures first, so that a failing run (the code before) prints its own.
    print(
        f"\n{where} first load: {len(answers)} answers, {sum(sum(s) for s in kinds.values())} header bytes"
        + "".join(f"; {kind} {len(sizes)} answers {sum(sizes)} B" for kind, sizes in kinds.items())
    )
    for asked, _, headers in answers:
        assert headers.get("x-content-type-options") == "nosniff", asked
        if kind_of[asked] == "subresource":
            assert not [name for name in DOCUMENT_ONLY if name in headers], (asked, headers)
        else:
            assert "frame-ancestors 'none'" in headers["content-security-policy"], asked
            assert headers["referrer-policy"] == "no-referrer", asked
        if kind_of[asked] == "document":
            assert headers["x-frame-options"] == "DENY", asked
    assert kinds["document"] and kinds["worker"] and len(kinds["subresource"]) >= 10, kinds


def kind_of_answer(asked: str, headers: dict[str, str]) -> str:
    """What a browser makes of an answer: a document, a worker's script, a subresource (judged as the
    server judges it, `headers.is_subresource`: by its Content-Type, or a 304's by its path), or other
    (the API's JSON: opened by its address it is a document, and keeps the document headers)."""
    if headers.get("content-type", "").split(";")[0] == "text/html":
        return "document"
    if asked in WORKER_SCRIPTS:
        return "worker"
    sent = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
    if is_subresource(sent, asked.split("?")[0]):
        return "subresource"
    return "other"


def test_a_304_is_a_subresource_by_its_path_as_the_server_judges_it() -> None:
    # A revalidated script comes back as a 304 with no Content-Type (the CI run of 493fe35 failed on
    # one, taken for an API answer missing its policy).
    assert kind_of_answer("/js/main.js?v=1", {"etag": '"abc"', "x-content-type-options": "nosniff"}) == (
        "subresource"
    )
    assert kind_of_answer("/api/pages/abc", {"content-type": "application/json"}) == "other"
