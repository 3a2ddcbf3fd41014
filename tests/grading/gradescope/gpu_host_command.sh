#!/usr/bin/env bash
# The one command the Gradescope key may run on the GPU host (docs/grading.md, "Gradescope"):
# put it in that key's line of ~/.ssh/authorized_keys as
#
#   command="/path/to/course/tests/grading/gradescope/gpu_host_command.sh",no-port-forwarding,no-X11-forwarding,no-agent-forwarding,no-pty ssh-ed25519 AAAA...
#
# ssh then runs it whatever the client asked; the request is in SSH_ORIGINAL_COMMAND and must be
# "grade NN". It reads the submission (a .tar.gz) from standard input, grades it with
# tests/grading/grade.py, and writes results.json to standard output. The secret stays on this
# host: GRADE_SECRET_FILE (default ~/.config/gemm-grading/secret).
set -u

course=$(cd "$(dirname "$0")/../../.." && pwd)
max_bytes=$((20 * 1024 * 1024))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  python3 - "$1" <<'PY'
import json, sys
print(json.dumps({"output": "GRADING INFRASTRUCTURE ERROR on the GPU host: " + sys.argv[1],
                  "visibility": "visible", "stdout_visibility": "hidden",
                  "tests": [{"name": "grading did not finish", "score": 0, "max_score": 0,
                             "status": "failed", "visibility": "visible", "output": sys.argv[1]}]}))
PY
  exit 1
}

request="${SSH_ORIGINAL_COMMAND:-}"
[[ "$request" =~ ^grade\ ([0-9]{1,2})$ ]] || fail "expected 'grade NN', got '$request'"
lesson="${BASH_REMATCH[1]}"
head -c $((max_bytes + 1)) > "$work/submission.tar.gz"
[ "$(stat -c %s "$work/submission.tar.gz")" -le $max_bytes ] || fail "the submission is larger than $max_bytes bytes"

export GRADE_SECRET_FILE="${GRADE_SECRET_FILE:-$HOME/.config/gemm-grading/secret}"
[ -r "$GRADE_SECRET_FILE" ] || fail "no secret at $GRADE_SECRET_FILE"
cd "$course" || fail "no course checkout at $course"
python3 tests/grading/grade.py "$lesson" "$work/submission.tar.gz" --results "$work/results" \
  > "$work/grade.log" 2>&1
[ -f "$work/results/results.json" ] || fail "the grader wrote no results.json: $(tail -c 1500 "$work/grade.log")"
# The teaching staff's copy of the report, next to the grader's own build tree.
archive="$course/build-grading/gradescope/$(date +%Y%m%d-%H%M%S)-lesson$lesson-$$"
mkdir -p "$archive" && cp "$work/results/summary.txt" "$work/results/results.json" "$work/grade.log" "$archive/"
cat "$work/results/results.json"
