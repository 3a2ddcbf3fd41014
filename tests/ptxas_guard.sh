#!/bin/sh
# Runs one CUDA compile command (CMake's CMAKE_CUDA_COMPILER_LAUNCHER) and fails it when ptxas
# reports that it serialized wgmma instructions.
#
# ptxas prints that as "info (C7515) Potential Performance Loss: wgmma.mma_async instructions are
# serialized ...", which --warning-as-error does not catch because it is not a warning. A
# serialized wgmma silently costs a large part of a Hopper kernel's speed, so in this course it is
# a build error, like spills and the warnings C7508 (setmaxnreg ignored) and C7510/C7511.
output=$("$@" 2>&1)
status=$?
[ -n "$output" ] && printf '%s\n' "$output" >&2
if [ $status -eq 0 ] && printf '%s' "$output" | grep -q "Potential Performance Loss: wgmma"; then
  echo "error: ptxas serialized wgmma instructions (see the message above); the build treats this as an error" >&2
  exit 1
fi
exit $status
