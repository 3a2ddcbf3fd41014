#!/usr/bin/env bash
# The one command the Gradescope key may run on the GPU host (docs/grading.md, "Gradescope"):
# put it in that key's line of ~/.ssh/authorized_keys as
#
#   command="/path/to/course/tests/grading/gradescope/gpu_host_command.sh",no-port-forwarding,no-X11-forwarding,no-agent-forwarding,no-pty ssh-ed25519 AAAA...
#
# ssh then runs it whatever the client asked; the request is in SSH_ORIGINAL_COMMAND:
# "grade NN [budget=SECONDS] [commit=HASH]". gpu_host.py does the work: it checks the request and
# that this checkout is at the hand-out's commit, reads the submission from standard input, picks a
# free GPU, grades, keeps a copy, and writes results.json to standard output. The secret stays on
# this host (GRADE_SECRET_FILE, default ~/.config/gemm-grading/secret). Settings for this host (for
# example GRADE_GPUS="0 1 2 3") go in ~/.config/gemm-grading/host.env, as shell assignments.
set -u
settings="${GRADE_HOST_SETTINGS:-$HOME/.config/gemm-grading/host.env}"
if [ -f "$settings" ]; then
  set -a
  # shellcheck disable=SC1090
  . "$settings"
  set +a
fi
exec python3 "$(dirname "$0")/gpu_host.py" "$@"
