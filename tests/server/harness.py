"""Starting `vlm serve` and talking to it over raw HTTP, for test_server.py
and bench/serve_bench.py. Standard library only."""
import http.client
import json
import os
import re
import signal
import subprocess
import threading
import time

LISTENING = re.compile(r"listening on http://(\[[^\]]+\]|[^:]+):(\d+)")


class Server:
    """One `vlm serve --port 0` process; the port is read from its
    "listening on http://HOST:PORT" line on stderr."""

    def __init__(self, vlm, model_dir, *arguments, env=None, start_timeout=180):
        command = [vlm, "serve", "--model", model_dir, "--port", "0", *arguments]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True, errors="replace",
                                        env=env)
        self.stderr_lines = []
        self.host = None
        self.port = None
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        if not self._ready.wait(start_timeout) or self.port is None:
            self.process.kill()
            self.process.wait()
            raise RuntimeError("vlm serve did not start: " + "".join(self.stderr_lines))

    def _read_stderr(self):
        for line in self.process.stderr:
            self.stderr_lines.append(line)
            match = LISTENING.search(line)
            if match and self.port is None:
                self.host = match.group(1).strip("[]")
                self.port = int(match.group(2))
                self._ready.set()
        self._ready.set()  # exited before listening

    @property
    def pid(self):
        return self.process.pid

    def base_url(self):
        return f"http://{self.host}:{self.port}/v1"

    def stop(self, signal_number=signal.SIGTERM, timeout=120):
        """Sends the signal and returns the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal_number)
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = self.process.wait()
        self._reader.join(5)
        self.process.stderr.close()
        return status

    def stderr(self):
        return "".join(self.stderr_lines)

    def connection(self, timeout=120):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, timeout=120):
        """One request on a new connection: (status, headers, body bytes)."""
        connection = self.connection(timeout)
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
                headers = {"Content-Type": "application/json", **(headers or {})}
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def post_json(self, path, body, headers=None):
        status, response_headers, data = self.request("POST", path, body, headers)
        return status, json.loads(data) if data else None

    def metrics(self, headers=None):
        status, _, data = self.request("GET", "/metrics", headers=headers)
        if status != 200:
            raise RuntimeError(f"/metrics answered {status}")
        return parse_metrics(data.decode())

    def rss_bytes(self):
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def uses_asan(self):
        with open(f"/proc/{self.pid}/maps") as maps:
            return "libasan" in maps.read()

    def wait_idle(self, timeout=60, headers=None):
        """Waits until no slot is active and nothing is queued; returns the metrics."""
        deadline = time.monotonic() + timeout
        while True:
            metrics = self.metrics(headers)
            if metrics.get("vlm_active_slots", 0) == 0 and metrics.get("vlm_queue_depth", 0) == 0 \
                    and metrics.get("vlm_requests_in_flight", 0) == 0:
                return metrics
            if time.monotonic() > deadline:
                raise AssertionError(f"server not idle after {timeout} s: {metrics}")
            time.sleep(0.05)


def parse_metrics(text):
    """Prometheus text -> {"name{labels}": value}."""
    values = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        values[name] = float(value)
    return values


def parse_sse(data):
    """The "data: ..." payloads of an SSE body, in order (JSON decoded,
    except the final "[DONE]")."""
    events = []
    text = data.decode() if isinstance(data, bytes) else data
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        assert block.startswith("data: "), f"not an SSE data event: {block!r}"
        payload = block[len("data: "):]
        events.append(payload if payload == "[DONE]" else json.loads(payload))
    return events


def data_url(path):
    import base64
    mime = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
            ".webp": "image/webp", ".gif": "image/gif"}[os.path.splitext(path)[1].lower()]
    with open(path, "rb") as image:
        return f"data:{mime};base64," + base64.b64encode(image.read()).decode()
