#!/usr/bin/env python3
"""Serve a folder over HTTP/1.0 the way issue 19's misbehaving proxy does: a `.pkg` is sent
whole, then EXTRA bytes of zeros, with no Content-Length (the body ends when the connection
closes); everything else is served normally. Prints the port on stdout once it listens.

    python3 overlong_server.py ROOT [EXTRA_BYTES]
"""
import http.server
import os
import socketserver
import sys

ROOT = sys.argv[1]
EXTRA = int(sys.argv[2]) if len(sys.argv) > 2 else 6 << 20


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=ROOT, **kwargs)

    def log_message(self, *args):
        pass

    def do_GET(self):
        if not self.path.endswith(".pkg"):
            return super().do_GET()
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            return self.send_error(404)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        try:
            with open(path, "rb") as f:
                while True:
                    chunk = f.read(1 << 16)
                    if not chunk:
                        break
                    self.wfile.write(chunk)
            zeros = bytes(1 << 16)
            sent = 0
            while sent < EXTRA:
                self.wfile.write(zeros[: min(len(zeros), EXTRA - sent)])
                sent += min(len(zeros), EXTRA - sent)
        except (BrokenPipeError, ConnectionResetError):
            pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


with Server(("127.0.0.1", 0), Handler) as server:
    print(server.server_address[1], flush=True)
    server.serve_forever()
