#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image (docs/grading.md, "Gradescope").
# The grading itself happens on the GPU host: the image needs only ssh, tar and Python 3.
set -euo pipefail
apt-get update -q
apt-get install -y -q openssh-client python3 tar
