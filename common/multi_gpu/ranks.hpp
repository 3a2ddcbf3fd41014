#pragma once
// A multi-GPU program's processes (lesson 19): one per GPU, started and watched by a parent that never touches CUDA.
//
// Why processes and not threads: that is how tensor-parallel inference runs (one process per GPU,
// as torchrun or MPI start them), and it is what makes the copy engines' peer access go through
// CUDA IPC, the way it does there. Why the parent stays away from CUDA: a process that has
// initialized CUDA cannot fork children that use it, so the parent forks first and learns about
// the GPUs through a child of its own (run_in_child).
//
// POSIX only (fork, pipes, process groups); no CUDA here, so the host tests run all of it.

#include <errno.h>  // program_invocation_short_name: the name the program runs under
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/harness/cli.hpp"

namespace gemm {

// Writes or reads exactly `size` bytes through a pipe; throws std::runtime_error if the other
// end is gone before that.
inline void write_all(int fd, const void* bytes, size_t size) {
  const char* next = static_cast<const char*>(bytes);
  while (size > 0) {
    const ssize_t written = write(fd, next, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0)
      throw std::runtime_error(std::string("pipe write failed: ") + std::strerror(errno));
    next += written;
    size -= size_t(written);
  }
}
inline void read_all(int fd, void* bytes, size_t size) {
  char* next = static_cast<char*>(bytes);
  while (size > 0) {
    const ssize_t got = read(fd, next, size);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0)
      throw std::runtime_error("pipe closed before the data arrived (did rank 0 fail?)");
    if (got < 0) throw std::runtime_error(std::string("pipe read failed: ") + std::strerror(errno));
    next += got;
    size -= size_t(got);
  }
}

// Runs `probe` in a child process and returns what it computed, or nothing if the child died
// first. Result must be a plain struct of bytes (it crosses a pipe).
template <class Result>
std::optional<Result> run_in_child(const std::function<Result()>& probe) {
  static_assert(std::is_trivially_copyable_v<Result>, "the result crosses a pipe as bytes");
  int ends[2];
  if (pipe(ends) != 0) return std::nullopt;
  std::fflush(nullptr);  // what the parent has buffered is not written twice
  const pid_t child = fork();
  if (child < 0) {
    close(ends[0]);
    close(ends[1]);
    return std::nullopt;
  }
  if (child == 0) {
    close(ends[0]);
    int code = 0;
    try {
      const Result result = probe();
      write_all(ends[1], &result, sizeof(result));
    } catch (const std::exception& error) {
      std::fprintf(stderr, "%s: error: %s\n", program_invocation_short_name, error.what());
      code = kExitCudaError;
    }
    std::fflush(nullptr);
    std::_Exit(code);
  }
  close(ends[1]);
  Result result;
  bool complete = true;
  try {
    read_all(ends[0], &result, sizeof(result));
  } catch (const std::runtime_error&) {
    complete = false;
  }
  close(ends[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!complete) return std::nullopt;
  return result;
}

// What a rank may say to the others before they share a communicator: rank 0 sends (NCCL's
// unique id), every other rank receives. The parent creates one pipe per rank r >= 1, from rank 0
// to rank r, before it forks.
class RankChannels {
 public:
  RankChannels(int rank, std::vector<std::array<int, 2>> pipes)
      : rank_(rank), pipes_(std::move(pipes)) {}

  // Rank 0: the same bytes to every other rank.
  void send_to_others(const void* bytes, size_t size) const {
    for (size_t r = 1; r < pipes_.size(); ++r) write_all(pipes_[r][1], bytes, size);
  }
  // Ranks 1..G-1: what rank 0 sent.
  void receive_from_rank_zero(void* bytes, size_t size) const {
    read_all(pipes_[size_t(rank_)][0], bytes, size);
  }

 private:
  int rank_;
  std::vector<std::array<int, 2>> pipes_;
};

// What one rank runs: it returns its exit code (gemm::ExitCode). 0 and 1 (a check failed) are a
// finished run; anything else is a failure that stops the other ranks.
using RankBody = std::function<int(int rank, const RankChannels& channels)>;

inline std::string exit_code_meaning(int code) {
  switch (code) {
    case kExitCheckFailed: return "a check failed";
    case kExitNoGpu: return "no CUDA GPU";
    case kExitUnsupportedGpu: return "the GPU cannot run the lesson";
    case kExitBadUsage: return "bad command line";
    case kExitCudaError: return "CUDA or NCCL error";
  }
  return "unexpected exit code";
}

// Starts `ranks` processes, rank r running body(r, channels), and waits for all of them, at most
// `timeout_seconds`. They form a process group of their own, so that one signal stops them all:
// if any rank fails (an exit code other than 0 or 1, or a signal) or they have not all finished
// in time, the parent kills the group, prints one line naming the rank and the reason, and
// returns the failed rank's exit code (kExitCudaError for a signal or a hang). Otherwise it
// returns 1 if any rank's check failed, else 0. The parent calls no CUDA function.
inline int run_ranks(int ranks, int timeout_seconds, const RankBody& body) {
  std::vector<std::array<int, 2>> pipes(size_t(ranks), {-1, -1});
  for (int r = 1; r < ranks; ++r)
    if (pipe(pipes[size_t(r)].data()) != 0) {
      std::fprintf(stderr, "%s: error: cannot create a pipe: %s\n", program_invocation_short_name,
                   std::strerror(errno));
      return kExitCudaError;
    }
  const pid_t parent = getpid();
  std::fflush(nullptr);  // what the parent has buffered is not written once per child
  std::vector<pid_t> children;
  std::vector<bool> finished;  // reaped already
  pid_t group = 0;             // the first child's pid: the group of all ranks
  const auto stop_all = [&] {
    if (group != 0) kill(-group, SIGKILL);
    for (size_t rank = 0; rank < children.size(); ++rank) {
      if (finished[rank]) continue;
      int status = 0;
      while (waitpid(children[rank], &status, 0) < 0 && errno == EINTR) {
      }
    }
  };
  for (int rank = 0; rank < ranks; ++rank) {
    const pid_t child = fork();
    if (child < 0) {
      std::fprintf(stderr, "%s: error: cannot start rank %d: %s\n", program_invocation_short_name, rank,
                   std::strerror(errno));
      stop_all();
      return kExitCudaError;
    }
    if (child == 0) {
      // Both the child and the parent put the child into the group, so that it is there
      // whichever of them runs first. A rank also dies with the parent (a Ctrl-C reaches the
      // parent's group only), never left behind waiting for peers that are gone.
      setpgid(0, group);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) std::_Exit(kExitCudaError);
      // Rank 0 keeps the writing ends, rank r the reading end of its own pipe: then a read sees
      // the end of the pipe if rank 0 is gone.
      for (int r = 1; r < ranks; ++r) {
        if (rank != 0) close(pipes[size_t(r)][1]);
        if (rank != r) close(pipes[size_t(r)][0]);
      }
      int code = kExitCudaError;
      try {
        code = body(rank, RankChannels(rank, pipes));
      } catch (const std::exception& error) {
        std::fprintf(stderr, "%s: rank %d: error: %s\n", program_invocation_short_name, rank,
                     error.what());
      }
      std::fflush(nullptr);
      std::_Exit(code);
    }
    if (group == 0) group = child;
    setpgid(child, group);
    children.push_back(child);
    finished.push_back(false);
  }
  for (int r = 1; r < ranks; ++r) {
    close(pipes[size_t(r)][0]);
    close(pipes[size_t(r)][1]);
  }

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  int remaining = ranks, result = kExitPass;
  while (remaining > 0) {
    bool any_exited = false;
    for (int rank = 0; rank < ranks; ++rank) {
      if (finished[size_t(rank)]) continue;
      int status = 0;
      const pid_t exited = waitpid(children[size_t(rank)], &status, WNOHANG);
      if (exited != children[size_t(rank)]) continue;
      any_exited = true;
      finished[size_t(rank)] = true;
      --remaining;
      const bool clean = WIFEXITED(status) && (WEXITSTATUS(status) == kExitPass ||
                                               WEXITSTATUS(status) == kExitCheckFailed);
      if (clean) {
        result = std::max(result, WEXITSTATUS(status));
        continue;
      }
      stop_all();
      if (WIFSIGNALED(status)) {
        std::fprintf(stderr, "%s: error: rank %d was killed by signal %d (%s); stopped the other "
                             "ranks\n",
                     program_invocation_short_name, rank, WTERMSIG(status),
                     strsignal(WTERMSIG(status)));
        return kExitCudaError;
      }
      const int code = WEXITSTATUS(status);
      std::fprintf(stderr, "%s: error: rank %d exited with code %d (%s); stopped the other ranks\n",
                   program_invocation_short_name, rank, code, exit_code_meaning(code).c_str());
      return code;
    }
    if (any_exited) continue;
    if (std::chrono::steady_clock::now() > deadline) {
      int first_running = 0;
      while (finished[size_t(first_running)]) ++first_running;
      stop_all();
      std::fprintf(stderr, "%s: error: rank %d did not finish within %d s (a hang: a collective "
                           "or a copy waiting for a rank that never comes?); stopped all ranks\n",
                   program_invocation_short_name, first_running, timeout_seconds);
      return kExitCudaError;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return result;
}

}  // namespace gemm
