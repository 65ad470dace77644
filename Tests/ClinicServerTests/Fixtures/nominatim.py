"""A geocoder on 127.0.0.1 that speaks Nominatim's /search?format=jsonv2 protocol, for tests.

Knows one street address (the Children's Hospital's, in the test directory) and nothing else;
writes the port it listens on to the file given as its second argument, and logs each query
it is asked, one a line, to the file given as its first.
"""
import json
import os
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

LOG = sys.argv[1]
KNOWN = {"4650 sunset blvd, los angeles, ca 90027": {"lat": "34.0976", "lon": "-118.2903", "place_rank": 30,
                                                    "display_name": "4650 Sunset Boulevard, Los Angeles"}}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        query = urllib.parse.parse_qs(url.query).get("q", [""])[0]
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(query + "\n")
        answer = [KNOWN[query.lower()]] if url.path == "/search" and query.lower() in KNOWN else []
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[2] + ".tmp", "w", encoding="utf-8") as port:
    port.write(str(server.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
