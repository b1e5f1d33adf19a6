# A tiny HTTP server on loopback for the tests: it records each request and answers what the
# test's `respond` says.
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Iterator
from contextlib import contextmanager


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Answer:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@contextmanager
def local_server(respond: Callable[[Request, int], Answer]) -> Iterator[tuple[str, list[Request]]]:
    """Yields the server's base URL and the list of requests it received; `respond` gets each
    request and how many came before it."""
    received: list[Request] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            request = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            with lock:
                n = len(received)
                received.append(request)
            answer = respond(request, n)
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        do_GET = do_POST = do_PATCH = do_DELETE = _any

        def log_message(self, format: str, *args: object) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
