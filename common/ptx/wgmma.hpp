#pragma once
// wgmma: Hopper's warpgroup-level matrix multiply-accumulate, reading A and B from shared memory.
//
// A warpgroup is 4 consecutive warps (128 threads, the first warp's index a multiple of 4). All of
// its threads execute each instruction here together (.sync.aligned): call these only from code
// that the whole warpgroup runs, never under a branch that splits it.
//
// wgmma.mma_async is asynchronous: it returns before the tensor cores are done, and they keep
// reading shared memory and writing the accumulator registers afterwards. The protocol, per tile:
//
//   warpgroup_fence_operand(accumulator);  // the compiler may not move accumulator reads/writes
//   wgmma_fence();                          // prior register writes are ordered before the MMAs
//   for each 16-wide K slice:               // e.g. 4 slices of a 64-wide K tile
//     wgmma_m64k16_bf16<N>(accumulator, descriptor_a, descriptor_b, accumulate);
//   wgmma_commit_group();                   // these MMAs form one group
//   wgmma_wait_group<0>();                  // wait until no group is pending (or <1>: one may be)
//   warpgroup_fence_operand(accumulator);  // only now may the accumulators be read
//
// Shared memory that wgmma reads must be visible to the async proxy: TMA writes already are;
// ordinary stores and cp.async need fence_proxy_async_shared_cta() (fence.hpp) in each writing
// thread before the barrier that hands the tile over.
//
// Accumulator layout of m64nNk16 (fp32, N/2 floats per thread), which every epilogue relies on.
// For thread t of the warpgroup (t = threadIdx.x % 128), warp w = t / 32, lane l = t % 32:
//   - warp w owns rows 16w .. 16w + 15 of the 64-row tile;
//   - for j = 0 .. N/8 - 1 (one 8-column block each):
//       accumulator[4j + 0], accumulator[4j + 1]: row 16w + l/4,     columns 8j + 2(l%4) + {0, 1}
//       accumulator[4j + 2], accumulator[4j + 3]: row 16w + l/4 + 8, columns 8j + 2(l%4) + {0, 1}
// So each thread holds pairs of adjacent columns (one 32-bit bf16x2 store after conversion), in
// two rows 8 apart, repeated every 8 columns.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-register-fragment-wgmma-64n16

#include <cstdint>
#include <type_traits>

#include "common/ptx/arch.hpp"

namespace gemm::ptx {

// wgmma.fence: orders this warpgroup's earlier register accesses (zeroing or reading the
// accumulators, for example) before the wgmma.mma_async instructions that follow. Needed before
// the first MMA of a batch; consecutive MMAs on the same accumulators need none between them.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-fence
__device__ inline void wgmma_fence() {
#if GEMM_PTX_SM90A
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#else
  __trap();
#endif
}

// wgmma.commit_group: closes the batch of wgmma.mma_async issued since the last commit into one
// "wgmma-group", the unit that wgmma_wait_group counts.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-commit-group
__device__ inline void wgmma_commit_group() {
#if GEMM_PTX_SM90A
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#else
  __trap();
#endif
}

// wgmma.wait_group N: waits until at most N committed wgmma-groups are still pending. Then the
// older groups' accumulators may be read and their shared-memory operands overwritten. N = 0
// waits for everything; N = 1 keeps the latest group running while the previous one is retired.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-wait-group
template <int N>
__device__ inline void wgmma_wait_group() {
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes a pending-group count in 0..7");
#if GEMM_PTX_SM90A
  asm volatile("wgmma.wait_group.sync.aligned %0;" : : "n"(N) : "memory");
#else
  __trap();
#endif
}

// An empty asm that claims to read and write one accumulator register. It emits no instruction;
// it pins the value to "here" in the compiler's view, so the compiler can neither move reads or
// writes of the accumulator across the asynchronous wgmma (while the tensor cores own the
// register) nor keep a stale copy of it elsewhere. Fence before wgmma_fence() and after
// wgmma_wait_group(). Being no instruction, it is valid on every architecture.
template <class T>
__device__ inline void warpgroup_fence_operand(T& value) {
  static_assert(std::is_same_v<T, float>, "the course's wgmma accumulators are fp32");
  asm volatile("" : "+f"(value) : : "memory");
}

// warpgroup_fence_operand for a whole accumulator array, one register at a time.
template <int N>
__device__ inline void warpgroup_fence_operand(float (&accumulator)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) warpgroup_fence_operand(accumulator[i]);
}

// ... and for a consumer's accumulators of several 64-row blocks (accumulator[row block][...]).
template <int R, int N>
__device__ inline void warpgroup_fence_operand(float (&accumulator)[R][N]) {
#pragma unroll
  for (int r = 0; r < R; ++r) warpgroup_fence_operand(accumulator[r]);
}

// The MMA shapes of the course. Operands, in PTX order:
//   {d0, ..., d(N/2 - 1)}  the accumulator registers (read and written: "+f")
//   descriptor_a           64-bit shared-memory descriptor of the 64 x 16 slice of A
//   descriptor_b           64-bit shared-memory descriptor of the N x 16 slice of B
//   p  (scale-d)           false: D = A * B^T, overwriting; true: D = A * B^T + D
//   1, 1 (imm-scale-a/b)   no negation of A or B
//   0, 0 (imm-trans-a/b)   no transpose: both operands K-major, as the course stores them
// The descriptors come from common/wgmma_descriptor.hpp.

// wgmma.mma_async m64n64k16, fp32 += bf16 x bf16, both operands K-major in shared memory:
// accumulator (64 x 64, 32 floats per thread) = A (64 x 16) * B (64 x 16)^T
// (+ accumulator when `accumulate`). Asynchronous: see the protocol at the top of this file.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async
__device__ inline void wgmma_m64n64k16_bf16(float (&accumulator)[32], uint64_t descriptor_a,
                                            uint64_t descriptor_b, bool accumulate) {
#if GEMM_PTX_SM90A
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %34, 0;\n"
      "  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16\n"
      "  {%0, %1, %2, %3, %4, %5, %6, %7,\n"
      "   %8, %9, %10, %11, %12, %13, %14, %15,\n"
      "   %16, %17, %18, %19, %20, %21, %22, %23,\n"
      "   %24, %25, %26, %27, %28, %29, %30, %31},\n"
      "  %32, %33, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(accumulator[0]), "+f"(accumulator[1]), "+f"(accumulator[2]), "+f"(accumulator[3]),
        "+f"(accumulator[4]), "+f"(accumulator[5]), "+f"(accumulator[6]), "+f"(accumulator[7]),
        "+f"(accumulator[8]), "+f"(accumulator[9]), "+f"(accumulator[10]), "+f"(accumulator[11]),
        "+f"(accumulator[12]), "+f"(accumulator[13]), "+f"(accumulator[14]), "+f"(accumulator[15]),
        "+f"(accumulator[16]), "+f"(accumulator[17]), "+f"(accumulator[18]), "+f"(accumulator[19]),
        "+f"(accumulator[20]), "+f"(accumulator[21]), "+f"(accumulator[22]), "+f"(accumulator[23]),
        "+f"(accumulator[24]), "+f"(accumulator[25]), "+f"(accumulator[26]), "+f"(accumulator[27]),
        "+f"(accumulator[28]), "+f"(accumulator[29]), "+f"(accumulator[30]), "+f"(accumulator[31])
      : "l"(descriptor_a), "l"(descriptor_b), "r"(static_cast<uint32_t>(accumulate)));
#else
  __trap();
#endif
}

// wgmma.mma_async m64n128k16, fp32 += bf16 x bf16, both operands K-major in shared memory:
// accumulator (64 x 128, 64 floats per thread) = A (64 x 16) * B (128 x 16)^T
// (+ accumulator when `accumulate`). Asynchronous: see the protocol at the top of this file.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async
__device__ inline void wgmma_m64n128k16_bf16(float (&accumulator)[64], uint64_t descriptor_a,
                                             uint64_t descriptor_b, bool accumulate) {
#if GEMM_PTX_SM90A
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %66, 0;\n"
      "  wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16\n"
      "  {%0, %1, %2, %3, %4, %5, %6, %7,\n"
      "   %8, %9, %10, %11, %12, %13, %14, %15,\n"
      "   %16, %17, %18, %19, %20, %21, %22, %23,\n"
      "   %24, %25, %26, %27, %28, %29, %30, %31,\n"
      "   %32, %33, %34, %35, %36, %37, %38, %39,\n"
      "   %40, %41, %42, %43, %44, %45, %46, %47,\n"
      "   %48, %49, %50, %51, %52, %53, %54, %55,\n"
      "   %56, %57, %58, %59, %60, %61, %62, %63},\n"
      "  %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(accumulator[0]), "+f"(accumulator[1]), "+f"(accumulator[2]), "+f"(accumulator[3]),
        "+f"(accumulator[4]), "+f"(accumulator[5]), "+f"(accumulator[6]), "+f"(accumulator[7]),
        "+f"(accumulator[8]), "+f"(accumulator[9]), "+f"(accumulator[10]), "+f"(accumulator[11]),
        "+f"(accumulator[12]), "+f"(accumulator[13]), "+f"(accumulator[14]), "+f"(accumulator[15]),
        "+f"(accumulator[16]), "+f"(accumulator[17]), "+f"(accumulator[18]), "+f"(accumulator[19]),
        "+f"(accumulator[20]), "+f"(accumulator[21]), "+f"(accumulator[22]), "+f"(accumulator[23]),
        "+f"(accumulator[24]), "+f"(accumulator[25]), "+f"(accumulator[26]), "+f"(accumulator[27]),
        "+f"(accumulator[28]), "+f"(accumulator[29]), "+f"(accumulator[30]), "+f"(accumulator[31]),
        "+f"(accumulator[32]), "+f"(accumulator[33]), "+f"(accumulator[34]), "+f"(accumulator[35]),
        "+f"(accumulator[36]), "+f"(accumulator[37]), "+f"(accumulator[38]), "+f"(accumulator[39]),
        "+f"(accumulator[40]), "+f"(accumulator[41]), "+f"(accumulator[42]), "+f"(accumulator[43]),
        "+f"(accumulator[44]), "+f"(accumulator[45]), "+f"(accumulator[46]), "+f"(accumulator[47]),
        "+f"(accumulator[48]), "+f"(accumulator[49]), "+f"(accumulator[50]), "+f"(accumulator[51]),
        "+f"(accumulator[52]), "+f"(accumulator[53]), "+f"(accumulator[54]), "+f"(accumulator[55]),
        "+f"(accumulator[56]), "+f"(accumulator[57]), "+f"(accumulator[58]), "+f"(accumulator[59]),
        "+f"(accumulator[60]), "+f"(accumulator[61]), "+f"(accumulator[62]), "+f"(accumulator[63])
      : "l"(descriptor_a), "l"(descriptor_b), "r"(static_cast<uint32_t>(accumulate)));
#else
  __trap();
#endif
}

// wgmma.mma_async m64n160k16, fp32 += bf16 x bf16, both operands K-major in shared memory:
// accumulator (64 x 160, 80 floats per thread) = A (64 x 16) * B (160 x 16)^T
// (+ accumulator when `accumulate`). Asynchronous: see the protocol at the top of this file.
// The final kernel's 160-wide tiles: five 32-column subtiles of the epilogue.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async
__device__ inline void wgmma_m64n160k16_bf16(float (&accumulator)[80], uint64_t descriptor_a,
                                             uint64_t descriptor_b, bool accumulate) {
#if GEMM_PTX_SM90A
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %82, 0;\n"
      "  wgmma.mma_async.sync.aligned.m64n160k16.f32.bf16.bf16\n"
      "  {%0, %1, %2, %3, %4, %5, %6, %7,\n"
      "   %8, %9, %10, %11, %12, %13, %14, %15,\n"
      "   %16, %17, %18, %19, %20, %21, %22, %23,\n"
      "   %24, %25, %26, %27, %28, %29, %30, %31,\n"
      "   %32, %33, %34, %35, %36, %37, %38, %39,\n"
      "   %40, %41, %42, %43, %44, %45, %46, %47,\n"
      "   %48, %49, %50, %51, %52, %53, %54, %55,\n"
      "   %56, %57, %58, %59, %60, %61, %62, %63,\n"
      "   %64, %65, %66, %67, %68, %69, %70, %71,\n"
      "   %72, %73, %74, %75, %76, %77, %78, %79},\n"
      "  %80, %81, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(accumulator[0]), "+f"(accumulator[1]), "+f"(accumulator[2]), "+f"(accumulator[3]),
        "+f"(accumulator[4]), "+f"(accumulator[5]), "+f"(accumulator[6]), "+f"(accumulator[7]),
        "+f"(accumulator[8]), "+f"(accumulator[9]), "+f"(accumulator[10]), "+f"(accumulator[11]),
        "+f"(accumulator[12]), "+f"(accumulator[13]), "+f"(accumulator[14]), "+f"(accumulator[15]),
        "+f"(accumulator[16]), "+f"(accumulator[17]), "+f"(accumulator[18]), "+f"(accumulator[19]),
        "+f"(accumulator[20]), "+f"(accumulator[21]), "+f"(accumulator[22]), "+f"(accumulator[23]),
        "+f"(accumulator[24]), "+f"(accumulator[25]), "+f"(accumulator[26]), "+f"(accumulator[27]),
        "+f"(accumulator[28]), "+f"(accumulator[29]), "+f"(accumulator[30]), "+f"(accumulator[31]),
        "+f"(accumulator[32]), "+f"(accumulator[33]), "+f"(accumulator[34]), "+f"(accumulator[35]),
        "+f"(accumulator[36]), "+f"(accumulator[37]), "+f"(accumulator[38]), "+f"(accumulator[39]),
        "+f"(accumulator[40]), "+f"(accumulator[41]), "+f"(accumulator[42]), "+f"(accumulator[43]),
        "+f"(accumulator[44]), "+f"(accumulator[45]), "+f"(accumulator[46]), "+f"(accumulator[47]),
        "+f"(accumulator[48]), "+f"(accumulator[49]), "+f"(accumulator[50]), "+f"(accumulator[51]),
        "+f"(accumulator[52]), "+f"(accumulator[53]), "+f"(accumulator[54]), "+f"(accumulator[55]),
        "+f"(accumulator[56]), "+f"(accumulator[57]), "+f"(accumulator[58]), "+f"(accumulator[59]),
        "+f"(accumulator[60]), "+f"(accumulator[61]), "+f"(accumulator[62]), "+f"(accumulator[63]),
        "+f"(accumulator[64]), "+f"(accumulator[65]), "+f"(accumulator[66]), "+f"(accumulator[67]),
        "+f"(accumulator[68]), "+f"(accumulator[69]), "+f"(accumulator[70]), "+f"(accumulator[71]),
        "+f"(accumulator[72]), "+f"(accumulator[73]), "+f"(accumulator[74]), "+f"(accumulator[75]),
        "+f"(accumulator[76]), "+f"(accumulator[77]), "+f"(accumulator[78]), "+f"(accumulator[79])
      : "l"(descriptor_a), "l"(descriptor_b), "r"(static_cast<uint32_t>(accumulate)));
#else
  __trap();
#endif
}

// wgmma.mma_async m64n192k16, fp32 += bf16 x bf16, both operands K-major in shared memory:
// accumulator (64 x 192, 96 floats per thread) = A (64 x 16) * B (192 x 16)^T
// (+ accumulator when `accumulate`). Asynchronous: see the protocol at the top of this file.
// Lesson 16's 192-wide tiles: three 64-column subtiles of the epilogue.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async
__device__ inline void wgmma_m64n192k16_bf16(float (&accumulator)[96], uint64_t descriptor_a,
                                             uint64_t descriptor_b, bool accumulate) {
#if GEMM_PTX_SM90A
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %98, 0;\n"
      "  wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16\n"
      "  {%0, %1, %2, %3, %4, %5, %6, %7,\n"
      "   %8, %9, %10, %11, %12, %13, %14, %15,\n"
      "   %16, %17, %18, %19, %20, %21, %22, %23,\n"
      "   %24, %25, %26, %27, %28, %29, %30, %31,\n"
      "   %32, %33, %34, %35, %36, %37, %38, %39,\n"
      "   %40, %41, %42, %43, %44, %45, %46, %47,\n"
      "   %48, %49, %50, %51, %52, %53, %54, %55,\n"
      "   %56, %57, %58, %59, %60, %61, %62, %63,\n"
      "   %64, %65, %66, %67, %68, %69, %70, %71,\n"
      "   %72, %73, %74, %75, %76, %77, %78, %79,\n"
      "   %80, %81, %82, %83, %84, %85, %86, %87,\n"
      "   %88, %89, %90, %91, %92, %93, %94, %95},\n"
      "  %96, %97, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(accumulator[0]), "+f"(accumulator[1]), "+f"(accumulator[2]), "+f"(accumulator[3]),
        "+f"(accumulator[4]), "+f"(accumulator[5]), "+f"(accumulator[6]), "+f"(accumulator[7]),
        "+f"(accumulator[8]), "+f"(accumulator[9]), "+f"(accumulator[10]), "+f"(accumulator[11]),
        "+f"(accumulator[12]), "+f"(accumulator[13]), "+f"(accumulator[14]), "+f"(accumulator[15]),
        "+f"(accumulator[16]), "+f"(accumulator[17]), "+f"(accumulator[18]), "+f"(accumulator[19]),
        "+f"(accumulator[20]), "+f"(accumulator[21]), "+f"(accumulator[22]), "+f"(accumulator[23]),
        "+f"(accumulator[24]), "+f"(accumulator[25]), "+f"(accumulator[26]), "+f"(accumulator[27]),
        "+f"(accumulator[28]), "+f"(accumulator[29]), "+f"(accumulator[30]), "+f"(accumulator[31]),
        "+f"(accumulator[32]), "+f"(accumulator[33]), "+f"(accumulator[34]), "+f"(accumulator[35]),
        "+f"(accumulator[36]), "+f"(accumulator[37]), "+f"(accumulator[38]), "+f"(accumulator[39]),
        "+f"(accumulator[40]), "+f"(accumulator[41]), "+f"(accumulator[42]), "+f"(accumulator[43]),
        "+f"(accumulator[44]), "+f"(accumulator[45]), "+f"(accumulator[46]), "+f"(accumulator[47]),
        "+f"(accumulator[48]), "+f"(accumulator[49]), "+f"(accumulator[50]), "+f"(accumulator[51]),
        "+f"(accumulator[52]), "+f"(accumulator[53]), "+f"(accumulator[54]), "+f"(accumulator[55]),
        "+f"(accumulator[56]), "+f"(accumulator[57]), "+f"(accumulator[58]), "+f"(accumulator[59]),
        "+f"(accumulator[60]), "+f"(accumulator[61]), "+f"(accumulator[62]), "+f"(accumulator[63]),
        "+f"(accumulator[64]), "+f"(accumulator[65]), "+f"(accumulator[66]), "+f"(accumulator[67]),
        "+f"(accumulator[68]), "+f"(accumulator[69]), "+f"(accumulator[70]), "+f"(accumulator[71]),
        "+f"(accumulator[72]), "+f"(accumulator[73]), "+f"(accumulator[74]), "+f"(accumulator[75]),
        "+f"(accumulator[76]), "+f"(accumulator[77]), "+f"(accumulator[78]), "+f"(accumulator[79]),
        "+f"(accumulator[80]), "+f"(accumulator[81]), "+f"(accumulator[82]), "+f"(accumulator[83]),
        "+f"(accumulator[84]), "+f"(accumulator[85]), "+f"(accumulator[86]), "+f"(accumulator[87]),
        "+f"(accumulator[88]), "+f"(accumulator[89]), "+f"(accumulator[90]), "+f"(accumulator[91]),
        "+f"(accumulator[92]), "+f"(accumulator[93]), "+f"(accumulator[94]), "+f"(accumulator[95])
      : "l"(descriptor_a), "l"(descriptor_b), "r"(static_cast<uint32_t>(accumulate)));
#else
  __trap();
#endif
}

// wgmma.mma_async m64n224k16, fp32 += bf16 x bf16, both operands K-major in shared memory:
// accumulator (64 x 224, 112 floats per thread) = A (64 x 16) * B (224 x 16)^T
// (+ accumulator when `accumulate`). Asynchronous: see the protocol at the top of this file.
// Lesson 16's 224-wide tiles: seven 32-column subtiles of the epilogue.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async
__device__ inline void wgmma_m64n224k16_bf16(float (&accumulator)[112], uint64_t descriptor_a,
                                             uint64_t descriptor_b, bool accumulate) {
#if GEMM_PTX_SM90A
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %114, 0;\n"
      "  wgmma.mma_async.sync.aligned.m64n224k16.f32.bf16.bf16\n"
      "  {%0, %1, %2, %3, %4, %5, %6, %7,\n"
      "   %8, %9, %10, %11, %12, %13, %14, %15,\n"
      "   %16, %17, %18, %19, %20, %21, %22, %23,\n"
      "   %24, %25, %26, %27, %28, %29, %30, %31,\n"
      "   %32, %33, %34, %35, %36, %37, %38, %39,\n"
      "   %40, %41, %42, %43, %44, %45, %46, %47,\n"
      "   %48, %49, %50, %51, %52, %53, %54, %55,\n"
      "   %56, %57, %58, %59, %60, %61, %62, %63,\n"
      "   %64, %65, %66, %67, %68, %69, %70, %71,\n"
      "   %72, %73, %74, %75, %76, %77, %78, %79,\n"
      "   %80, %81, %82, %83, %84, %85, %86, %87,\n"
      "   %88, %89, %90, %91, %92, %93, %94, %95,\n"
      "   %96, %97, %98, %99, %100, %101, %102, %103,\n"
      "   %104, %105, %106, %107, %108, %109, %110, %111},\n"
      "  %112, %113, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(accumulator[0]), "+f"(accumulator[1]), "+f"(accumulator[2]), "+f"(accumulator[3]),
        "+f"(accumulator[4]), "+f"(accumulator[5]), "+f"(accumulator[6]), "+f"(accumulator[7]),
        "+f"(accumulator[8]), "+f"(accumulator[9]), "+f"(accumulator[10]), "+f"(accumulator[11]),
        "+f"(accumulator[12]), "+f"(accumulator[13]), "+f"(accumulator[14]), "+f"(accumulator[15]),
        "+f"(accumulator[16]), "+f"(accumulator[17]), "+f"(accumulator[18]), "+f"(accumulator[19]),
        "+f"(accumulator[20]), "+f"(accumulator[21]), "+f"(accumulator[22]), "+f"(accumulator[23]),
        "+f"(accumulator[24]), "+f"(accumulator[25]), "+f"(accumulator[26]), "+f"(accumulator[27]),
        "+f"(accumulator[28]), "+f"(accumulator[29]), "+f"(accumulator[30]), "+f"(accumulator[31]),
        "+f"(accumulator[32]), "+f"(accumulator[33]), "+f"(accumulator[34]), "+f"(accumulator[35]),
        "+f"(accumulator[36]), "+f"(accumulator[37]), "+f"(accumulator[38]), "+f"(accumulator[39]),
        "+f"(accumulator[40]), "+f"(accumulator[41]), "+f"(accumulator[42]), "+f"(accumulator[43]),
        "+f"(accumulator[44]), "+f"(accumulator[45]), "+f"(accumulator[46]), "+f"(accumulator[47]),
        "+f"(accumulator[48]), "+f"(accumulator[49]), "+f"(accumulator[50]), "+f"(accumulator[51]),
        "+f"(accumulator[52]), "+f"(accumulator[53]), "+f"(accumulator[54]), "+f"(accumulator[55]),
        "+f"(accumulator[56]), "+f"(accumulator[57]), "+f"(accumulator[58]), "+f"(accumulator[59]),
        "+f"(accumulator[60]), "+f"(accumulator[61]), "+f"(accumulator[62]), "+f"(accumulator[63]),
        "+f"(accumulator[64]), "+f"(accumulator[65]), "+f"(accumulator[66]), "+f"(accumulator[67]),
        "+f"(accumulator[68]), "+f"(accumulator[69]), "+f"(accumulator[70]), "+f"(accumulator[71]),
        "+f"(accumulator[72]), "+f"(accumulator[73]), "+f"(accumulator[74]), "+f"(accumulator[75]),
        "+f"(accumulator[76]), "+f"(accumulator[77]), "+f"(accumulator[78]), "+f"(accumulator[79]),
        "+f"(accumulator[80]), "+f"(accumulator[81]), "+f"(accumulator[82]), "+f"(accumulator[83]),
        "+f"(accumulator[84]), "+f"(accumulator[85]), "+f"(accumulator[86]), "+f"(accumulator[87]),
        "+f"(accumulator[88]), "+f"(accumulator[89]), "+f"(accumulator[90]), "+f"(accumulator[91]),
        "+f"(accumulator[92]), "+f"(accumulator[93]), "+f"(accumulator[94]), "+f"(accumulator[95]),
        "+f"(accumulator[96]), "+f"(accumulator[97]), "+f"(accumulator[98]), "+f"(accumulator[99]),
        "+f"(accumulator[100]), "+f"(accumulator[101]), "+f"(accumulator[102]), "+f"(accumulator[103]),
        "+f"(accumulator[104]), "+f"(accumulator[105]), "+f"(accumulator[106]), "+f"(accumulator[107]),
        "+f"(accumulator[108]), "+f"(accumulator[109]), "+f"(accumulator[110]), "+f"(accumulator[111])
      : "l"(descriptor_a), "l"(descriptor_b), "r"(static_cast<uint32_t>(accumulate)));
#else
  __trap();
#endif
}

// wgmma.mma_async m64n256k16, fp32 += bf16 x bf16, both operands K-major in shared memory:
// accumulator (64 x 256, 128 floats per thread) = A (64 x 16) * B (256 x 16)^T
// (+ accumulator when `accumulate`). Asynchronous: see the protocol at the top of this file.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async
__device__ inline void wgmma_m64n256k16_bf16(float (&accumulator)[128], uint64_t descriptor_a,
                                             uint64_t descriptor_b, bool accumulate) {
#if GEMM_PTX_SM90A
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %130, 0;\n"
      "  wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16\n"
      "  {%0, %1, %2, %3, %4, %5, %6, %7,\n"
      "   %8, %9, %10, %11, %12, %13, %14, %15,\n"
      "   %16, %17, %18, %19, %20, %21, %22, %23,\n"
      "   %24, %25, %26, %27, %28, %29, %30, %31,\n"
      "   %32, %33, %34, %35, %36, %37, %38, %39,\n"
      "   %40, %41, %42, %43, %44, %45, %46, %47,\n"
      "   %48, %49, %50, %51, %52, %53, %54, %55,\n"
      "   %56, %57, %58, %59, %60, %61, %62, %63,\n"
      "   %64, %65, %66, %67, %68, %69, %70, %71,\n"
      "   %72, %73, %74, %75, %76, %77, %78, %79,\n"
      "   %80, %81, %82, %83, %84, %85, %86, %87,\n"
      "   %88, %89, %90, %91, %92, %93, %94, %95,\n"
      "   %96, %97, %98, %99, %100, %101, %102, %103,\n"
      "   %104, %105, %106, %107, %108, %109, %110, %111,\n"
      "   %112, %113, %114, %115, %116, %117, %118, %119,\n"
      "   %120, %121, %122, %123, %124, %125, %126, %127},\n"
      "  %128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(accumulator[0]), "+f"(accumulator[1]), "+f"(accumulator[2]), "+f"(accumulator[3]),
        "+f"(accumulator[4]), "+f"(accumulator[5]), "+f"(accumulator[6]), "+f"(accumulator[7]),
        "+f"(accumulator[8]), "+f"(accumulator[9]), "+f"(accumulator[10]), "+f"(accumulator[11]),
        "+f"(accumulator[12]), "+f"(accumulator[13]), "+f"(accumulator[14]), "+f"(accumulator[15]),
        "+f"(accumulator[16]), "+f"(accumulator[17]), "+f"(accumulator[18]), "+f"(accumulator[19]),
        "+f"(accumulator[20]), "+f"(accumulator[21]), "+f"(accumulator[22]), "+f"(accumulator[23]),
        "+f"(accumulator[24]), "+f"(accumulator[25]), "+f"(accumulator[26]), "+f"(accumulator[27]),
        "+f"(accumulator[28]), "+f"(accumulator[29]), "+f"(accumulator[30]), "+f"(accumulator[31]),
        "+f"(accumulator[32]), "+f"(accumulator[33]), "+f"(accumulator[34]), "+f"(accumulator[35]),
        "+f"(accumulator[36]), "+f"(accumulator[37]), "+f"(accumulator[38]), "+f"(accumulator[39]),
        "+f"(accumulator[40]), "+f"(accumulator[41]), "+f"(accumulator[42]), "+f"(accumulator[43]),
        "+f"(accumulator[44]), "+f"(accumulator[45]), "+f"(accumulator[46]), "+f"(accumulator[47]),
        "+f"(accumulator[48]), "+f"(accumulator[49]), "+f"(accumulator[50]), "+f"(accumulator[51]),
        "+f"(accumulator[52]), "+f"(accumulator[53]), "+f"(accumulator[54]), "+f"(accumulator[55]),
        "+f"(accumulator[56]), "+f"(accumulator[57]), "+f"(accumulator[58]), "+f"(accumulator[59]),
        "+f"(accumulator[60]), "+f"(accumulator[61]), "+f"(accumulator[62]), "+f"(accumulator[63]),
        "+f"(accumulator[64]), "+f"(accumulator[65]), "+f"(accumulator[66]), "+f"(accumulator[67]),
        "+f"(accumulator[68]), "+f"(accumulator[69]), "+f"(accumulator[70]), "+f"(accumulator[71]),
        "+f"(accumulator[72]), "+f"(accumulator[73]), "+f"(accumulator[74]), "+f"(accumulator[75]),
        "+f"(accumulator[76]), "+f"(accumulator[77]), "+f"(accumulator[78]), "+f"(accumulator[79]),
        "+f"(accumulator[80]), "+f"(accumulator[81]), "+f"(accumulator[82]), "+f"(accumulator[83]),
        "+f"(accumulator[84]), "+f"(accumulator[85]), "+f"(accumulator[86]), "+f"(accumulator[87]),
        "+f"(accumulator[88]), "+f"(accumulator[89]), "+f"(accumulator[90]), "+f"(accumulator[91]),
        "+f"(accumulator[92]), "+f"(accumulator[93]), "+f"(accumulator[94]), "+f"(accumulator[95]),
        "+f"(accumulator[96]), "+f"(accumulator[97]), "+f"(accumulator[98]), "+f"(accumulator[99]),
        "+f"(accumulator[100]), "+f"(accumulator[101]), "+f"(accumulator[102]), "+f"(accumulator[103]),
        "+f"(accumulator[104]), "+f"(accumulator[105]), "+f"(accumulator[106]), "+f"(accumulator[107]),
        "+f"(accumulator[108]), "+f"(accumulator[109]), "+f"(accumulator[110]), "+f"(accumulator[111]),
        "+f"(accumulator[112]), "+f"(accumulator[113]), "+f"(accumulator[114]), "+f"(accumulator[115]),
        "+f"(accumulator[116]), "+f"(accumulator[117]), "+f"(accumulator[118]), "+f"(accumulator[119]),
        "+f"(accumulator[120]), "+f"(accumulator[121]), "+f"(accumulator[122]), "+f"(accumulator[123]),
        "+f"(accumulator[124]), "+f"(accumulator[125]), "+f"(accumulator[126]), "+f"(accumulator[127])
      : "l"(descriptor_a), "l"(descriptor_b), "r"(static_cast<uint32_t>(accumulate)));
#else
  __trap();
#endif
}

// wgmma.mma_async m64n128k32, fp32 += e4m3 x e4m3 (lesson 18), both operands K-major in shared
// memory: accumulator (64 x 128, 64 floats per thread) = A (64 x 32) * B (128 x 32)^T
// (+ accumulator when `accumulate`). 32 e4m3 are 32 bytes, as 16 bf16 are: the descriptors of a
// k-step are the bf16 ones. fp8 wgmma has no transpose operands (both must be K-major). The
// tensor cores add the products into the accumulator with fewer bits than fp32 keeps (lesson 18's
// README), which is why lesson 18 adds each slice's sum into fp32 registers itself.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async
__device__ inline void wgmma_m64n128k32_e4m3(float (&accumulator)[64], uint64_t descriptor_a,
                                            uint64_t descriptor_b, bool accumulate) {
#if GEMM_PTX_SM90A
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %66, 0;\n"
      "  wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3\n"
      "  {%0, %1, %2, %3, %4, %5, %6, %7,\n"
      "   %8, %9, %10, %11, %12, %13, %14, %15,\n"
      "   %16, %17, %18, %19, %20, %21, %22, %23,\n"
      "   %24, %25, %26, %27, %28, %29, %30, %31,\n"
      "   %32, %33, %34, %35, %36, %37, %38, %39,\n"
      "   %40, %41, %42, %43, %44, %45, %46, %47,\n"
      "   %48, %49, %50, %51, %52, %53, %54, %55,\n"
      "   %56, %57, %58, %59, %60, %61, %62, %63},\n"
      "  %64, %65, p, 1, 1;\n"
      "}\n"
      : "+f"(accumulator[0]), "+f"(accumulator[1]), "+f"(accumulator[2]), "+f"(accumulator[3]),
        "+f"(accumulator[4]), "+f"(accumulator[5]), "+f"(accumulator[6]), "+f"(accumulator[7]),
        "+f"(accumulator[8]), "+f"(accumulator[9]), "+f"(accumulator[10]), "+f"(accumulator[11]),
        "+f"(accumulator[12]), "+f"(accumulator[13]), "+f"(accumulator[14]), "+f"(accumulator[15]),
        "+f"(accumulator[16]), "+f"(accumulator[17]), "+f"(accumulator[18]), "+f"(accumulator[19]),
        "+f"(accumulator[20]), "+f"(accumulator[21]), "+f"(accumulator[22]), "+f"(accumulator[23]),
        "+f"(accumulator[24]), "+f"(accumulator[25]), "+f"(accumulator[26]), "+f"(accumulator[27]),
        "+f"(accumulator[28]), "+f"(accumulator[29]), "+f"(accumulator[30]), "+f"(accumulator[31]),
        "+f"(accumulator[32]), "+f"(accumulator[33]), "+f"(accumulator[34]), "+f"(accumulator[35]),
        "+f"(accumulator[36]), "+f"(accumulator[37]), "+f"(accumulator[38]), "+f"(accumulator[39]),
        "+f"(accumulator[40]), "+f"(accumulator[41]), "+f"(accumulator[42]), "+f"(accumulator[43]),
        "+f"(accumulator[44]), "+f"(accumulator[45]), "+f"(accumulator[46]), "+f"(accumulator[47]),
        "+f"(accumulator[48]), "+f"(accumulator[49]), "+f"(accumulator[50]), "+f"(accumulator[51]),
        "+f"(accumulator[52]), "+f"(accumulator[53]), "+f"(accumulator[54]), "+f"(accumulator[55]),
        "+f"(accumulator[56]), "+f"(accumulator[57]), "+f"(accumulator[58]), "+f"(accumulator[59]),
        "+f"(accumulator[60]), "+f"(accumulator[61]), "+f"(accumulator[62]), "+f"(accumulator[63])
      : "l"(descriptor_a), "l"(descriptor_b), "r"(static_cast<uint32_t>(accumulate)));
#else
  __trap();
#endif
}

// wgmma.mma_async m64n192k32, fp32 += e4m3 x e4m3 (lesson 18), both operands K-major in shared
// memory: accumulator (64 x 192, 96 floats per thread) = A (64 x 32) * B (192 x 32)^T
// (+ accumulator when `accumulate`). 32 e4m3 are 32 bytes, as 16 bf16 are: the descriptors of a
// k-step are the bf16 ones. fp8 wgmma has no transpose operands (both must be K-major). The
// tensor cores add the products into the accumulator with fewer bits than fp32 keeps (lesson 18's
// README), which is why lesson 18 adds each slice's sum into fp32 registers itself.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async
__device__ inline void wgmma_m64n192k32_e4m3(float (&accumulator)[96], uint64_t descriptor_a,
                                            uint64_t descriptor_b, bool accumulate) {
#if GEMM_PTX_SM90A
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  setp.ne.b32 p, %98, 0;\n"
      "  wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3\n"
      "  {%0, %1, %2, %3, %4, %5, %6, %7,\n"
      "   %8, %9, %10, %11, %12, %13, %14, %15,\n"
      "   %16, %17, %18, %19, %20, %21, %22, %23,\n"
      "   %24, %25, %26, %27, %28, %29, %30, %31,\n"
      "   %32, %33, %34, %35, %36, %37, %38, %39,\n"
      "   %40, %41, %42, %43, %44, %45, %46, %47,\n"
      "   %48, %49, %50, %51, %52, %53, %54, %55,\n"
      "   %56, %57, %58, %59, %60, %61, %62, %63,\n"
      "   %64, %65, %66, %67, %68, %69, %70, %71,\n"
      "   %72, %73, %74, %75, %76, %77, %78, %79,\n"
      "   %80, %81, %82, %83, %84, %85, %86, %87,\n"
      "   %88, %89, %90, %91, %92, %93, %94, %95},\n"
      "  %96, %97, p, 1, 1;\n"
      "}\n"
      : "+f"(accumulator[0]), "+f"(accumulator[1]), "+f"(accumulator[2]), "+f"(accumulator[3]),
        "+f"(accumulator[4]), "+f"(accumulator[5]), "+f"(accumulator[6]), "+f"(accumulator[7]),
        "+f"(accumulator[8]), "+f"(accumulator[9]), "+f"(accumulator[10]), "+f"(accumulator[11]),
        "+f"(accumulator[12]), "+f"(accumulator[13]), "+f"(accumulator[14]), "+f"(accumulator[15]),
        "+f"(accumulator[16]), "+f"(accumulator[17]), "+f"(accumulator[18]), "+f"(accumulator[19]),
        "+f"(accumulator[20]), "+f"(accumulator[21]), "+f"(accumulator[22]), "+f"(accumulator[23]),
        "+f"(accumulator[24]), "+f"(accumulator[25]), "+f"(accumulator[26]), "+f"(accumulator[27]),
        "+f"(accumulator[28]), "+f"(accumulator[29]), "+f"(accumulator[30]), "+f"(accumulator[31]),
        "+f"(accumulator[32]), "+f"(accumulator[33]), "+f"(accumulator[34]), "+f"(accumulator[35]),
        "+f"(accumulator[36]), "+f"(accumulator[37]), "+f"(accumulator[38]), "+f"(accumulator[39]),
        "+f"(accumulator[40]), "+f"(accumulator[41]), "+f"(accumulator[42]), "+f"(accumulator[43]),
        "+f"(accumulator[44]), "+f"(accumulator[45]), "+f"(accumulator[46]), "+f"(accumulator[47]),
        "+f"(accumulator[48]), "+f"(accumulator[49]), "+f"(accumulator[50]), "+f"(accumulator[51]),
        "+f"(accumulator[52]), "+f"(accumulator[53]), "+f"(accumulator[54]), "+f"(accumulator[55]),
        "+f"(accumulator[56]), "+f"(accumulator[57]), "+f"(accumulator[58]), "+f"(accumulator[59]),
        "+f"(accumulator[60]), "+f"(accumulator[61]), "+f"(accumulator[62]), "+f"(accumulator[63]),
        "+f"(accumulator[64]), "+f"(accumulator[65]), "+f"(accumulator[66]), "+f"(accumulator[67]),
        "+f"(accumulator[68]), "+f"(accumulator[69]), "+f"(accumulator[70]), "+f"(accumulator[71]),
        "+f"(accumulator[72]), "+f"(accumulator[73]), "+f"(accumulator[74]), "+f"(accumulator[75]),
        "+f"(accumulator[76]), "+f"(accumulator[77]), "+f"(accumulator[78]), "+f"(accumulator[79]),
        "+f"(accumulator[80]), "+f"(accumulator[81]), "+f"(accumulator[82]), "+f"(accumulator[83]),
        "+f"(accumulator[84]), "+f"(accumulator[85]), "+f"(accumulator[86]), "+f"(accumulator[87]),
        "+f"(accumulator[88]), "+f"(accumulator[89]), "+f"(accumulator[90]), "+f"(accumulator[91]),
        "+f"(accumulator[92]), "+f"(accumulator[93]), "+f"(accumulator[94]), "+f"(accumulator[95])
      : "l"(descriptor_a), "l"(descriptor_b), "r"(static_cast<uint32_t>(accumulate)));
#else
  __trap();
#endif
}

// One name for the two fp8 shapes, for lesson 18, whose tile width is a template parameter.
template <int N>
__device__ inline void wgmma_m64k32_e4m3(float (&accumulator)[N / 2], uint64_t descriptor_a,
                                         uint64_t descriptor_b, bool accumulate) {
  static_assert(N == 128 || N == 192, "lesson 18 uses fp8 wgmma with N = 128 or 192");
  if constexpr (N == 128)
    wgmma_m64n128k32_e4m3(accumulator, descriptor_a, descriptor_b, accumulate);
  else
    wgmma_m64n192k32_e4m3(accumulator, descriptor_a, descriptor_b, accumulate);
}

// One name for the six shapes, for kernels whose tile width is a template parameter:
// wgmma_m64k16_bf16<128>(accumulator, descriptor_a, descriptor_b, accumulate).
template <int N>
__device__ inline void wgmma_m64k16_bf16(float (&accumulator)[N / 2], uint64_t descriptor_a,
                                         uint64_t descriptor_b, bool accumulate) {
  static_assert(N == 64 || N == 128 || N == 160 || N == 192 || N == 224 || N == 256,
                "the course uses wgmma with N = 64, 128, 160, 192, 224 or 256");
  if constexpr (N == 64)
    wgmma_m64n64k16_bf16(accumulator, descriptor_a, descriptor_b, accumulate);
  else if constexpr (N == 128)
    wgmma_m64n128k16_bf16(accumulator, descriptor_a, descriptor_b, accumulate);
  else if constexpr (N == 160)
    wgmma_m64n160k16_bf16(accumulator, descriptor_a, descriptor_b, accumulate);
  else if constexpr (N == 192)
    wgmma_m64n192k16_bf16(accumulator, descriptor_a, descriptor_b, accumulate);
  else if constexpr (N == 224)
    wgmma_m64n224k16_bf16(accumulator, descriptor_a, descriptor_b, accumulate);
  else
    wgmma_m64n256k16_bf16(accumulator, descriptor_a, descriptor_b, accumulate);
}

}  // namespace gemm::ptx
