#include "common/harness/command.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "common/cuda_check.hpp"
#include "common/harness/cli.hpp"

namespace gemm {

void CommandOutput::write(const std::string& csv) const {
  if (csv_path.empty()) return;
  std::ofstream file(csv_path);
  file << csv;
  if (!file) throw std::runtime_error("cannot write " + csv_path);
  std::printf("wrote %s\n", csv_path.c_str());
}

int read_command_line(const char* command, const char* usage, int argc, char** argv, int first,
                      CommandOutput& output,
                      const std::function<bool(const std::string&, const std::string&)>& take,
                      const std::function<void()>& check) {
  try {
    for (int i = first; i < argc; ++i) {
      const std::string flag = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      const std::string value = argv[++i];
      if (take(flag, value)) continue;
      if (flag == "--csv")
        output.csv_path = value;
      else if (flag == "--commit")
        output.commit = value;
      else
        throw std::invalid_argument("unknown flag " + flag);
    }
    check();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: error: %s\n", command, error.what());
    std::fprintf(stderr, "usage: %s\n", usage);
    return kExitBadUsage;
  }
  return kExitPass;
}

std::unique_ptr<LessonRunner> command_runner(const char* command, const Lesson& lesson,
                                             int* exit_code) {
  if (const auto missing = missing_gpu()) {
    std::fprintf(stderr, "%s: error: %s\n", command, missing->c_str());
    *exit_code = kExitNoGpu;
    return nullptr;
  }
  auto runner = std::make_unique<LessonRunner>(0);
  if (const auto reason = unsupported_reason(lesson, runner->device())) {
    std::fprintf(stderr, "%s: error: %s\n", command, reason->c_str());
    *exit_code = kExitUnsupportedGpu;
    return nullptr;
  }
  return runner;
}

}  // namespace gemm
