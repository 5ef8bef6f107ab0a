/* The persistent thread pool (see thread_pool.h for the contract).
 *
 * Hand-off protocol. Each worker thread owns a mailbox: one cache line
 * holding a 32-bit `generation` word plus the function, context and range of
 * the worker's next piece of work. To start a loop, the dispatcher (the
 * thread calling parallel_for, itself worker 0) sets `pending` to the number
 * of helper workers, and for each one writes the mailbox and increments its
 * generation. The worker, which has been watching its word, sees the change,
 * runs the range, and decrements `pending`; the dispatcher runs range 0
 * meanwhile and then waits for `pending` to reach zero.
 *
 * Both waits (worker for a new generation, dispatcher for pending == 0) first
 * spin, which is what makes back-to-back calls cheap, and then sleep on a
 * futex so an idle pool uses no CPU. A sleeper announces itself in a
 * `sleeping` flag so the other side only pays for the wake-up system call
 * when someone is actually asleep. The flag and the watched word form a
 * Dekker-style pair: the sleeper stores the flag and then loads the word,
 * the waker changes the word and then loads the flag, all sequentially
 * consistent, so at least one of them sees the other's write and a wake-up
 * can never be lost. FUTEX_WAIT's own check (sleep only if the word still
 * holds the value we saw) closes the remaining gap between that check and
 * falling asleep.
 *
 * Why per-worker mailboxes rather than one shared job description and
 * generation that all workers watch:
 *   - A hand-off is one cache-line transfer to the worker (its mailbox) and
 *     one back (the `pending` decrement). A shared description would add a
 *     transfer per worker per call, and cost about half again as much on a
 *     2-thread pool.
 *   - A loop that needs only 3 of 64 workers wakes only those 3, and a worker
 *     that was not woken reads nothing, so the dispatcher can reuse the
 *     mailboxes for the next call without racing a straggler.
 * The mailbox fields are plain (non-atomic) data: the dispatcher writes them
 * only while the worker is idle (before the release increment of generation,
 * after the acquire that saw pending reach zero), and the worker reads them
 * only in between. */
#include "core/thread_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/status.h"

/* How long a waiting thread spins before it sleeps. Long enough to cover the
 * gap between consecutive kernels of one forward pass (so the common hand-off
 * costs no system call), short enough that a pool left idle goes quiet
 * almost at once. Measured in time, not iterations, because the cost of a
 * pause instruction varies tenfold between CPU generations. */
#define SPIN_NANOSECONDS 50000
/* For the first part of the spin only the pause instruction is used; after
 * that the spinner also yields the core each time it reads the clock. When
 * the pool has more threads than free cores (a busy machine, a CPU quota),
 * the thread we wait for may be queued behind us on this very core, and
 * spinning through our time slice would only delay it: on one shared core a
 * pure 50 us spin made each call cost ~110 us. A cross-core hand-off takes
 * well under a microsecond, so this covers it with room to spare. A pool
 * created with more threads than vlm_cpu_count() knows it is oversubscribed
 * and yields from the start. */
#define PURE_SPIN_NANOSECONDS 2000
/* Spin iterations between clock reads; reading the clock every time would
 * put a vDSO call in the hot loop. */
#define SPIN_ITERATIONS_PER_CLOCK_READ 64

#define CACHE_LINE_SIZE 64

typedef struct vlm_thread_worker {
  /* The futex word the worker watches: incremented by the dispatcher to hand
   * the worker the range below. */
  alignas(CACHE_LINE_SIZE) _Atomic uint32_t generation;
  /* 1 while the worker is (about to be) asleep in FUTEX_WAIT. */
  _Atomic uint32_t sleeping;
  /* The work; `function` NULL means "exit". */
  vlm_parallel_function function;
  void *context;
  int64_t begin;
  int64_t end;
  /* Set before the thread starts, then read-only. */
  vlm_thread_pool *pool;
  int index; /* 1..thread_count-1 */
  /* Written by pthread_create in the creating thread; the worker itself
   * never reads it. */
  pthread_t thread;
} vlm_thread_worker;

struct vlm_thread_pool {
  /* Read-only after create, so this line is shared by all cores without
   * ever moving. */
  const vlm_allocator *allocator;
  int thread_count; /* workers, counting the dispatching thread */
  /* Spin without yielding for this long (see PURE_SPIN_NANOSECONDS). */
  int64_t pure_spin_nanoseconds;
  /* threads[i] is worker i + 1; worker 0 is whichever thread calls
   * parallel_for. NULL when thread_count is 1. */
  vlm_thread_worker *threads;

  /* Held for the whole of a parallel_for, so unrelated threads calling at
   * once take turns instead of both claiming worker 0 (and its scratch).
   * Only the dispatcher touches it, so it gets a line of its own. */
  alignas(CACHE_LINE_SIZE) pthread_mutex_t dispatch_mutex;

  /* Woken workers that have not finished their range; the dispatcher's
   * futex word. */
  alignas(CACHE_LINE_SIZE) _Atomic uint32_t pending;
  /* 1 while the dispatcher is (about to be) asleep waiting for pending. */
  _Atomic uint32_t dispatcher_sleeping;
};

_Static_assert(sizeof(vlm_thread_worker) == CACHE_LINE_SIZE,
               "a worker's mailbox should fill exactly one cache line");

/* ------------------------------------------------------------------------ */
/* Which loop this thread is running                                         */
/* ------------------------------------------------------------------------ */

/* A thread inside a parallel_for records, per pool it is working for, which
 * worker it is. A nested call checks this to run serially under the caller's
 * own worker index: dispatching would wait on workers that are busy running
 * the outer loop (or on the dispatch mutex this thread already holds), which
 * is a deadlock. The chain has one frame per level of nesting across pools,
 * so a pool A -> pool B -> pool A nesting on one thread is caught too.
 *
 * This is per-thread bookkeeping of what the thread itself is doing, never
 * shared between threads, so it is not global state in the sense that
 * matters: two pools never see each other through it. */
typedef struct worker_frame {
  const vlm_thread_pool *pool;
  int worker_index;
  const struct worker_frame *outer;
} worker_frame;

static _Thread_local const worker_frame *current_frame = NULL;

static const worker_frame *find_frame(const vlm_thread_pool *pool) {
  for (const worker_frame *frame = current_frame; frame; frame = frame->outer) {
    if (frame->pool == pool) return frame;
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Futex and spinning                                                        */
/* ------------------------------------------------------------------------ */

/* Sleeps until woken, unless *word no longer holds `expected` (then returns
 * at once). May also return spuriously (signals); callers re-check. */
static void futex_wait(_Atomic uint32_t *word, uint32_t expected) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL,
          NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word, int waiter_count) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, waiter_count, NULL,
          NULL, 0);
}

/* Tells the core we are spinning: saves power and, with hyper-threading,
 * gives the sibling thread the execution units. */
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield" ::: "memory");
#endif
}

static int64_t monotonic_nanoseconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* A spin budget: call spin_should_continue() once per spin iteration. */
typedef struct spin_budget {
  int64_t pure_spin_nanoseconds;
  int64_t start; /* 0 until the first clock read */
  int iteration;
} spin_budget;

static bool spin_should_continue(spin_budget *budget) {
  cpu_relax();
  if (++budget->iteration % SPIN_ITERATIONS_PER_CLOCK_READ != 0) return true;
  int64_t now = monotonic_nanoseconds();
  if (budget->start == 0) budget->start = now;
  int64_t spun = now - budget->start;
  if (spun >= SPIN_NANOSECONDS) return false;
  if (spun >= budget->pure_spin_nanoseconds) sched_yield();
  return true;
}

/* ------------------------------------------------------------------------ */
/* Partitioning                                                              */
/* ------------------------------------------------------------------------ */

/* How a loop is cut: ceil(count / grain) chunks of `grain` indices, dealt
 * to range_count workers as evenly as possible, every range getting
 * `chunks_per_range` chunks and the first `extra_chunks` ranges one more. */
typedef struct partition {
  int64_t count;
  int64_t grain;
  int64_t chunk_count;
  int64_t chunks_per_range;
  int64_t extra_chunks;
  int range_count; /* workers that get a range; the rest get none */
} partition;

static partition make_partition(int64_t count, int64_t grain, int worker_count) {
  partition result;
  result.count = count;
  result.grain = grain < 1 ? 1 : grain;
  result.chunk_count = count / result.grain + (count % result.grain != 0);
  if (worker_count < 1) worker_count = 1;
  result.range_count = result.chunk_count < worker_count
                           ? (int)result.chunk_count
                           : worker_count;
  result.chunks_per_range = result.chunk_count / result.range_count;
  result.extra_chunks = result.chunk_count % result.range_count;
  return result;
}

/* The range of worker `worker_index` < range_count. Written so that nothing
 * overflows even for count near INT64_MAX: worker_index * chunks_per_range
 * is at most chunk_count, and chunk * grain is only formed for chunks that
 * start before `count`. */
static void partition_range(const partition *cut, int worker_index,
                            int64_t *out_begin, int64_t *out_end) {
  int64_t extra_before =
      worker_index < cut->extra_chunks ? worker_index : cut->extra_chunks;
  int64_t first_chunk = worker_index * cut->chunks_per_range + extra_before;
  int64_t end_chunk = first_chunk + cut->chunks_per_range +
                      (worker_index < cut->extra_chunks ? 1 : 0);
  *out_begin = first_chunk * cut->grain;
  *out_end = end_chunk == cut->chunk_count ? cut->count : end_chunk * cut->grain;
}

void vlm_thread_pool_range(int64_t count, int64_t grain, int worker_count,
                           int worker_index, int64_t *out_begin,
                           int64_t *out_end) {
  *out_begin = 0;
  *out_end = 0;
  if (count <= 0 || worker_index < 0) return;
  partition cut = make_partition(count, grain, worker_count);
  if (worker_index >= cut.range_count) {
    *out_begin = count;
    *out_end = count;
    return;
  }
  partition_range(&cut, worker_index, out_begin, out_end);
}

/* ------------------------------------------------------------------------ */
/* Workers                                                                   */
/* ------------------------------------------------------------------------ */

/* Returns the worker's generation once it differs from `seen`. The acquire
 * load that observes the new value makes the mailbox contents visible. */
static uint32_t wait_for_new_generation(vlm_thread_worker *worker,
                                        uint32_t seen) {
  spin_budget budget = {worker->pool->pure_spin_nanoseconds, 0, 0};
  do {
    uint32_t generation =
        atomic_load_explicit(&worker->generation, memory_order_acquire);
    if (generation != seen) return generation;
  } while (spin_should_continue(&budget));
  for (;;) {
    /* Announce, then re-check: pairs with wake_worker (see the top of the
     * file). Both accesses are sequentially consistent on purpose. */
    atomic_store(&worker->sleeping, 1);
    if (atomic_load(&worker->generation) == seen) {
      futex_wait(&worker->generation, seen);
    }
    atomic_store_explicit(&worker->sleeping, 0, memory_order_relaxed);
    uint32_t generation =
        atomic_load_explicit(&worker->generation, memory_order_acquire);
    if (generation != seen) return generation;
  }
}

/* Hands the worker what its mailbox now holds. */
static void wake_worker(vlm_thread_worker *worker) {
  /* Sequentially consistent increment, then load of the flag: the other
   * half of the pairing in wait_for_new_generation. The increment is also
   * the release that publishes the mailbox. */
  atomic_fetch_add(&worker->generation, 1);
  if (atomic_load(&worker->sleeping)) futex_wake(&worker->generation, 1);
}

static void report_range_done(vlm_thread_pool *pool) {
  /* The decrement releases this worker's writes to the dispatcher. Only the
   * last worker can end the wait, so only it looks at the sleeping flag.
   * The pool stays valid here even if the dispatcher has already returned:
   * release joins this thread before freeing it. */
  if (atomic_fetch_sub(&pool->pending, 1) == 1 &&
      atomic_load(&pool->dispatcher_sleeping)) {
    futex_wake(&pool->pending, 1);
  }
}

static void wait_for_workers(vlm_thread_pool *pool) {
  spin_budget budget = {pool->pure_spin_nanoseconds, 0, 0};
  do {
    if (atomic_load_explicit(&pool->pending, memory_order_acquire) == 0) return;
  } while (spin_should_continue(&budget));
  for (;;) {
    atomic_store(&pool->dispatcher_sleeping, 1);
    uint32_t pending = atomic_load(&pool->pending);
    if (pending == 0) break;
    futex_wait(&pool->pending, pending);
  }
  atomic_store_explicit(&pool->dispatcher_sleeping, 0, memory_order_relaxed);
}

static void *worker_main(void *argument) {
  vlm_thread_worker *worker = argument;
  vlm_thread_pool *pool = worker->pool;
  /* A worker works for its pool for its whole life, so its frame is set once:
   * a parallel_for it makes from inside its range is recognised as nested. */
  worker_frame frame = {pool, worker->index, NULL};
  current_frame = &frame;
  uint32_t seen = 0;
  for (;;) {
    seen = wait_for_new_generation(worker, seen);
    if (!worker->function) break;
    worker->function(worker->context, worker->begin, worker->end,
                     worker->index);
    report_range_done(pool);
  }
  current_frame = NULL;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Pool                                                                      */
/* ------------------------------------------------------------------------ */

/* Stops and joins threads[0 .. started_thread_count). */
static void stop_threads(vlm_thread_pool *pool, int started_thread_count) {
  for (int i = 0; i < started_thread_count; i++) {
    pool->threads[i].function = NULL;
    wake_worker(&pool->threads[i]);
  }
  for (int i = 0; i < started_thread_count; i++) {
    pthread_join(pool->threads[i].thread, NULL);
  }
}

static void free_pool(vlm_thread_pool *pool) {
  pthread_mutex_destroy(&pool->dispatch_mutex);
  vlm_release(pool->allocator, pool->threads);
  vlm_release(pool->allocator, pool);
}

vlm_status vlm_thread_pool_create(int thread_count,
                                  const vlm_allocator *allocator,
                                  vlm_thread_pool **out_pool) {
  if (!out_pool) {
    return VLM_ERROR(INVALID_ARGUMENT, "thread pool: out_pool is NULL");
  }
  *out_pool = NULL;
  if (thread_count > VLM_THREAD_POOL_MAX_THREADS) {
    return VLM_ERROR(INVALID_ARGUMENT,
                     "thread pool: thread_count %d exceeds the maximum of %d",
                     thread_count, VLM_THREAD_POOL_MAX_THREADS);
  }
  int cpu_count = vlm_cpu_count();
  if (thread_count <= 0) {
    thread_count = cpu_count < VLM_THREAD_POOL_MAX_THREADS
                       ? cpu_count
                       : VLM_THREAD_POOL_MAX_THREADS;
  }

  vlm_thread_pool *pool = vlm_allocate_zeroed(allocator, sizeof(*pool),
                                              alignof(vlm_thread_pool));
  if (!pool) {
    return VLM_ERROR(RESOURCE_EXHAUSTED,
                     "thread pool: out of memory allocating the pool");
  }
  pool->allocator = allocator;
  pool->thread_count = thread_count;
  pool->pure_spin_nanoseconds =
      thread_count > cpu_count ? 0 : PURE_SPIN_NANOSECONDS;
  atomic_init(&pool->pending, 0);
  atomic_init(&pool->dispatcher_sleeping, 0);
  int result = pthread_mutex_init(&pool->dispatch_mutex, NULL);
  if (result != 0) {
    vlm_release(allocator, pool);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "thread pool: creating a mutex: %s",
                     strerror(result));
  }
  if (thread_count == 1) {
    *out_pool = pool;
    return VLM_OK;
  }

  int helper_count = thread_count - 1;
  pool->threads = vlm_allocate_zeroed(
      allocator, (size_t)helper_count * sizeof(vlm_thread_worker),
      alignof(vlm_thread_worker));
  if (!pool->threads) {
    free_pool(pool);
    return VLM_ERROR(RESOURCE_EXHAUSTED,
                     "thread pool: out of memory allocating %d workers",
                     helper_count);
  }

  /* New threads inherit the creator's signal mask. Block asynchronous
   * signals while starting them so that SIGINT, SIGTERM, SIGCHLD and friends
   * go to the application's threads, whose handlers expect them, rather than
   * interrupting a worker mid-kernel. Faults (SIGSEGV, SIGBUS, ...) stay
   * unblocked: a blocked fault kills the process without running handlers
   * such as the sanitizers' crash reporters. */
  sigset_t blocked, previous;
  sigfillset(&blocked);
  static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE,
                                      SIGILL,  SIGTRAP, SIGSYS};
  for (size_t i = 0; i < sizeof(fault_signals) / sizeof(fault_signals[0]); i++) {
    sigdelset(&blocked, fault_signals[i]);
  }
  pthread_sigmask(SIG_SETMASK, &blocked, &previous);
  int started = 0;
  for (; started < helper_count; started++) {
    vlm_thread_worker *worker = &pool->threads[started];
    atomic_init(&worker->generation, 0);
    atomic_init(&worker->sleeping, 0);
    worker->pool = pool;
    worker->index = started + 1;
    result = pthread_create(&worker->thread, NULL, worker_main, worker);
    if (result != 0) break;
    /* Named so that top -H, perf and gdb show what the threads are; at most
     * 15 characters, which "vlm-worker-1023" just fits. A failure here only
     * loses the name. */
    char name[16];
    snprintf(name, sizeof(name), "vlm-worker-%d", worker->index);
    pthread_setname_np(worker->thread, name);
  }
  pthread_sigmask(SIG_SETMASK, &previous, NULL);

  if (started < helper_count) {
    stop_threads(pool, started);
    free_pool(pool);
    return VLM_ERROR(RESOURCE_EXHAUSTED,
                     "thread pool: starting worker thread %d of %d: %s",
                     started + 1, helper_count, strerror(result));
  }
  *out_pool = pool;
  return VLM_OK;
}

int vlm_thread_pool_size(const vlm_thread_pool *pool) {
  return pool ? pool->thread_count : 1;
}

static double thread_seconds(clockid_t clock) {
  struct timespec time;
  if (clock_gettime(clock, &time) != 0) return 0;
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

double vlm_thread_pool_cpu_seconds(const vlm_thread_pool *pool) {
  double seconds = thread_seconds(CLOCK_THREAD_CPUTIME_ID);
  for (int i = 0; pool && i < pool->thread_count - 1; i++) {
    clockid_t clock;
    if (pthread_getcpuclockid(pool->threads[i].thread, &clock) == 0) seconds += thread_seconds(clock);
  }
  return seconds;
}

void vlm_thread_pool_parallel_for(vlm_thread_pool *pool, int64_t count,
                                  int64_t grain, vlm_parallel_function function,
                                  void *context) {
  if (count <= 0) return;
  if (!pool) {
    function(context, 0, count, 0);
    return;
  }
  const worker_frame *enclosing = find_frame(pool);
  if (enclosing) {
    /* Nested inside a loop of this same pool: every other worker is busy
     * with the outer loop, so do the whole inner loop here, under this
     * worker's index (its scratch space is ours to use). */
    function(context, 0, count, enclosing->worker_index);
    return;
  }
  partition cut = make_partition(count, grain, pool->thread_count);

  pthread_mutex_lock(&pool->dispatch_mutex);
  worker_frame frame = {pool, 0, current_frame};
  current_frame = &frame;
  if (cut.range_count == 1) {
    /* Too small to share: no wake-ups, no waiting. */
    function(context, 0, count, 0);
  } else {
    /* Published to the workers by the increments in wake_worker. */
    atomic_store_explicit(&pool->pending, (uint32_t)(cut.range_count - 1),
                          memory_order_relaxed);
    for (int worker_index = 1; worker_index < cut.range_count; worker_index++) {
      vlm_thread_worker *worker = &pool->threads[worker_index - 1];
      worker->function = function;
      worker->context = context;
      partition_range(&cut, worker_index, &worker->begin, &worker->end);
      wake_worker(worker);
    }
    int64_t begin, end;
    partition_range(&cut, 0, &begin, &end);
    function(context, begin, end, 0);
    wait_for_workers(pool);
  }
  current_frame = frame.outer;
  pthread_mutex_unlock(&pool->dispatch_mutex);
}

void vlm_thread_pool_release(vlm_thread_pool *pool) {
  if (!pool) return;
  stop_threads(pool, pool->thread_count - 1);
  free_pool(pool);
}

/* ------------------------------------------------------------------------ */
/* CPU count                                                                 */
/* ------------------------------------------------------------------------ */

/* CPUs in this thread's affinity mask (taskset, cpusets, container limits
 * on which cores we may use). */
static int affinity_cpu_count(void) {
  /* The kernel refuses (EINVAL) a mask smaller than its own, so grow the mask
   * until it fits; the first try covers 1024 CPUs. */
  for (int cpu_capacity = 1024; cpu_capacity <= (1 << 20); cpu_capacity *= 2) {
    cpu_set_t *set = CPU_ALLOC(cpu_capacity);
    if (!set) break;
    size_t set_size = CPU_ALLOC_SIZE(cpu_capacity);
    CPU_ZERO_S(set_size, set);
    if (sched_getaffinity(0, set_size, set) == 0) {
      int count = CPU_COUNT_S(set_size, set);
      CPU_FREE(set);
      return count;
    }
    int error = errno;
    CPU_FREE(set);
    if (error != EINVAL) break;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 && online < INT_MAX ? (int)online : 1;
}

/* Reads up to size - 1 bytes of a small (pseudo-)file and NUL-terminates. */
static bool read_small_file(const char *path, char *buffer, size_t size) {
  int descriptor = open(path, O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) return false;
  ssize_t length = read(descriptor, buffer, size - 1);
  close(descriptor);
  if (length < 0) return false;
  buffer[length] = '\0';
  return true;
}

int vlm_cgroup_cpu_max_parse(const char *text) {
  if (!text) return 0;
  char *end;
  errno = 0;
  long long quota = strtoll(text, &end, 10);
  if (end == text || errno != 0 || quota <= 0) return 0; /* "max", garbage */
  const char *period_text = end;
  errno = 0;
  long long period = strtoll(period_text, &end, 10);
  if (end == period_text || errno != 0 || period <= 0) return 0;
  while (*end == ' ' || *end == '\t' || *end == '\n') end++;
  if (*end != '\0') return 0;
  long long cpus = quota / period + (quota % period != 0);
  return cpus > INT_MAX ? INT_MAX : (int)cpus;
}

/* The CPU count a cgroup v2 CPU quota allows this process, or 0 for none.
 * A quota is a time budget, not a set of cores: 150000/100000 lets us run on
 * all cores but only for 1.5 cores' worth of time, so more than 2 busy
 * threads would just be throttled. */
static int cgroup_cpu_limit(void) {
  /* Our cgroup, relative to the v2 mount, is the "0::<path>" line of
   * /proc/self/cgroup. In a container with its own cgroup namespace it is
   * "/", and /sys/fs/cgroup is our own cgroup. */
  char membership[4096];
  char relative[PATH_MAX] = "";
  if (read_small_file("/proc/self/cgroup", membership, sizeof(membership))) {
    const char *line = membership;
    while (line && *line) {
      if (strncmp(line, "0::", 3) == 0) {
        line += 3;
        size_t length = strcspn(line, "\n");
        if (length < sizeof(relative)) {
          memcpy(relative, line, length);
          relative[length] = '\0';
        }
        break;
      }
      line = strchr(line, '\n');
      if (line) line++;
    }
  }
  if (strcmp(relative, "/") == 0 || relative[0] != '/') relative[0] = '\0';

  /* A quota on any ancestor caps us as well, so walk up to the mount root
   * (whose cpu.max is the one a namespaced container sees) and keep the
   * tightest. */
  int limit = 0;
  for (;;) {
    char path[PATH_MAX + 64];
    char text[128];
    snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpu.max", relative);
    if (read_small_file(path, text, sizeof(text))) {
      int cpus = vlm_cgroup_cpu_max_parse(text);
      if (cpus > 0 && (limit == 0 || cpus < limit)) limit = cpus;
    }
    if (relative[0] == '\0') break;
    *strrchr(relative, '/') = '\0'; /* "/a/b" -> "/a" -> "" */
  }
  return limit;
}

int vlm_cpu_count(void) {
  int count = affinity_cpu_count();
  int limit = cgroup_cpu_limit();
  if (limit > 0 && limit < count) count = limit;
  return count < 1 ? 1 : count;
}
