"""The Gradescope set-up (tests/grading/gradescope/) without a network or a GPU: run_autograder's
transport failures and its request, the GPU host's command (gpu_host.py: the request, the pin to
the hand-out's commit, a free GPU picked by its slot lock, the kept copy and the regrade), the
autograder zip (make_autograder_zip.py, with a fake key and a known_hosts file instead of
ssh-keyscan), and timeouts that add up."""
import base64
import contextlib
import fcntl
import hashlib
import hmac
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
GRADESCOPE = REPOSITORY / "tests" / "grading" / "gradescope"
sys.path.insert(0, str(REPOSITORY / "tests" / "grading"))
sys.path.insert(0, str(GRADESCOPE))

import gpu_host  # noqa: E402  (after the path is set)
import homework  # noqa: E402
import make_autograder_zip  # noqa: E402
import runs  # noqa: E402

FAKE_GRADER = REPOSITORY / "tests" / "tools" / "fixtures" / "grading" / "fake_grader.py"
FAKE_KEY = ("-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEgcmVhbCBrZXk=\n"
            "-----END OPENSSH PRIVATE KEY-----\n")
HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyOfTheGpuHostForTheTestsOnly0000000000"


def git(folder, *arguments):
    return subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.com", *arguments],
                          cwd=folder, check=True, capture_output=True, text=True).stdout.strip()


class Autograder(unittest.TestCase):
    """run_autograder always leaves a results.json, whatever happens to the transport."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.root = Path(self.folder.name)
        (self.root / "submission").mkdir()
        (self.root / "submission" / "kernel.cuh").write_text("// a submission\n")
        (self.root / "source").mkdir()
        (self.root / "source" / "grading_key").write_text("not a real key\n")
        self.bin = self.root / "bin"
        self.bin.mkdir()

    def tearDown(self):
        self.folder.cleanup()

    def fake_ssh(self, script):
        ssh = self.bin / "ssh"
        ssh.write_text("#!/bin/sh\n" + script + "\n")
        ssh.chmod(0o755)

    def run_autograder(self, **settings):
        environment = {"PATH": f"{self.bin}:{os.environ['PATH']}", "AUTOGRADER_ROOT": str(self.root),
                       "GRADE_LESSON": "08", "GRADE_SSH_TARGET": "grader@gpu-host", **settings}
        completed = subprocess.run(["bash", str(GRADESCOPE / "run_autograder")], env=environment,
                                   capture_output=True, text=True, timeout=60)
        return completed.returncode, json.loads((self.root / "results" / "results.json").read_text())

    def assert_transport_failure(self, results, words):
        self.assertIn("INFRASTRUCTURE ERROR", results["output"])
        self.assertIn(words, results["output"])
        self.assertEqual(results["tests"][0]["name"], "grading did not finish")
        self.assertNotIn("score", results)

    def test_missing_settings(self):
        code, results = self.run_autograder(GRADE_SSH_TARGET="")
        self.assertNotEqual(code, 0)
        self.assert_transport_failure(results, "GRADE_SSH_TARGET")

    def test_a_host_that_sends_garbage(self):
        self.fake_ssh("cat > /dev/null; echo 'Connection closed'; exit 255")
        code, results = self.run_autograder()
        self.assert_transport_failure(results, "no valid results.json")

    def test_a_host_that_does_not_answer(self):
        self.fake_ssh("sleep 30")
        code, results = self.run_autograder(GRADE_TIMEOUT="2", GRADE_TRANSFER_SECONDS="1")
        self.assert_transport_failure(results, "did not answer within 2 s")

    def test_a_host_that_grades(self):
        answer = {"score": 87.5, "tests": [], "output": "graded"}
        self.fake_ssh(f"cat > /dev/null; echo '{json.dumps(answer)}'")
        code, results = self.run_autograder()
        self.assertEqual(code, 0)
        self.assertEqual(results, answer)

    def test_the_request_carries_the_budget_the_commit_and_the_port(self):
        arguments = self.root / "arguments"
        self.fake_ssh(f'cat > /dev/null; printf "%s\\n" "$@" > {arguments}; echo \'{{"tests": []}}\'')
        code, _ = self.run_autograder(GRADE_TIMEOUT="1500", GRADE_SSH_PORT="2222", GRADE_COMMIT="0123abcd")
        self.assertEqual(code, 0)
        given = arguments.read_text().split("\n")
        self.assertIn("grade 08 budget=1440 commit=0123abcd", given)
        self.assertEqual(given[given.index("-p") + 1], "2222")

    def test_a_bad_commit_is_refused(self):
        code, results = self.run_autograder(GRADE_COMMIT="HEAD; rm -rf /")
        self.assert_transport_failure(results, "GRADE_COMMIT is not a commit hash")


class HostRequest(unittest.TestCase):
    def test_requests(self):
        self.assertEqual(gpu_host.parse_request("grade 08"), (8, 1440, None))
        self.assertEqual(gpu_host.parse_request("grade 8 budget=900 commit=0123abc"), (8, 900, "0123abc"))
        self.assertEqual(gpu_host.parse_request("grade 08 budget=99999")[1], 3600)
        for bad in ("rm -rf /", "grade 08; ls", "grade 123", "grade 08 commit=HEAD", ""):
            with self.subTest(bad), self.assertRaises(runs.InfrastructureError):
                gpu_host.parse_request(bad)

    def test_the_command_refuses_anything_but_a_grade_request(self):
        completed = subprocess.run(["bash", str(GRADESCOPE / "gpu_host_command.sh")], input="",
                                   env={**os.environ, "SSH_ORIGINAL_COMMAND": "rm -rf /",
                                        "GRADE_HOST_SETTINGS": "/nonexistent"},
                                   capture_output=True, text=True, timeout=60)
        self.assertNotEqual(completed.returncode, 0)
        results = json.loads(completed.stdout)
        self.assertIn("expected 'grade NN", results["output"])
        self.assertNotIn("score", results)


class Pin(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.course = Path(self.folder.name)
        (self.course / "file.txt").write_text("one\n")
        git(self.course, "init", "-q")
        git(self.course, "add", "-A")
        git(self.course, "commit", "-q", "-m", "one")
        self.head = git(self.course, "rev-parse", "HEAD")

    def tearDown(self):
        self.folder.cleanup()

    def test_the_checkout_at_the_commit_grades(self):
        gpu_host.check_pinned(self.course, self.head)
        gpu_host.check_pinned(self.course, self.head[:7])
        (self.course / "untracked.txt").write_text("build output\n")
        gpu_host.check_pinned(self.course, self.head)

    def test_another_commit_is_refused_with_the_fix(self):
        with self.assertRaisesRegex(runs.InfrastructureError, r"is at .* but the hand-out was built from "
                                    r"0000000: pin it with `git -C .* checkout 0000000"):
            gpu_host.check_pinned(self.course, "0000000")

    def test_changed_tracked_files_are_refused(self):
        (self.course / "file.txt").write_text("two\n")
        with self.assertRaisesRegex(runs.InfrastructureError, "uncommitted changes"):
            gpu_host.check_pinned(self.course, self.head)


class Host(unittest.TestCase):
    """The whole command, through gpu_host_command.sh, with a fake grade.py."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = Path(self.folder.name)
        (self.dir / "secret").write_text("a secret\n")
        self.environment = {**os.environ, "GRADE_GPUS": "0 1", "GRADE_LOCK_DIR": str(self.dir),
                            "GRADE_ARCHIVE_DIR": str(self.dir / "archive"), "GRADE_GRADER": str(FAKE_GRADER),
                            "GRADE_SECRET_FILE": str(self.dir / "secret"),
                            "GRADE_HOST_SETTINGS": "/nonexistent", "GRADE_SLOT_WAIT": "2"}

    def tearDown(self):
        self.folder.cleanup()

    def request(self, request, **settings):
        completed = subprocess.run(["bash", str(GRADESCOPE / "gpu_host_command.sh")], input=b"submission bytes",
                                   env={**self.environment, "SSH_ORIGINAL_COMMAND": request, **settings},
                                   capture_output=True, timeout=60)
        return completed.returncode, json.loads(completed.stdout)

    @contextlib.contextmanager
    def busy(self, gpu):
        with open(self.dir / f"gemm-grading-slot-{gpu}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def test_a_grade_on_the_free_gpu_within_the_budget_is_kept(self):
        with self.busy(0):
            code, results = self.request("grade 08 budget=600")
        self.assertEqual(code, 0, results)
        given = json.loads(results["output"])
        self.assertEqual((given["lesson"], given["gpu"]), ("08", "1"))
        self.assertTrue(given["build_dir"].endswith("build-grading-gpu1"))
        self.assertTrue(590 <= given["deadline"] <= 600, given)
        kept, = (self.dir / "archive").iterdir()
        self.assertEqual((kept / "submission.tar.gz").read_bytes(), b"submission bytes")
        self.assertEqual(json.loads((kept / "request.json").read_text()),
                         {"lesson": 8, "budget": 600, "commit": None})
        self.assertTrue((kept / "summary.txt").is_file() and (kept / "grade.log").is_file())

    def test_all_gpus_busy_is_an_infrastructure_error_in_time(self):
        started = time.monotonic()
        with self.busy(0), self.busy(1):
            code, results = self.request("grade 08 budget=700")
        self.assertLess(time.monotonic() - started, 30)
        self.assertNotEqual(code, 0)
        self.assertIn("all 2 GPU(s) of the grading host (0 1) stayed busy for 2 s", results["output"])

    def test_the_slot_wait_leaves_the_grade_its_time(self):
        with self.busy(0), self.busy(1):
            started = time.monotonic()
            code, results = self.request("grade 08 budget=601", GRADE_SLOT_WAIT="600")
        self.assertLess(time.monotonic() - started, 30)  # 601 - GRADE_MIN_GRADE_SECONDS = 1 s of waiting
        self.assertIn("stayed busy for 1 s", results["output"])

    def test_a_grader_without_results_is_an_infrastructure_error(self):
        code, results = self.request("grade 08", FAKE_GRADER_MODE="silent")
        self.assertNotEqual(code, 0)
        self.assertIn("the grader wrote no results.json", results["output"])

    def test_a_host_not_at_the_handouts_commit_refuses(self):
        # The host compares the hand-out's commit with its own checkout's: it needs a clone.
        if not homework.is_course_checkout(REPOSITORY):
            self.skipTest(homework.NOT_A_CHECKOUT_REASON)
        code, results = self.request("grade 08 budget=600 commit=0000000")
        self.assertNotEqual(code, 0)
        self.assertIn("but the hand-out was built from 0000000: pin it with", results["output"])
        self.assertFalse((self.dir / "archive").exists())

    def test_no_secret_no_grade(self):
        code, results = self.request("grade 08", GRADE_SECRET_FILE=str(self.dir / "missing"))
        self.assertIn("no secret at", results["output"])

    def test_a_kept_submission_is_graded_again_with_one_command(self):
        self.request("grade 08 budget=600")
        kept, = (self.dir / "archive").iterdir()
        completed = subprocess.run([sys.executable, str(GRADESCOPE / "gpu_host.py"), "--regrade", str(kept)],
                                   env=self.environment, capture_output=True, text=True, timeout=60)
        self.assertEqual(completed.returncode, 0, completed.stdout + completed.stderr)
        self.assertEqual(json.loads(json.loads(completed.stdout)["output"])["lesson"], "08")
        self.assertEqual(len(list(kept.glob("results-*"))), 2)


class AutograderZip(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = Path(self.folder.name)
        self.key = self.dir / "grading_key"
        self.key.write_text(FAKE_KEY)

    def tearDown(self):
        self.folder.cleanup()

    def make(self, *arguments):
        stderr, stdout = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
            status = make_autograder_zip.main([str(argument) for argument in arguments])
        return status, stdout.getvalue(), stderr.getvalue()

    def known_hosts(self, text):
        path = self.dir / "known_hosts"
        path.write_text(text)
        return path

    def test_the_zip_holds_what_gradescope_runs(self):
        hosts = self.known_hosts(f"[gpu.example.edu]:2222 {HOST_KEY}\nother.example.edu {HOST_KEY}\n")
        output = self.dir / "autograder.zip"
        status, printed, _ = self.make("08", "grader@gpu.example.edu", "--key", self.key, "--port", 2222,
                                       "--known-hosts", hosts, "--commit", "0123abcd", "--output", output)
        self.assertEqual(status, 0)
        self.assertIn("at least 1620 s", printed)
        with zipfile.ZipFile(output) as archive:
            names = {info.filename: (info.external_attr >> 16) & 0o777 for info in archive.infolist()}
            self.assertEqual(names, {"setup.sh": 0o755, "run_autograder": 0o755, "grading_key": 0o600,
                                     "known_hosts": 0o644, "grading.env": 0o644})
            self.assertEqual(archive.read("grading_key").decode(), FAKE_KEY)
            self.assertEqual(archive.read("known_hosts").decode(), f"[gpu.example.edu]:2222 {HOST_KEY}\n")
            self.assertEqual(archive.read("grading.env").decode(),
                             "GRADE_LESSON=08\nGRADE_SSH_TARGET=grader@gpu.example.edu\nGRADE_SSH_PORT=2222\n"
                             "GRADE_TIMEOUT=1500\nGRADE_COMMIT=0123abcd\n")
            self.assertEqual(archive.read("run_autograder"), (GRADESCOPE / "run_autograder").read_bytes())

    def test_the_host_must_be_in_known_hosts_in_the_form_ssh_looks_up(self):
        hosts = self.known_hosts(f"gpu.example.edu {HOST_KEY}\n")
        status, _, error = self.make("08", "grader@gpu.example.edu", "--key", self.key, "--port", 2222,
                                     "--known-hosts", hosts, "--commit", "0123abcd", "--output", self.dir / "z.zip")
        self.assertEqual(status, 2)
        self.assertEqual(len(error.strip().split("\n")), 1)
        self.assertIn("no key for [gpu.example.edu]:2222", error)
        status, _, _ = self.make("08", "grader@gpu.example.edu", "--key", self.key, "--known-hosts", hosts,
                                 "--commit", "0123abcd", "--output", self.dir / "z.zip")
        self.assertEqual(status, 0)

    def test_hashed_known_hosts_lines_are_matched(self):
        salt = b"0123456789abcdefghij"
        digest = hmac.new(salt, b"[gpu.example.edu]:2222", hashlib.sha1).digest()
        hashed = f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()} {HOST_KEY}\n"
        self.assertEqual(make_autograder_zip.host_keys(hashed, "gpu.example.edu", 2222), [hashed.strip()])
        self.assertEqual(make_autograder_zip.host_keys(hashed, "gpu.example.edu", 22), [])

    def test_not_a_key_and_a_handout_commit(self):
        hosts = self.known_hosts(f"gpu.example.edu {HOST_KEY}\n")
        self.key.write_text("ssh-ed25519 AAAA a public key\n")
        status, _, error = self.make("08", "grader@gpu.example.edu", "--key", self.key, "--known-hosts", hosts,
                                     "--commit", "0123abcd")
        self.assertEqual(status, 2)
        self.assertIn("is not a private key", error)
        self.key.write_text(FAKE_KEY)
        handout = self.dir / "homework08"
        (handout / "tests" / "grading").mkdir(parents=True)
        (handout / "tests" / "grading" / "handout.json").write_text(json.dumps(
            {"lesson": 8, "commit": "89abcdef" * 5, "uncommitted_changes": False}))
        output = self.dir / "z.zip"
        status, _, _ = self.make("08", "grader@gpu.example.edu", "--key", self.key, "--known-hosts", hosts,
                                 "--handout", handout, "--output", output)
        self.assertEqual(status, 0)
        with zipfile.ZipFile(output) as archive:
            self.assertIn(f"GRADE_COMMIT={'89abcdef' * 5}\n", archive.read("grading.env").decode())


class Timeouts(unittest.TestCase):
    """Gradescope's limit > GRADE_TIMEOUT > the host's budget = slot wait + grade.py's deadline."""

    def test_the_defaults_agree(self):
        run_autograder = (GRADESCOPE / "run_autograder").read_text()
        timeout = int(re.search(r'timeout_seconds="\$\{GRADE_TIMEOUT:-(\d+)\}"', run_autograder)[1])
        transfer = int(re.search(r'transfer_seconds="\$\{GRADE_TRANSFER_SECONDS:-(\d+)\}"', run_autograder)[1])
        self.assertEqual(timeout, make_autograder_zip.DEFAULT_TIMEOUT)
        self.assertEqual(timeout - transfer, gpu_host.DEFAULTS["GRADE_DEFAULT_BUDGET"])
        self.assertGreater(transfer, gpu_host.KILL_MARGIN_SECONDS)
        self.assertGreater(gpu_host.DEFAULTS["GRADE_DEFAULT_BUDGET"],
                           gpu_host.DEFAULTS["GRADE_SLOT_WAIT"] + gpu_host.DEFAULTS["GRADE_MIN_GRADE_SECONDS"] - 1)
        docs = (REPOSITORY / "docs" / "grading.md").read_text()
        for figure in (timeout, timeout + make_autograder_zip.GRADESCOPE_MARGIN, timeout - transfer,
                       gpu_host.DEFAULTS["GRADE_SLOT_WAIT"], gpu_host.DEFAULTS["GRADE_MIN_GRADE_SECONDS"]):
            self.assertTrue(f"{figure} s" in docs, f"docs/grading.md does not state {figure} s")


if __name__ == "__main__":
    unittest.main()
