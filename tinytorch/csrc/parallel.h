// The thread pool of the native kernels: at::parallel_for's contract (split [begin, end) into chunks of at
// least `grain` iterations; small ranges run on the calling thread) over a pool sized by
// torch.set_num_threads.
//
// A worker that has finished a job watches for the next one for a short time (parallel.cpp's kSpinMicros: a train
// step's kernels come back to back) and then sleeps on a condition variable. The calling thread takes chunks
// too, from a shared counter, and waits only for chunks already started, never for a worker that has not woken
// up: when another process holds a core, a kernel runs on the cores it gets instead of stalling for a scheduler
// tick at a barrier.
#pragma once
#include <cstdint>
#include <functional>

namespace tt {

// The one grain of the native layer (ATen's GRAIN_SIZE): the elements of a pointwise loop worth a thread. Every
// family sizes its chunks from it, and kit.h's run_released lets go of the GIL from half of it (the GIL is
// cheaper to hand over than a thread is to wake).
constexpr int64_t kGrainSize = 32768;
constexpr int64_t kGrainSizeGIL = kGrainSize / 2;

int get_num_threads();
void set_num_threads(int n);
bool in_parallel_region();

// f(chunk_begin, chunk_end) over disjoint chunks covering [begin, end), possibly on several threads at once.
void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f);

}  // namespace tt
