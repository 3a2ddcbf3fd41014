#!/usr/bin/env python3
"""Builds the Gradescope autograder zip of one assignment (docs/grading.md, "Gradescope").

Usage: make_autograder_zip.py NN USER@HOST --key PRIVATE_KEY [--port PORT]
                              [--known-hosts FILE] [--handout PATH | --commit HASH]
                              [--timeout SECONDS] [--output ZIP]

The zip holds what Gradescope needs at its top level: setup.sh and run_autograder (this folder),
grading_key (the private key whose public half may run gpu_host_command.sh on the GPU host),
known_hosts (the GPU host's public keys), and grading.env (GRADE_LESSON, GRADE_SSH_TARGET,
GRADE_SSH_PORT, GRADE_TIMEOUT, GRADE_COMMIT).

known_hosts comes from `ssh-keyscan -p PORT HOST` unless --known-hosts names a file. Either way
it must hold a key for the host as ssh looks it up: `HOST` on port 22, `[HOST]:PORT` on another
port (ssh-keyscan writes that form; hashed lines, `|1|...`, are checked against it too).

GRADE_COMMIT pins the GPU host's checkout to the hand-out's commit: from --commit, from the
handout.json of --handout (a dist/homeworkNN folder or .tar.gz), or else this checkout's HEAD.

Exit status: 0 written; 2 bad usage or a known_hosts without the host (one line on stderr).
"""
import argparse
import base64
import hashlib
import hmac
import io
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

GRADESCOPE_DIR = Path(__file__).resolve().parent
COURSE = GRADESCOPE_DIR.parents[2]
DEFAULT_TIMEOUT = 1500         # run_autograder's GRADE_TIMEOUT
GRADESCOPE_MARGIN = 120        # Gradescope's own limit must be at least this much longer
TARGET = re.compile(r"(?:(?P<user>[A-Za-z0-9._-]+)@)?(?P<host>[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])")
COMMIT = re.compile(r"[0-9a-f]{7,40}")


class UsageError(Exception):
    """What the command line asks for cannot be done; the message says why (one line)."""


def known_hosts_name(host, port):
    """How ssh names the host in known_hosts: plain on port 22, [host]:port otherwise."""
    host = host.strip("[]")
    return host if port == 22 else f"[{host}]:{port}"


def line_names(field, name):
    """Whether a known_hosts line's first field (comma-separated names, or a hashed |1|salt|hash)
    names `name`."""
    for pattern in field.split(","):
        if pattern.startswith("|1|"):
            try:
                salt, digest = (base64.b64decode(part) for part in pattern[3:].split("|"))
            except ValueError:
                continue
            if hmac.compare_digest(hmac.new(salt, name.encode(), hashlib.sha1).digest(), digest):
                return True
        elif pattern == name:
            return True
    return False


def host_keys(known_hosts, host, port):
    """The lines of known_hosts that hold a key for the host at this port."""
    name = known_hosts_name(host, port)
    found = []
    for line in known_hosts.split("\n"):
        fields = line.split()
        if len(fields) >= 3 and not line.startswith("#"):
            if fields[0].startswith("@"):  # @cert-authority, @revoked
                continue
            if line_names(fields[0], name):
                found.append(line)
    return found


def keyscan(host, port):
    try:
        completed = subprocess.run(["ssh-keyscan", "-p", str(port), "-T", "15", host.strip("[]")],
                                   capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UsageError(f"ssh-keyscan failed ({error}); pass the host's keys with --known-hosts") from None
    return completed.stdout


def read_handout_commit(path):
    """The commit recorded in a hand-out's tests/grading/handout.json (a folder or a .tar.gz)."""
    path = Path(path)
    if path.is_dir():
        record = json.loads((path / "tests" / "grading" / "handout.json").read_text())
    else:
        with tarfile.open(path) as archive:
            member = next((member for member in archive.getmembers()
                           if member.name.endswith("tests/grading/handout.json")), None)
            if member is None:
                raise UsageError(f"{path} holds no tests/grading/handout.json")
            record = json.loads(archive.extractfile(member).read())
    if not record.get("commit"):
        raise UsageError(f"the hand-out {path} records no commit (built outside a git checkout?)")
    if record.get("uncommitted_changes"):
        raise UsageError(f"the hand-out {path} was built with uncommitted changes: the GPU host "
                         "cannot be pinned to it; commit, build it again, and use that one")
    return record["commit"]


def head_commit():
    completed = subprocess.run(["git", "rev-parse", "HEAD"], cwd=COURSE, capture_output=True, text=True)
    if completed.returncode != 0:
        raise UsageError("this is not a git checkout: pass --commit or --handout")
    return completed.stdout.strip()


def build_zip(output, lesson, user, host, port, key_text, known_hosts, commit, timeout):
    environment = (f"GRADE_LESSON={lesson:02d}\nGRADE_SSH_TARGET={user + '@' if user else ''}{host}\n"
                   f"GRADE_SSH_PORT={port}\nGRADE_TIMEOUT={timeout}\nGRADE_COMMIT={commit}\n")
    files = [("setup.sh", (GRADESCOPE_DIR / "setup.sh").read_text(), 0o755),
             ("run_autograder", (GRADESCOPE_DIR / "run_autograder").read_text(), 0o755),
             ("grading_key", key_text, 0o600),
             ("known_hosts", known_hosts, 0o644),
             ("grading.env", environment, 0o644)]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text, mode in files:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text)
    Path(output).write_bytes(buffer.getvalue())


def main(argv=None):
    parser = argparse.ArgumentParser(description="Build the Gradescope autograder zip of one lesson.")
    parser.add_argument("lesson", help="lesson number, e.g. 08")
    parser.add_argument("target", help="user@host of the GPU host")
    parser.add_argument("--key", type=Path, required=True, help="the private key for the GPU host")
    parser.add_argument("--port", type=int, default=22)
    parser.add_argument("--known-hosts", type=Path, help="the GPU host's keys (default: ssh-keyscan)")
    parser.add_argument("--handout", type=Path, help="the hand-out whose commit the host must be at")
    parser.add_argument("--commit", help="the commit the host must be at (default: this checkout's HEAD)")
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT,
                        help=f"GRADE_TIMEOUT, seconds (default {DEFAULT_TIMEOUT})")
    parser.add_argument("--output", type=Path, help="the zip (default: dist/autograderNN.zip)")
    args = parser.parse_args(argv)
    try:
        if not args.lesson.isdigit() or not 1 <= int(args.lesson) <= 99:
            raise UsageError(f"the lesson must be a number such as 08, not '{args.lesson}'")
        lesson = int(args.lesson)
        target = TARGET.fullmatch(args.target)
        if not target:
            raise UsageError(f"the target must be user@host, not '{args.target}'")
        if not 1 <= args.port <= 65535 or args.timeout <= 60:
            raise UsageError("--port must be 1-65535 and --timeout above 60 s")
        try:
            key_text = args.key.read_text()
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"cannot read the key {args.key}: {error}") from None
        if "PRIVATE KEY-----" not in key_text:
            raise UsageError(f"{args.key} is not a private key (no '-----BEGIN ... PRIVATE KEY-----')")
        if args.known_hosts:
            try:
                known_hosts = args.known_hosts.read_text()
            except OSError as error:
                raise UsageError(f"cannot read {args.known_hosts}: {error}") from None
        else:
            known_hosts = keyscan(target["host"], args.port)
        name = known_hosts_name(target["host"], args.port)
        if not host_keys(known_hosts, target["host"], args.port):
            raise UsageError(f"known_hosts has no key for {name} (ssh looks the host up as "
                             f"'{name}'; ssh-keyscan -p {args.port} {target['host'].strip('[]')} writes it)")
        commit = args.commit or (read_handout_commit(args.handout) if args.handout else head_commit())
        if not COMMIT.fullmatch(commit):
            raise UsageError(f"'{commit}' is not a commit hash")
    except (UsageError, ValueError, OSError, tarfile.TarError) as error:
        print(f"make_autograder_zip: {error}", file=sys.stderr)
        return 2
    output = args.output or COURSE / "dist" / f"autograder{lesson:02d}.zip"
    output.parent.mkdir(parents=True, exist_ok=True)
    build_zip(output, lesson, target["user"], target["host"], args.port, key_text,
              "\n".join(host_keys(known_hosts, target["host"], args.port)) + "\n", commit, args.timeout)
    print(f"make_autograder_zip: wrote {output} (lesson {lesson:02d}, {args.target}, port {args.port}, "
          f"commit {commit[:12]}); set the assignment's autograder timeout to at least "
          f"{args.timeout + GRADESCOPE_MARGIN} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
