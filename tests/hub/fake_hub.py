#!/usr/bin/env python3
"""A stand-in for the Hugging Face hub's HTTP API on loopback, for the
tests of `vlm pull` and of the cache vlm shares with huggingface_hub
(tests/cli/hub.sh, tests/hub/test_shared_cache.py).

  fake_hub.py --port-file FILE --repo ORG/NAME=DIR [--repo ...] [--mode ORG/NAME=MODE ...]

Each repository is a directory served at one commit (a sha1 of its files),
as the hub answers:
  GET  /api/models/ORG/NAME/revision/REV[?blobs=true]  model info: sha, siblings
       (rfilename, size, blobId, lfs {sha256, size, pointerSize}), gated
  HEAD|GET /ORG/NAME/resolve/REV/FILE  a git file: 200 with ETag (its git blob
       sha1), X-Repo-Commit, Content-Length; an LFS file (*.safetensors): 302
       to /cdn/<sha256> (another path, as the hub sends to its CDN host) with
       X-Linked-Etag (the sha256), X-Linked-Size, X-Repo-Commit, ETag (the
       pointer's)
  GET  /cdn/<sha256>  the bytes, with Range (206)
REV is main, the tag v1.0 or the commit. Modes, per repository:
--alias OLD=NEW answers every request for OLD with a relative 307 to NEW (a
renamed repository).
  interrupt  the first GET of each LFS file's bytes stops halfway (closes)
  interrupt-norange  the same, and the CDN then ignores Range (a 200 with it all)
  oversize   the CDN sends 4 KiB more than X-Linked-Size announces
  badsum     the CDN serves LFS bytes with one byte changed
  private    401 (X-Error-Code: RepoNotFound) without "Bearer good-token"
  gated      the model info (with "gated": "manual") to anyone, as the hub;
             its files 401 GatedRepo without a token, 403 GatedRepo with a
             token other than "Bearer gated-ok"
The log of requests goes to stderr.
"""
import argparse
import hashlib
import json
import os
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def git_blob_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def is_lfs(name):
    return name.endswith(".safetensors")


class Repo:
    def __init__(self, name, directory, mode):
        self.name, self.mode = name, mode
        self.files = {}
        for root, _, files in os.walk(directory):
            for file in sorted(files):
                path = os.path.join(root, file)
                self.files[os.path.relpath(path, directory)] = open(path, "rb").read()
        digest = hashlib.sha1()
        for key in sorted(self.files):
            digest.update(key.encode() + b"\0" + hashlib.sha256(self.files[key]).digest())
        self.commit = digest.hexdigest()
        self.interrupted = set()

    def pointer(self, data):
        return (f"version https://git-lfs.github.com/spec/v1\noid sha256:{hashlib.sha256(data).hexdigest()}\n"
                f"size {len(data)}\n").encode()

    def tree(self):
        """GET /api/models/ORG/NAME/tree/REV?recursive=true: what
        huggingface_hub's snapshot_download lists (one page)."""
        entries, folders = [], set()
        for name in sorted(self.files):
            data = self.files[name]
            parts = name.split("/")
            for depth in range(1, len(parts)):
                folders.add("/".join(parts[:depth]))
            entry = {"type": "file", "path": name, "size": len(data)}
            if is_lfs(name):
                pointer = self.pointer(data)
                entry.update(oid=git_blob_sha1(pointer), lfs={"oid": hashlib.sha256(data).hexdigest(),
                                                              "size": len(data), "pointerSize": len(pointer)})
            else:
                entry["oid"] = git_blob_sha1(data)
            entries.append(entry)
        return [{"type": "directory", "path": folder, "oid": "0" * 40} for folder in sorted(folders)] + entries

    def info(self, blobs):
        siblings = []
        for name in sorted(self.files):
            data = self.files[name]
            entry = {"rfilename": name}
            if blobs:
                if is_lfs(name):
                    pointer = self.pointer(data)
                    entry.update(size=len(data), blobId=git_blob_sha1(pointer),
                                 lfs={"sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
                                      "pointerSize": len(pointer)})
                else:
                    entry.update(size=len(data), blobId=git_blob_sha1(data))
            siblings.append(entry)
        return {"_id": "0" * 24, "id": self.name, "modelId": self.name, "sha": self.commit, "private": False,
                "gated": "manual" if self.mode == "gated" else False, "disabled": False, "tags": [],
                "siblings": siblings, "lastModified": "2026-01-01T00:00:00.000Z"}


class Handler(BaseHTTPRequestHandler):
    server_version = "fake-hub/1"

    def log_message(self, format, *args):
        extra = "".join(" %s=%s" % (key, self.headers[key]) for key in ("Range",) if self.headers.get(key))
        if self.headers.get("Authorization"):
            extra += " authorized"
        sys.stderr.write("fake_hub: %s %s%s\n" % (self.command, self.path, extra))

    def send(self, status, headers, body=b"", head=False):
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def error(self, status, code, message, head=False):
        body = json.dumps({"error": message}).encode()
        self.send(status, {"X-Error-Code": code, "X-Error-Message": message,
                           "Content-Type": "application/json"}, body, head)

    def authorized(self, repo, head, listing=False):
        token = self.headers.get("Authorization")
        if repo.mode == "private" and token != "Bearer good-token":
            self.error(401, "RepoNotFound", "Repository Not Found for url: %s." % self.path, head)
            return False
        if repo.mode == "gated" and listing:
            return True  # the hub lists a gated model's files to anyone (model info says "gated")
        if repo.mode == "gated" and token is None:
            self.error(401, "GatedRepo", "Access to model %s is restricted. You must have access to it "
                       "and be authenticated to access it. Please log in." % repo.name, head)
            return False
        if repo.mode == "gated" and token != "Bearer gated-ok":
            self.error(403, "GatedRepo", "Access to model %s is restricted and you are not in the authorized "
                       "list. Visit https://huggingface.co/%s to ask for access." % (repo.name, repo.name), head)
            return False
        return True

    def find_repo(self, parts):
        name = "/".join(parts[:2])
        return self.server.repos.get(name)

    def revision_ok(self, repo, revision):
        return revision in ("main", "v1.0", repo.commit)

    def do_HEAD(self):
        self.route(head=True)

    def do_GET(self):
        self.route(head=False)

    def route(self, head):
        for old, new in self.server.aliases.items():
            for prefix in ("/api/models/" + old + "/", "/" + old + "/"):
                if self.path.startswith(prefix):
                    # A renamed repository: a relative 307 to the new name.
                    target = prefix.replace(old, new) + self.path[len(prefix):]
                    return self.send(307, {"Location": target}, b"", head)
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        parts = [urllib.parse.unquote(part) for part in url.path.strip("/").split("/")]
        if parts[:2] == ["api", "models"] and len(parts) >= 3:
            rest = parts[2:]
            repo = self.find_repo(rest)
            if not repo:
                return self.error(401, "RepoNotFound", "Repository Not Found", head)
            if not self.authorized(repo, head, listing=True):
                return
            revision = "main"
            if len(rest) >= 4 and rest[2] == "tree":
                if not self.revision_ok(repo, rest[3]):
                    return self.error(404, "RevisionNotFound", "Invalid rev id: %s" % rest[3], head)
                body = json.dumps(repo.tree()).encode()
                return self.send(200, {"Content-Type": "application/json"}, body, head)
            if len(rest) >= 4 and rest[2] == "revision":
                revision = "/".join(rest[3:])
            if not self.revision_ok(repo, revision):
                return self.error(404, "RevisionNotFound", "Invalid rev id: %s" % revision, head)
            blobs = query.get("blobs", ["false"])[0].lower() == "true"
            body = json.dumps(repo.info(blobs)).encode()
            return self.send(200, {"Content-Type": "application/json"}, body, head)
        if parts[0] == "cdn" and len(parts) == 3:
            return self.cdn(parts[1], parts[2], head)
        if len(parts) >= 5 and parts[2] == "resolve":
            repo = self.find_repo(parts)
            if not repo:
                return self.error(401, "RepoNotFound", "Repository Not Found", head)
            if not self.authorized(repo, head):
                return
            revision, name = parts[3], "/".join(parts[4:])
            if not self.revision_ok(repo, revision):
                return self.error(404, "RevisionNotFound", "Invalid rev id: %s" % revision, head)
            if name not in repo.files:
                return self.error(404, "EntryNotFound", "Entry not found", head)
            data = repo.files[name]
            common = {"X-Repo-Commit": repo.commit, "Accept-Ranges": "bytes"}
            if is_lfs(name):
                sha = hashlib.sha256(data).hexdigest()
                pointer = repo.pointer(data)
                location = "http://localhost:%d/cdn/%s/%s" % (self.server.server_address[1],
                                                      urllib.parse.quote(repo.name, safe=""), sha)
                return self.send(302, dict(common, **{"X-Linked-Etag": '"%s"' % sha, "X-Linked-Size": str(len(data)),
                                                       "ETag": '"%s"' % git_blob_sha1(pointer), "Location": location}),
                                 b"", head)
            return self.send_range(200, dict(common, ETag='"%s"' % git_blob_sha1(data)), data, head)
        return self.error(404, "EntryNotFound", "no route", head)

    def cdn(self, repo_name, sha, head):
        repo = self.server.repos.get(urllib.parse.unquote(repo_name))
        data = next((d for n, d in repo.files.items() if is_lfs(n) and hashlib.sha256(d).hexdigest() == sha),
                    None) if repo else None
        if data is None:
            return self.error(404, "EntryNotFound", "no such object", head)
        if repo.mode == "badsum":
            data = bytearray(data)
            data[len(data) // 2] ^= 0xFF
            data = bytes(data)
        if repo.mode == "oversize":
            data = data + b"\0" * 4096
        if repo.mode in ("interrupt", "interrupt-norange") and not head and sha not in repo.interrupted:
            repo.interrupted.add(sha)
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("ETag", '"%s"' % sha)
            self.end_headers()
            self.wfile.write(data[:len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if repo.mode == "interrupt-norange":
            return self.send(200, {"ETag": '"%s"' % sha}, data, head)  # the whole file, whatever the Range
        return self.send_range(200, {"ETag": '"%s"' % sha, "Accept-Ranges": "bytes"}, data, head)

    def send_range(self, status, headers, data, head):
        wanted = self.headers.get("Range")
        if wanted and wanted.startswith("bytes=") and not head:
            start_text, _, end_text = wanted[6:].partition("-")
            start = int(start_text)
            end = int(end_text) if end_text else len(data) - 1
            if start >= len(data):
                return self.send(416, {"Content-Range": "bytes */%d" % len(data)}, b"")
            headers = dict(headers, **{"Content-Range": "bytes %d-%d/%d" % (start, end, len(data))})
            return self.send(206, headers, data[start:end + 1])
        return self.send(status, headers, data, head)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--mode", action="append", default=[])
    parser.add_argument("--alias", action="append", default=[], help="OLD=NEW: a renamed repository")
    arguments = parser.parse_args()
    modes = dict(entry.split("=", 1) for entry in arguments.mode)
    repos = {}
    for entry in arguments.repo:
        name, directory = entry.split("=", 1)
        repos[name] = Repo(name, directory, modes.get(name, ""))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.repos = repos
    server.aliases = dict(entry.split("=", 1) for entry in arguments.alias)
    with open(arguments.port_file + ".tmp", "w") as file:
        file.write(str(server.server_address[1]))
    os.rename(arguments.port_file + ".tmp", arguments.port_file)
    threading.current_thread().name = "fake_hub"
    server.serve_forever()


if __name__ == "__main__":
    main()
