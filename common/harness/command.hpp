#pragma once
// What the course's measuring commands share (`lesson18 sweep`, `lesson18 accuracy`,
// profiles/role_timeline.cu): a command line of "--flag value" pairs, of which --csv FILE and
// --commit SHA are every command's, and the start on the GPU. Each refusal is one line on stderr
// (a usage error has the usage line after it) and the course's exit code.

#include <functional>
#include <memory>
#include <string>

#include "common/harness/runner.hpp"
#include "common/lesson.hpp"

namespace gemm {

// The flags every command takes.
struct CommandOutput {
  std::string csv_path;  // --csv: where the command's CSV goes (none: printed only)
  std::string commit = "unknown";  // --commit: the commit column of the CSV

  // Writes `csv` to csv_path and says so, where there is one; throws std::runtime_error if it
  // cannot.
  void write(const std::string& csv) const;
};

// Hands each pair of argv[first..] to take(flag, value), which returns false for a flag it does not
// know (--csv and --commit are then taken into `output`), and then calls check(); either may throw
// std::invalid_argument (gemm::UsageError too). Returns kExitPass, or kExitBadUsage after printing
// "<command>: error: ..." and "usage: <usage>".
int read_command_line(const char* command, const char* usage, int argc, char** argv, int first,
                      CommandOutput& output,
                      const std::function<bool(const std::string&, const std::string&)>& take,
                      const std::function<void()>& check);

// The runner on GPU 0 for `lesson`; or, with one line printed and *exit_code set (kExitNoGpu,
// kExitUnsupportedGpu), nothing, where there is no GPU or the lesson cannot run on it. A CUDA
// failure while starting throws CudaError.
std::unique_ptr<LessonRunner> command_runner(const char* command, const Lesson& lesson,
                                             int* exit_code);

}  // namespace gemm
