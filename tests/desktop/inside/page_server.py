#!/usr/bin/python3
"""Serves fields.html on 127.0.0.1:PORT and appends every POST /log body (one JSON object) to LOG.
GET /cmd answers what the file LOG.cmd holds (removing it), "" when there is none: the session's way to
tell the page to move its focus by itself.

    page_server.py PORT LOG
"""
import http.server
import os
import sys

PORT, LOG = int(sys.argv[1]), sys.argv[2]
PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fields.html")


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/cmd":
            try:
                with open(LOG + ".cmd", "rb") as f:
                    body = f.read()
                os.unlink(LOG + ".cmd")
            except FileNotFoundError:
                body = b""
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        body = open(PAGE, "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(LOG, "ab") as f:
            f.write(data + b"\n")
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
