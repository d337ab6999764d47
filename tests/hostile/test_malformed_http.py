"""Malformed HTTP gets the API's JSON error shape wherever the server can still answer (uvicorn's own
answer is plain text), under httptools and under h11."""

from __future__ import annotations

import json

import pytest

from tests.hostile.conftest import StartServer
from tests.hostile.test_transport import IMPLEMENTATION_ARGS, connect, read_answer

MALFORMED = [
    b"GET / HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n",
    b"GARBAGE\r\n\r\n",
    b"POST /api/pages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
    b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
]


@pytest.mark.parametrize("implementation", ["httptools", "h11"])
def test_malformed_requests_get_the_json_error_shape(start_server: StartServer, implementation: str) -> None:
    server = start_server(extra_args=IMPLEMENTATION_ARGS[implementation])
    for request in MALFORMED:
        with connect(server.port) as sock:
            sock.sendall(request)
            answer = read_answer(sock)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400"), (request, answer)
        assert b"content-type: application/json" in head.lower(), (request, answer)
        error = json.loads(body)["error"]
        assert error["code"] == "bad_request", request
        assert error["message"], request
    assert server.http.get("/api/health").status_code == 200
