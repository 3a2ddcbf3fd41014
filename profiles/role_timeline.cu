// make roles: where one launch of lesson 16's final kernel spends its time, role by role. Every
// configuration of lesson 16's table is compiled here once more with the clock trace
// (common/hopper/clock_trace.hpp), which stamps the global timer at each step of the producer's
// set-up, when it has worked out and posted its first work item and issued its last load, and
// when each math warpgroup has its registers, receives each of its first work items, has the
// item's first slice, has its MMAs complete and has issued the tile's stores, and when it has
// finished (common/hopper/trace.hpp lists them).
//
//   role_timeline [--shapes 1024x1024x1024,...|standard|held_out|workloads]
//                 [--configs model,64x128_c2_sk8,...] [--runs R] [--l2 flush|keep|operands]
//                 [--csv FILE] [--commit SHA]
//
// For each shape and configuration ("model": the one lesson 16's model picks): the traced kernel
// is checked against cuBLAS and timed against it with the paired protocol (a trace costs a few
// stores per block), then launched R more times (default 9), each after an L2 flush (--l2 keep:
// none, the operands left in L2 by the launch before; operands: a flush, then A and B read back
// into L2), and the run whose span is the median is kept: per block, each event's time after the
// first block started.
// The CSV holds one row per block and event; the summary prints, per event, the earliest, the
// median and the latest block.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/harness/cli.hpp"
#include "common/harness/command.hpp"
#include "common/harness/runner.hpp"
#include "common/hopper/bf16_configurations.hpp"
#include "common/hopper/clock_trace.hpp"
#include "common/hopper/launch_policy.hpp"
#include "common/hopper/trace.hpp"
#include "lessons/registry.hpp"

namespace {

using gemm::hopper::ItemEvent;
using gemm::hopper::ProducerEvent;
using gemm::hopper::TraceSlots;
using Traced = gemm::taught::Bf16Configurations<gemm::hopper::StreamOrder,
                                                gemm::hopper::ClockTrace>;

// Lesson 16's entry, with the traced kernels of the same table.
gemm::Lesson traced_lesson16() {
  gemm::Lesson lesson = gemm::lessons::lesson16();
  if (lesson.configuration_count != Traced::kCount)
    throw std::logic_error("lesson 16's table and the traced table differ in length");
  for (int i = 0; i < Traced::kCount; ++i)
    if (std::string(lesson.configurations[i].name) != Traced::kConfigurations[i].name)
      throw std::logic_error(std::string("lesson 16's table and the traced table differ at ") +
                             lesson.configurations[i].name);
  lesson.plan = &Traced::plan;
  lesson.launch_planned = &Traced::launch;
  lesson.configurations = Traced::kConfigurations.data();
  return lesson;
}

// The configuration called `name` ("model": -1, the model's pick).
int configuration_index(const gemm::Lesson& lesson, const std::string& name) {
  if (name == "model") return -1;
  std::string known = "model";
  for (int i = 0; i < lesson.configuration_count; ++i) {
    if (name == lesson.configurations[i].name) return i;
    known += std::string(", ") + lesson.configurations[i].name;
  }
  throw std::invalid_argument("no configuration '" + name + "' (there are: " + known + ")");
}

struct Event {
  const char* role;  // "producer", "math 0", "math 1"
  int item;          // the warpgroup's item, -1 for the producer's and for "finished"
  const char* what;
  int slot;
};

// Every event of the trace, in the order a block meets them.
std::vector<Event> events() {
  std::vector<Event> list = {
      {"producer", -1, "started", TraceSlots::producer(ProducerEvent::started)},
      {"producer", -1, "parameters read", TraceSlots::producer(ProducerEvent::parameters_read)},
      {"producer", -1, "barriers initialized",
       TraceSlots::producer(ProducerEvent::barriers_initialized)},
      {"producer", -1, "cluster synced", TraceSlots::producer(ProducerEvent::cluster_synced)},
      {"producer", -1, "set up", TraceSlots::producer(ProducerEvent::set_up)},
      {"producer", -1, "first load", TraceSlots::producer(ProducerEvent::first_load)},
      {"producer", -1, "first worked out", TraceSlots::producer(ProducerEvent::first_worked_out)},
      {"producer", -1, "first posted", TraceSlots::producer(ProducerEvent::first_posted)},
  };
  const char* roles[] = {"math 0", "math 1"};
  for (int warpgroup = 0; warpgroup < TraceSlots::kMathWarpgroups; ++warpgroup)
    list.push_back(
        {roles[warpgroup], -1, "registers taken", TraceSlots::registers_taken(warpgroup)});
  for (int item = 0; item < TraceSlots::kTracedItems; ++item)
    for (int warpgroup = 0; warpgroup < TraceSlots::kMathWarpgroups; ++warpgroup) {
      list.push_back({roles[warpgroup], item, "received",
                      TraceSlots::item(warpgroup, item, ItemEvent::received)});
      list.push_back({roles[warpgroup], item, "first slice",
                      TraceSlots::item(warpgroup, item, ItemEvent::first_slice)});
      list.push_back({roles[warpgroup], item, "MMAs complete",
                      TraceSlots::item(warpgroup, item, ItemEvent::mmas_complete)});
      list.push_back({roles[warpgroup], item, "stored",
                      TraceSlots::item(warpgroup, item, ItemEvent::stored)});
    }
  list.push_back({"producer", -1, "last load", TraceSlots::producer(ProducerEvent::last_load)});
  for (int warpgroup = 0; warpgroup < TraceSlots::kMathWarpgroups; ++warpgroup)
    list.push_back({roles[warpgroup], -1, "finished", TraceSlots::finished(warpgroup)});
  return list;
}

// What L2 holds when a traced launch starts (--l2): flushed, as the paired protocol leaves it
// (the default); kept, whatever the previous traced launch of the same problem left there (its
// operands among it); or flushed and then the operands A and B read back into it, so that only the
// first slices' trip from DRAM differs from a flushed launch.
enum class L2Before { flushed, kept, operands };
L2Before parse_l2(const std::string& flag, const std::string& value) {
  if (value == "flush") return L2Before::flushed;
  if (value == "keep") return L2Before::kept;
  if (value == "operands") return L2Before::operands;
  throw std::invalid_argument(flag + " must be flush, keep or operands, not '" + value + "'");
}
const char* l2_name(L2Before l2) {
  return l2 == L2Before::flushed ? "flush" : l2 == L2Before::kept ? "keep" : "operands";
}

// Reads `count` 16-byte words, so that they are in L2 afterwards; writes nothing (unless the
// words' XOR matches a value no input draws: a store the compiler cannot drop).
__global__ void read_into_l2(const uint4* words, size_t count, unsigned* never_written) {
  unsigned sum = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    sum ^= words[i].x ^ words[i].y ^ words[i].z ^ words[i].w;
  if (sum == 0x7fc00001u) *never_written = sum;
}

// One traced launch: each block's stamps, in ns after the first block started (-1: no stamp).
struct Run {
  std::vector<std::vector<double>> blocks;  // [block][slot]
  double span_ns = 0;                       // the first start to the last stamp
};

Run traced_run(gemm::LessonRunner& runner, gemm::PairedTimer& flush, const gemm::Lesson& lesson,
               int blocks, int salt, L2Before l2, unsigned* never_written) {
  uint64_t* table = gemm::hopper::clock_trace_table();
  const size_t row_bytes = TraceSlots::kCount * sizeof(uint64_t);
  if (l2 != L2Before::kept) flush.flush_l2(runner.stream(), salt);
  if (l2 == L2Before::operands) {
    // K % 8 == 0 (the contract): each row of A and B is a whole number of 16-byte words.
    const gemm::GemmProblem& p = runner.problem();
    const int grid = runner.device().sm_count * 2;
    read_into_l2<<<grid, 256, 0, runner.stream()>>>(reinterpret_cast<const uint4*>(runner.a()),
                                                    size_t(p.m) * size_t(p.k) / 8, never_written);
    read_into_l2<<<grid, 256, 0, runner.stream()>>>(reinterpret_cast<const uint4*>(runner.b()),
                                                    size_t(p.n) * size_t(p.k) / 8, never_written);
    CUDA_CHECK(cudaGetLastError());
  }
  CUDA_CHECK(cudaMemsetAsync(table, 0, size_t(blocks) * row_bytes, runner.stream()));
  runner.launch(lesson);
  gemm::synchronize_or_timeout(runner.stream(), runner.launch_timeout_seconds());
  std::vector<uint64_t> stamps(size_t(blocks) * TraceSlots::kCount);
  CUDA_CHECK(cudaMemcpy(stamps.data(), table, stamps.size() * sizeof(uint64_t),
                        cudaMemcpyDeviceToHost));
  // Every block stamps its start first thing: the earliest is the launch's time zero.
  const int started = TraceSlots::producer(ProducerEvent::started);
  uint64_t first = UINT64_MAX, last = 0;
  for (int block = 0; block < blocks; ++block) {
    const uint64_t start = stamps[size_t(block) * TraceSlots::kCount + started];
    if (start == 0) throw std::runtime_error("block " + std::to_string(block) + " left no stamp");
    first = std::min(first, start);
    for (int slot = 0; slot < TraceSlots::kCount; ++slot)
      last = std::max(last, stamps[size_t(block) * TraceSlots::kCount + slot]);
  }
  Run run;
  run.span_ns = double(last - first);
  for (int block = 0; block < blocks; ++block) {
    std::vector<double> row(TraceSlots::kCount, -1);
    for (int slot = 0; slot < TraceSlots::kCount; ++slot) {
      const uint64_t stamp = stamps[size_t(block) * TraceSlots::kCount + slot];
      if (stamp != 0) row[slot] = double(stamp - first);
    }
    run.blocks.push_back(row);
  }
  return run;
}

std::string shape_name(const gemm::GemmProblem& p) {
  return std::to_string(p.m) + " x " + std::to_string(p.n) + " x " + std::to_string(p.k);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<gemm::GemmProblem> shapes = {{1024, 1024, 1024}};
  std::vector<std::string> configs = {"model"};
  int runs = 9;
  L2Before l2 = L2Before::flushed;
  gemm::Lesson lesson;
  std::vector<int> indices;  // the configurations' places in the table, -1 for the model's pick
  gemm::CommandOutput output;
  const int read = gemm::read_command_line(
      "role_timeline",
      "role_timeline [--shapes 1024x1024x1024,...|standard|held_out|workloads] "
      "[--configs model,64x128_c2_sk8,...] [--runs R] [--l2 flush|keep|operands] [--csv FILE] "
      "[--commit SHA]",
      argc, argv, /*first=*/1, output,
      [&](const std::string& flag, const std::string& value) {
        if (flag == "--shapes")
          shapes = gemm::parse_shape_list(flag, value);
        else if (flag == "--configs")
          configs = gemm::split_list(value);
        else if (flag == "--runs")
          runs = int(gemm::parse_integer(flag, value, 1, 100));
        else if (flag == "--l2")
          l2 = parse_l2(flag, value);
        else
          return false;
        return true;
      },
      [&] {
        if (configs.empty()) throw std::invalid_argument("--configs names no configuration");
        for (const gemm::GemmProblem& shape : shapes)
          if (const auto violation = gemm::shape_contract_violation(shape))
            throw std::invalid_argument(*violation);
        lesson = traced_lesson16();
        for (const std::string& name : configs)
          indices.push_back(configuration_index(lesson, name));
      });
  if (read != gemm::kExitPass) return read;
  const std::string& csv_path = output.csv_path;
  const std::string& commit = output.commit;

  try {
    int refused = gemm::kExitPass;
    const auto started = gemm::command_runner("role_timeline", lesson, &refused);
    if (!started) return refused;
    gemm::LessonRunner& runner = *started;
    gemm::PairedTimer flush(runner.device().l2_bytes, runner.device().ordinal);
    const gemm::DeviceBuffer<unsigned> never_written(1);
    std::ofstream csv;
    if (!csv_path.empty()) {
      csv.open(csv_path);
      if (!csv) throw std::runtime_error("cannot write " + csv_path);
      csv << "gpu,date,commit,m,n,k,configuration,chosen_by,l2,blocks,run_us,pairs,"
             "lesson_median_us,cublas_median_us,ratio,sm_mhz_median,block,role,item,event,t_us\n";
    }
    const std::string date = gemm::today_utc();
    const std::vector<Event> trace_events = events();
    bool all_passed = true;
    for (const gemm::GemmProblem& shape : shapes) {
      runner.set_problem(shape, /*seed=*/1);
      for (const int index : indices) {
        const gemm::Lesson forced = gemm::with_configuration(lesson, index);
        const gemm::RunReport report = runner.check_and_time(forced, gemm::TimingOptions{});
        const std::string name = runner.configuration_that_ran(forced);
        if (!report.check->passed()) {
          std::printf("%s %s: the check FAILED\n", shape_name(shape).c_str(), name.c_str());
          all_passed = false;
          continue;
        }
        // The blocks of the launch: the plan's clusters, each of cluster_m blocks.
        const gemm::LaunchPlan plan = gemm::plan_launch(forced, shape);
        const int blocks = int(plan.schedule.workers) *
                           lesson.configurations[plan.configuration].shape.cluster_m;
        if (blocks > gemm::hopper::kMostTracedBlocks)
          throw std::runtime_error("the launch has more blocks than the trace holds");
        std::vector<Run> taken;
        for (int run = 0; run < runs; ++run)
          taken.push_back(traced_run(runner, flush, forced, blocks, run, l2, never_written.get()));
        std::sort(taken.begin(), taken.end(),
                  [](const Run& a, const Run& b) { return a.span_ns < b.span_ns; });
        const Run& median = taken[taken.size() / 2];

        const auto& timing = report.timing;
        std::printf("%s, %s (%s): run %.2f us (L2: %s); paired with cuBLAS: %.2f against %.2f "
                    "us, ratio %.3f, %s; %d blocks\n",
                    shape_name(shape).c_str(), name.c_str(), index < 0 ? "the model's pick" : "forced",
                    median.span_ns / 1000, l2_name(l2), timing.lesson.median_ms * 1000,
                    timing.reference.median_ms * 1000, timing.ratio,
                    timing.clock.summary().c_str(), blocks);
        std::printf("  %-9s %-5s %-20s %8s %8s %8s   (us after the first block started)\n",
                    "role", "item", "event", "earliest", "median", "latest");
        for (const Event& event : trace_events) {
          std::vector<double> times;
          for (const auto& block : median.blocks)
            if (block[event.slot] >= 0) times.push_back(block[event.slot] / 1000);
          if (times.empty()) continue;
          std::sort(times.begin(), times.end());
          std::printf("  %-9s %-5s %-20s %8.2f %8.2f %8.2f   (%zu blocks)\n", event.role,
                      event.item < 0 ? "" : std::to_string(event.item).c_str(), event.what,
                      times.front(), times[times.size() / 2], times.back(), times.size());
        }
        if (csv.is_open()) {
          for (size_t block = 0; block < median.blocks.size(); ++block)
            for (const Event& event : trace_events) {
              const double t = median.blocks[block][event.slot];
              if (t < 0) continue;
              csv << '"' << runner.device().name << "\"," << date << ',' << commit << ','
                  << shape.m << ',' << shape.n << ',' << shape.k << ',' << name << ','
                  << (index < 0 ? "model" : "forced") << ',' << l2_name(l2) << ',' << blocks << ','
                  << median.span_ns / 1000 << ',' << timing.pairs << ','
                  << timing.lesson.median_ms * 1000 << ',' << timing.reference.median_ms * 1000
                  << ',' << timing.ratio << ',' << timing.clock.sm_mhz_median << ',' << block
                  << ",\"" << event.role << "\"," << (event.item < 0 ? "" : std::to_string(event.item))
                  << ",\"" << event.what << "\"," << t / 1000 << '\n';
            }
          if (!csv) throw std::runtime_error("cannot write " + csv_path);
        }
      }
    }
    if (csv.is_open()) std::printf("wrote %s\n", csv_path.c_str());
    return all_passed ? gemm::kExitPass : gemm::kExitCheckFailed;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "role_timeline: error: %s\n", error.what());
    return gemm::kExitCudaError;
  }
}
