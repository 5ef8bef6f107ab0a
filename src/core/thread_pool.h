/* A persistent pool of worker threads for data-parallel kernels.
 *
 * A kernel hands the pool a loop over [0, count) and a function; the pool cuts
 * the loop into contiguous ranges, runs one range per worker, and returns when
 * every range is done. That is the whole interface: no task queue, no futures,
 * no work stealing. Inference kernels are big, regular loops (rows of a
 * matmul, heads of an attention) and want exactly this fork-join shape with
 * the smallest possible per-call cost.
 *
 * Why the design is what it is:
 *   - The threads are started once, by vlm_thread_pool_create, and live until
 *     vlm_thread_pool_release. A decode step calls parallel_for hundreds of
 *     times; starting threads per call would cost more than the work.
 *   - Partitioning is static and deterministic: for a given (count, grain,
 *     pool size) worker w always gets the same range (see
 *     vlm_thread_pool_range). Kernels that accumulate in floating point rely
 *     on this to give bit-identical results from run to run; dynamic
 *     scheduling would change the summation order with the timing.
 *   - The calling thread is worker 0. It runs the first range itself instead
 *     of sleeping while others work, so a pool of N uses N cores and starts
 *     N - 1 threads.
 *   - Idle workers watch an atomic word of their own, spinning for up to
 *     50 microseconds (so back-to-back calls hand work over without a system
 *     call) and then sleeping on a futex, so an idle pool burns no CPU.
 *
 * Linux only: it uses futexes, sched_getaffinity and cgroup v2 files. */
#ifndef VLM_CORE_THREAD_POOL_H
#define VLM_CORE_THREAD_POOL_H

#include <stdint.h>

#include "vlm.h"

/* The most threads a pool may have. Far above any machine we run on; a larger
 * request is almost certainly a bug (an uninitialised or negative-wrapped
 * count), and each thread reserves a stack. */
#define VLM_THREAD_POOL_MAX_THREADS 1024

typedef struct vlm_thread_pool vlm_thread_pool;

/* The body of a parallel loop: processes indices [begin, end). `worker_index`
 * is in [0, vlm_thread_pool_size(pool)) and is unique among the ranges of one
 * call, so it can index per-worker scratch buffers without locking. */
typedef void (*vlm_parallel_function)(void *context, int64_t begin, int64_t end,
                                      int worker_index);

/* Starts a pool of `thread_count` workers: the calling thread (worker 0) plus
 * thread_count - 1 operating-system threads, so a count of 1 starts none.
 * thread_count <= 0 means vlm_cpu_count() (capped at
 * VLM_THREAD_POOL_MAX_THREADS). A count above VLM_THREAD_POOL_MAX_THREADS is
 * refused with VLM_STATUS_INVALID_ARGUMENT. The allocator (NULL: the system
 * one) must outlive the pool.
 *
 * Worker threads block every asynchronous signal, so signals such as SIGINT
 * are delivered to the application's own threads, never to a worker. */
vlm_status vlm_thread_pool_create(int thread_count,
                                  const vlm_allocator *allocator,
                                  vlm_thread_pool **out_pool);

/* Number of workers, counting the calling thread; 1 for a NULL pool. */
int vlm_thread_pool_size(const vlm_thread_pool *pool);

/* CPU seconds used so far by the calling thread plus the pool's own
 * threads, each read from its thread clock (which, unlike the process
 * clock, includes the slice a thread running on another core is in the
 * middle of). For benchmarks on shared machines: time spent waiting for a
 * core does not count. */
double vlm_thread_pool_cpu_seconds(const vlm_thread_pool *pool);

/* Runs function(context, begin, end, worker_index) over ranges that together
 * cover [0, count) exactly once, and returns when all have finished. Writes
 * made by the function happen-before the return.
 *
 * Ranges come from vlm_thread_pool_range with worker_count = the pool size:
 * [0, count) is cut into ceil(count / grain) chunks of `grain` indices (the
 * last one may be shorter), and consecutive chunks are dealt out as evenly as
 * possible to the first min(pool size, chunk count) workers. So `grain` is the
 * smallest range worth a thread (a loop of at most `grain` indices runs on
 * the caller alone, without waking anyone), and every range is a multiple of
 * grain except the one that ends at `count`. grain <= 0 counts as 1.
 * Workers left without a range are not called, so the function never sees
 * an empty range.
 *
 * count <= 0 returns at once without calling the function. A NULL pool runs
 * the whole loop on the calling thread as one range with worker_index 0.
 *
 * A call made from inside `function` on the same pool (a nested parallel
 * loop) runs serially, as one range on the calling worker with that worker's
 * index, instead of waiting for workers that are busy running the outer loop.
 * Calls from several unrelated threads at once are safe: they take turns.
 * A loop on one pool may call parallel_for on another pool, but not in a
 * cycle (pool B's loop calling back into pool A while A's loop waits on B):
 * that deadlocks, as any two locks taken in opposite orders would.
 * The function must return normally (no longjmp out of it). */
void vlm_thread_pool_parallel_for(vlm_thread_pool *pool, int64_t count,
                                  int64_t grain, vlm_parallel_function function,
                                  void *context);

/* The range worker `worker_index` of a `worker_count`-worker pool gets from
 * parallel_for(count, grain): [*out_begin, *out_end), empty (begin == end)
 * when the worker gets none. A pure function, exposed so a kernel can size
 * per-range buffers ahead of time and tests can check the partitioning. */
void vlm_thread_pool_range(int64_t count, int64_t grain, int worker_count,
                           int worker_index, int64_t *out_begin,
                           int64_t *out_end);

/* Stops and joins every worker thread and frees the pool. Must not be called
 * while a parallel_for on the pool is running. NULL is a no-op. */
void vlm_thread_pool_release(vlm_thread_pool *pool);

/* Parses the contents of a cgroup v2 `cpu.max` file ("$QUOTA $PERIOD", in
 * microseconds) into the number of CPUs the quota allows, rounded up and at
 * least 1. Returns 0 for "max" (no limit) and for text it does not
 * understand, which is then ignored rather than trusted. Exposed for tests;
 * vlm_cpu_count() is the user. */
int vlm_cgroup_cpu_max_parse(const char *text);

#endif
