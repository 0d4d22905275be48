#include "parallel.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace tt {
namespace {

thread_local bool tls_in_parallel = false;

struct Job {
  const std::function<void(int64_t, int64_t)>* fn;
  int64_t begin, end, chunk, nchunks;
  std::atomic<int64_t> next{0};
};

void run_chunks(Job* j) {
  bool was = tls_in_parallel;
  tls_in_parallel = true;
  for (;;) {
    int64_t c = j->next.fetch_add(1, std::memory_order_relaxed);
    if (c >= j->nchunks) break;
    int64_t b = j->begin + c * j->chunk;
    (*j->fn)(b, std::min(j->end, b + j->chunk));
  }
  tls_in_parallel = was;
}

class Pool {
 public:
  explicit Pool(int nthreads) : nthreads_(std::max(1, nthreads)) {}
  ~Pool() { stop(); }

  int size() const { return nthreads_; }

  void run(Job& job) {
    std::unique_lock<std::mutex> region(region_mu_, std::try_to_lock);
    if (!region.owns_lock()) {  // another Python thread is in a parallel kernel: run this one serially
      run_chunks(&job);
      return;
    }
    start();
    {
      std::lock_guard<std::mutex> lk(mu_);
      job_ = &job;
      ++generation_;
    }
    cv_work_.notify_all();
    run_chunks(&job);
    std::unique_lock<std::mutex> lk(mu_);
    job_ = nullptr;  // a worker waking from now on finds nothing to do and goes back to sleep
    if (active_.load(std::memory_order_acquire) == 0) return;
    // the workers still running are on their last chunks: watch for them for a while (blocking and being woken
    // costs two system calls and a scheduler round trip, as long as a short kernel) before sleeping
    lk.unlock();
    spin_until([&] { return active_.load(std::memory_order_acquire) == 0; });
    lk.lock();
    cv_done_.wait(lk, [&] { return active_.load(std::memory_order_acquire) == 0; });
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stopping_ = true;
      stopping_flag_ = true;
    }
    cv_work_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
    stopping_ = false;
    stopping_flag_ = false;
  }

  // After fork() only the calling thread exists in the child: forget the parent's workers without joining.
  void forget_threads_after_fork() {
    for (auto& t : threads_) t.detach();
    threads_.clear();
    new (&mu_) std::mutex();
    new (&region_mu_) std::mutex();
    new (&cv_work_) std::condition_variable();
    new (&cv_done_) std::condition_variable();
    job_ = nullptr;
    active_ = 0;
  }

 private:
  void start() {
    if ((int)threads_.size() == nthreads_ - 1) return;
    for (int i = (int)threads_.size(); i < nthreads_ - 1; ++i) threads_.emplace_back([this] { worker(); });
  }

  // Kernels of a train step come back to back, tens of microseconds apart, and waking a sleeping thread costs
  // about as much: a worker that has just finished a job watches for the next one for kSpinMicros before it
  // sleeps (OpenMP's spin-then-block wait policy, which ATen's parallel_for runs on), so a step's kernels find
  // their workers awake while a process that stops calling kernels leaves its cores idle within that time.
  static constexpr int64_t kSpinMicros = 1000;

  // The first kPauseMicros of a watch only pause; after that each look yields the core: a thread that shares it
  // (the caller's Python, when another process holds the other cores) runs instead of waiting out the watch.
  static constexpr int64_t kPauseMicros = 100;

  // true once done() holds, false when kSpinMicros pass first
  template <typename Done>
  static bool spin_until(Done&& done) {
    const auto start = std::chrono::steady_clock::now();
    const auto yield_from = start + std::chrono::microseconds(kPauseMicros);
    const auto until = start + std::chrono::microseconds(kSpinMicros);
    bool yielding = false;
    for (int i = 0;; ++i) {
      if (done()) return true;
      if (yielding) {
        std::this_thread::yield();
        if (std::chrono::steady_clock::now() > until) return false;
        continue;
      }
      if ((i & 63) == 63) yielding = std::chrono::steady_clock::now() > yield_from;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }

  void spin_for_work(uint64_t seen) {
    spin_until([&] {
      return generation_.load(std::memory_order_acquire) != seen || stopping_flag_.load(std::memory_order_relaxed);
    });
  }

  void worker() {
    uint64_t seen = generation_snapshot();
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      if (!stopping_ && !(job_ != nullptr && generation_ != seen)) {
        lk.unlock();
        spin_for_work(seen);
        lk.lock();
      }
      cv_work_.wait(lk, [&] { return stopping_ || (job_ != nullptr && generation_ != seen); });
      if (stopping_) return;
      seen = generation_;
      Job* j = job_;
      active_.fetch_add(1, std::memory_order_relaxed);
      lk.unlock();
      run_chunks(j);
      lk.lock();
      if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) cv_done_.notify_all();
    }
  }

  uint64_t generation_snapshot() {
    std::lock_guard<std::mutex> lk(mu_);
    return generation_;
  }

  int nthreads_;
  std::vector<std::thread> threads_;
  std::mutex mu_, region_mu_;
  std::condition_variable cv_work_, cv_done_;
  Job* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};  // written under mu_, read without it by spinning workers
  std::atomic<bool> stopping_flag_{false};
  std::atomic<int> active_{0};  // workers inside a job; changed under mu_, watched without it by run()
  bool stopping_ = false;
};

int default_threads() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

Pool* pool() {
  static Pool* p = [] {
    pthread_atfork(nullptr, nullptr, [] { pool()->forget_threads_after_fork(); });
    return new Pool(default_threads());
  }();
  return p;
}

}  // namespace

int get_num_threads() { return pool()->size(); }

void set_num_threads(int n) {
  Pool* p = pool();
  if (p->size() == n) return;
  p->stop();
  p->~Pool();
  new (p) Pool(n);
}

bool in_parallel_region() { return tls_in_parallel; }

void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  int64_t n = end - begin;
  if (n <= 0) return;
  Pool* p = pool();
  int nt = p->size();
  if (nt == 1 || tls_in_parallel || n <= grain) {
    f(begin, end);
    return;
  }
  // up to 4 chunks a thread: when a worker is late (its core busy elsewhere) the others take its share
  int64_t nchunks = std::min<int64_t>((n + grain - 1) / grain, 4 * (int64_t)nt);
  Job job;
  job.fn = &f;
  job.begin = begin;
  job.end = end;
  job.chunk = (n + nchunks - 1) / nchunks;
  job.nchunks = (n + job.chunk - 1) / job.chunk;
  p->run(job);
}

}  // namespace tt
