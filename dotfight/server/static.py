"""The web app's files as the server hands them out: deliberate caching and a versioned service worker.

There is no build step, so file names carry no version. Every file is therefore served with its
`ETag` and `Cache-Control: no-cache`: the browser keeps a copy but asks before each use, and an
unchanged file costs a bodiless 304. Repeat visits do not even ask: the service worker (`sw.js`)
answers the app shell from its own cache, and that cache is named after the *shell version*, a
digest of every file of the web app. The server writes that version into `sw.js` as it serves it
(the placeholder `__SHELL_VERSION__`), so any deploy that changes a file changes `sw.js`, which makes
the browser install the new worker, which fills a new cache and drops the old one.

A worker runs under the policy of its own script's answer, not its page's: the scripts registered as
service workers carry the worker headers (headers.py), which the app's other scripts go without.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import anyio
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import FileResponse, Response
from starlette.staticfiles import NotModifiedResponse, StaticFiles
from starlette.types import Scope

from dotfight.server.headers import WORKER_HEADERS

SERVICE_WORKER = "sw.js"
# The scripts web/ registers as service workers at the root scope (push.js registers push-sw.js alone
# where there is no sw.js); a worker at "/" needs no Service-Worker-Allowed.
WORKER_SCRIPTS = frozenset({SERVICE_WORKER, "push-sw.js"})
WORKER_HEADER_FIELDS = {name.decode(): value.decode() for name, value in WORKER_HEADERS}
VERSION_PLACEHOLDER = b"__SHELL_VERSION__"
# Ask before every use; a copy may be kept (and shown on Back) but never used unchecked.
REVALIDATE = "no-cache"


def shell_version(web_dir: Path) -> str:
    """Returns a short digest of every file under `web_dir` (names and contents, hidden files aside).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "a.js").write_text("1")
    >>> v = shell_version(d); _ = (d / "a.js").write_text("2"); v != shell_version(d)
    True
    """
    digest = hashlib.sha256()
    for path in sorted(p for p in web_dir.rglob("*") if p.is_file()):
        rel = path.relative_to(web_dir).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


class WebFiles(StaticFiles):
    """Serves the web app folder: every file with ETag + `no-cache`, `sw.js` stamped with the shell
    version (see the module's docstring)."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory=directory, html=True, check_dir=False)
        self.web_dir = Path(directory)
        # StaticFiles hands file_response the real path (symlinks resolved): compared against this.
        self._real_web_dir = Path(os.path.realpath(directory))
        self._version: tuple[tuple[tuple[str, int, int], ...], str] | None = None

    def current_version(self) -> str:
        """The shell version, recomputed only when a file's size or modification time changed."""
        signature = tuple(
            sorted(
                (str(p), s.st_size, s.st_mtime_ns)
                for p in self.web_dir.rglob("*")
                if stat.S_ISREG((s := p.stat()).st_mode)
            )
        )
        if self._version is None or self._version[0] != signature:
            self._version = (signature, shell_version(self.web_dir))
        return self._version[1]

    async def get_response(self, path: str, scope: Scope) -> Response:
        if path == SERVICE_WORKER and scope["method"] in ("GET", "HEAD"):
            return await anyio.to_thread.run_sync(self.service_worker, scope)
        return await super().get_response(path, scope)

    def service_worker(self, scope: Scope) -> Response:
        """`sw.js` with the shell version written in; its ETag is that version."""
        source = self.web_dir / SERVICE_WORKER
        if not source.is_file():
            raise HTTPException(status_code=404)
        version = self.current_version()
        headers = {"Cache-Control": REVALIDATE, "ETag": f'"{version}"', **WORKER_HEADER_FIELDS}
        response = Response(
            source.read_bytes().replace(VERSION_PLACEHOLDER, version.encode()),
            media_type="text/javascript",
            headers=headers,
        )
        if self.is_not_modified(response.headers, Headers(scope=scope)):
            return NotModifiedResponse(response.headers)
        return response

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        headers = {"Cache-Control": REVALIDATE}
        if Path(full_path).parent == self._real_web_dir and Path(full_path).name in WORKER_SCRIPTS:
            headers |= WORKER_HEADER_FIELDS
        response = FileResponse(full_path, status_code=status_code, stat_result=stat_result, headers=headers)
        if self.is_not_modified(response.headers, Headers(scope=scope)):
            return NotModifiedResponse(response.headers)
        return response
