#!/bin/sh
# Runs one CUDA compile command (CMake's CMAKE_CUDA_COMPILER_LAUNCHER) and fails it when ptxas
# reports that it ignored or repaired the Hopper instructions of a kernel.
#
# ptxas prints these as "info" lines, which --warning-as-error does not catch:
#   (C7508) Potential Performance Loss: 'setmaxnreg' ignored ...  (no register cap at entry)
#   (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized ...
#   (C7517) warpgroup.wait is injected ...    (accumulators read while a wgmma may still write them)
#   (C7519) warpgroup.arrive is injected ...  (a wgmma.fence is missing)
# Each one silently costs a Hopper kernel much of its speed or hides a broken wgmma protocol, so in
# this course they are build errors, like spills and the warnings C7510/C7511.
output=$("$@" 2>&1)
status=$?
[ -n "$output" ] && printf '%s\n' "$output" >&2
if [ $status -eq 0 ] && printf '%s' "$output" | grep -q -e "Potential Performance Loss" -e "(C7517)" -e "(C7519)"; then
  echo "error: ptxas ignored or repaired a Hopper instruction (see the message above); the build treats this as an error" >&2
  exit 1
fi
exit $status
