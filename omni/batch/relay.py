"""--max-requests N: one model server, many runs. The batch's tasks reach the model through this relay, which lets
at most N requests be in flight across the whole batch (the cluster's nodes included) and forwards each, streamed
replies too, to the one endpoint. A 429 and its Retry-After pass through unchanged, so each run waits as it would
alone. The relay adds nothing: each run sends its own key, as it would to the endpoint."""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization",
       "proxy-authenticate", "host", "content-length"}


class RequestRelay:
    def __init__(self, upstream: str, max_requests: int, host: str = "127.0.0.1"):
        self.upstream = urlsplit(upstream.rstrip("/"))
        self.gate = threading.BoundedSemaphore(max_requests)
        self.in_flight = self.most = 0
        self._count = threading.Lock()
        handler = type("Handler", (_Handler,), {"relay": self})
        self.httpd = _QuietServer((host, 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}{self.upstream.path}"

    def __enter__(self) -> RequestRelay:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def counted(self, delta: int) -> None:
        with self._count:
            self.in_flight += delta
            self.most = max(self.most, self.in_flight)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """A run that closed its connection mid-way (it stopped, or reused none): nothing to report."""


class _Handler(BaseHTTPRequestHandler):
    relay: RequestRelay
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self._forward(b"")

    def do_POST(self) -> None:
        self._forward(self.rfile.read(int(self.headers.get("content-length", 0))))

    def _forward(self, body: bytes) -> None:
        up = self.relay.upstream
        path = self.path[len(up.path):] if self.path.startswith(up.path) else self.path
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        kind = http.client.HTTPSConnection if up.scheme == "https" else http.client.HTTPConnection
        with self.relay.gate:
            self.relay.counted(1)
            try:
                conn = kind(up.netloc, timeout=600)
                try:
                    conn.request(self.command, up.path + path, body=body or None, headers=headers)
                    reply = conn.getresponse()
                except OSError as exc:
                    self._answer(502, f'{{"error": {{"message": "the relay could not reach the endpoint: {exc}"}}}}')
                    return
                self.send_response(reply.status)
                for key, value in reply.getheaders():
                    if key.lower() not in HOP:
                        self.send_header(key, value)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while chunk := reply.read1(65536):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                conn.close()
            finally:
                self.relay.counted(-1)

    def _answer(self, status: int, text: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
