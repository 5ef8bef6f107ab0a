#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "core/thread_pool.h"
#include "test.h"

/* The harness's CHECK macros update a plain global, so loop bodies below
 * only record what they saw (with atomics where workers share a slot) and the
 * checks run on the main thread afterwards. */

#define MAX_WORKERS 16

typedef struct recorded_range {
  int64_t begin;
  int64_t end;
  int call_count; /* calls this worker received */
} recorded_range;

typedef struct coverage_context {
  _Atomic int *visits; /* one counter per index */
  recorded_range ranges[MAX_WORKERS];
  _Atomic int bad_worker_index_count;
} coverage_context;

static void record_coverage(void *context, int64_t begin, int64_t end,
                            int worker_index) {
  coverage_context *coverage = context;
  if (worker_index < 0 || worker_index >= MAX_WORKERS) {
    atomic_fetch_add(&coverage->bad_worker_index_count, 1);
    return;
  }
  /* Each worker index is used by at most one range per call, so its slot is
   * written by one thread only (a second call shows up in call_count). */
  recorded_range *range = &coverage->ranges[worker_index];
  range->begin = begin;
  range->end = end;
  range->call_count++;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&coverage->visits[i], 1);
}

/* Runs one loop and checks everything the contract promises about it. */
static void check_one_loop(vlm_thread_pool *pool, int64_t count, int64_t grain) {
  int size = vlm_thread_pool_size(pool);
  coverage_context coverage;
  memset(&coverage, 0, sizeof(coverage));
  coverage.visits = calloc((size_t)count, sizeof(*coverage.visits));
  vlm_thread_pool_parallel_for(pool, count, grain, record_coverage, &coverage);

  int64_t unvisited = 0, visited_twice = 0;
  for (int64_t i = 0; i < count; i++) {
    if (coverage.visits[i] == 0) unvisited++;
    if (coverage.visits[i] > 1) visited_twice++;
  }
  int64_t effective_grain = grain < 1 ? 1 : grain;
  int64_t chunk_count = (count + effective_grain - 1) / effective_grain;
  int64_t expected_ranges = chunk_count < size ? chunk_count : size;
  int ranges_seen = 0, misplaced = 0;
  for (int worker = 0; worker < size && worker < MAX_WORKERS; worker++) {
    int64_t begin, end;
    vlm_thread_pool_range(count, grain, size, worker, &begin, &end);
    const recorded_range *range = &coverage.ranges[worker];
    if (worker < expected_ranges) {
      ranges_seen += range->call_count;
      /* The actual range is the documented one, it is non-empty, it starts
       * on a grain boundary, and only the last range may be ragged. */
      if (range->call_count != 1 || range->begin != begin ||
          range->end != end || begin >= end || begin % effective_grain != 0 ||
          (end != count && (end - begin) % effective_grain != 0)) {
        misplaced++;
      }
      /* Contiguous: each range starts where the previous one ended. */
      if (worker > 0 && coverage.ranges[worker - 1].end != range->begin) {
        misplaced++;
      }
    } else if (range->call_count != 0 || begin != end) {
      misplaced++; /* idle workers are not called */
    }
  }
  if (unvisited || visited_twice || misplaced || ranges_seen != expected_ranges ||
      coverage.bad_worker_index_count) {
    fprintf(stderr,
            "  size %d count %lld grain %lld: %lld unvisited, %lld visited "
            "twice, %d misplaced ranges, %d of %lld ranges run\n",
            size, (long long)count, (long long)grain, (long long)unvisited,
            (long long)visited_twice, misplaced, ranges_seen,
            (long long)expected_ranges);
  }
  CHECK_INT_EQ(unvisited, 0);
  CHECK_INT_EQ(visited_twice, 0);
  CHECK_INT_EQ(misplaced, 0);
  CHECK_INT_EQ(ranges_seen, expected_ranges);
  CHECK_INT_EQ(coverage.bad_worker_index_count, 0);
  free(coverage.visits);
}

static void visits_every_index_exactly_once(void) {
  static const int sizes[] = {1, 2, 3, 4, 7, 8};
  static const int64_t counts[] = {1, 2, 3, 5, 7, 8, 9, 16, 17, 100, 1000, 4097};
  static const int64_t grains[] = {-3, 0, 1, 2, 3, 7, 64, 1000, 1000000000};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    vlm_thread_pool *pool = NULL;
    CHECK_OK(vlm_thread_pool_create(sizes[s], NULL, &pool));
    if (!pool) continue;
    CHECK_INT_EQ(vlm_thread_pool_size(pool), sizes[s]);
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
      for (size_t g = 0; g < sizeof(grains) / sizeof(grains[0]); g++) {
        check_one_loop(pool, counts[c], grains[g]);
      }
    }
    vlm_thread_pool_release(pool);
  }
}

static void partition_is_balanced_and_static(void) {
  /* 10 indices, grain 1, 4 workers: chunks dealt 3, 3, 2, 2. */
  static const int64_t expected[4][2] = {{0, 3}, {3, 6}, {6, 8}, {8, 10}};
  for (int worker = 0; worker < 4; worker++) {
    int64_t begin, end;
    vlm_thread_pool_range(10, 1, 4, worker, &begin, &end);
    CHECK_INT_EQ(begin, expected[worker][0]);
    CHECK_INT_EQ(end, expected[worker][1]);
  }
  /* 10 indices, grain 4: chunks [0,4) [4,8) [8,10); the ragged one is last
   * and the fourth worker gets nothing. */
  int64_t begin, end;
  vlm_thread_pool_range(10, 4, 4, 2, &begin, &end);
  CHECK(begin == 8 && end == 10);
  vlm_thread_pool_range(10, 4, 4, 3, &begin, &end);
  CHECK(begin == end);
  /* Near INT64_MAX nothing may overflow. */
  int64_t count = INT64_MAX, grain = INT64_MAX / 2;
  vlm_thread_pool_range(count, grain, 8, 0, &begin, &end);
  CHECK(begin == 0 && end == grain);
  vlm_thread_pool_range(count, grain, 8, 2, &begin, &end);
  CHECK(begin == 2 * grain && end == count);
  vlm_thread_pool_range(count, 1, 3, 2, &begin, &end);
  CHECK(begin > 0 && begin < end && end == count);
}

typedef struct range_log {
  recorded_range ranges[MAX_WORKERS];
} range_log;

static void log_range(void *context, int64_t begin, int64_t end,
                      int worker_index) {
  range_log *log = context;
  log->ranges[worker_index].begin = begin;
  log->ranges[worker_index].end = end;
  log->ranges[worker_index].call_count++;
}

static void same_ranges_on_repeated_calls(void) {
  vlm_thread_pool *pool = NULL;
  CHECK_OK(vlm_thread_pool_create(4, NULL, &pool));
  if (!pool) return;
  static const int64_t shapes[][2] = {{1000, 1}, {1000, 16}, {5, 1}, {4097, 64}};
  for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
    range_log first;
    memset(&first, 0, sizeof(first));
    vlm_thread_pool_parallel_for(pool, shapes[s][0], shapes[s][1], log_range, &first);
    int differing_calls = 0;
    for (int repeat = 0; repeat < 200; repeat++) {
      range_log again;
      memset(&again, 0, sizeof(again));
      vlm_thread_pool_parallel_for(pool, shapes[s][0], shapes[s][1], log_range, &again);
      if (memcmp(&first, &again, sizeof(first)) != 0) differing_calls++;
    }
    CHECK_INT_EQ(differing_calls, 0);
  }
  vlm_thread_pool_release(pool);
}

static void add_range_length(void *context, int64_t begin, int64_t end,
                             int worker_index) {
  (void)worker_index;
  atomic_fetch_add((_Atomic int64_t *)context, end - begin);
}

static void many_back_to_back_calls_complete(void) {
  /* 4 workers on a machine that may have fewer cores: workers get
   * descheduled mid-hand-off, which is where a lost wake-up would hang. The
   * pauses let the workers run out of spin and go to sleep on the futex, so
   * both the spinning and the sleeping hand-offs are exercised. */
  static const int sizes[] = {2, 4};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    vlm_thread_pool *pool = NULL;
    CHECK_OK(vlm_thread_pool_create(sizes[s], NULL, &pool));
    if (!pool) continue;
    _Atomic int64_t total = 0;
    int64_t expected = 0;
    for (int call = 0; call < 10000; call++) {
      int64_t count = 1 + call % (2 * sizes[s]);
      vlm_thread_pool_parallel_for(pool, count, 1, add_range_length, &total);
      expected += count;
      if (call % 1000 == 999) usleep(2000);
    }
    CHECK_INT_EQ(total, expected);
    vlm_thread_pool_release(pool);
  }
}

typedef struct nested_context {
  vlm_thread_pool *pool;
  int inner_calls[MAX_WORKERS];
  int inner_wrong[MAX_WORKERS]; /* inner call not the whole loop, or moved */
  _Atomic int64_t inner_total;
} nested_context;

typedef struct inner_context {
  nested_context *outer;
  int outer_worker_index;
  pthread_t outer_thread;
} inner_context;

static void inner_body(void *context, int64_t begin, int64_t end,
                       int worker_index) {
  inner_context *inner = context;
  nested_context *nested = inner->outer;
  int outer = inner->outer_worker_index;
  nested->inner_calls[outer]++;
  if (begin != 0 || end != 100 || worker_index != outer ||
      !pthread_equal(pthread_self(), inner->outer_thread)) {
    nested->inner_wrong[outer]++;
  }
  atomic_fetch_add(&nested->inner_total, end - begin);
}

static void outer_body(void *context, int64_t begin, int64_t end,
                       int worker_index) {
  nested_context *nested = context;
  for (int64_t i = begin; i < end; i++) {
    inner_context inner = {nested, worker_index, pthread_self()};
    vlm_thread_pool_parallel_for(nested->pool, 100, 1, inner_body, &inner);
  }
}

static void nested_call_runs_serially_on_the_caller(void) {
  static const int sizes[] = {1, 2, 4};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    nested_context nested;
    memset(&nested, 0, sizeof(nested));
    CHECK_OK(vlm_thread_pool_create(sizes[s], NULL, &nested.pool));
    if (!nested.pool) continue;
    vlm_thread_pool_parallel_for(nested.pool, sizes[s], 1, outer_body, &nested);
    for (int worker = 0; worker < sizes[s]; worker++) {
      CHECK_INT_EQ(nested.inner_calls[worker], 1);
      CHECK_INT_EQ(nested.inner_wrong[worker], 0);
    }
    CHECK_INT_EQ(nested.inner_total, 100 * sizes[s]);
    vlm_thread_pool_release(nested.pool);
  }
}

typedef struct caller_check {
  pthread_t caller;
  int call_count;
  int64_t begin, end;
  int worker_index;
  bool on_caller;
} caller_check;

static void note_caller(void *context, int64_t begin, int64_t end,
                        int worker_index) {
  caller_check *check = context;
  check->call_count++;
  check->begin = begin;
  check->end = end;
  check->worker_index = worker_index;
  check->on_caller = pthread_equal(pthread_self(), check->caller);
}

static void null_pool_runs_everything_on_the_caller(void) {
  caller_check check = {pthread_self(), 0, -1, -1, -1, false};
  vlm_thread_pool_parallel_for(NULL, 12345, 1, note_caller, &check);
  CHECK_INT_EQ(check.call_count, 1);
  CHECK(check.begin == 0 && check.end == 12345);
  CHECK_INT_EQ(check.worker_index, 0);
  CHECK(check.on_caller);
  CHECK_INT_EQ(vlm_thread_pool_size(NULL), 1);

  /* count <= 0 never calls, with or without a pool. */
  check.call_count = 0;
  vlm_thread_pool_parallel_for(NULL, 0, 1, note_caller, &check);
  vlm_thread_pool_parallel_for(NULL, -5, 1, note_caller, &check);
  vlm_thread_pool *pool = NULL;
  CHECK_OK(vlm_thread_pool_create(3, NULL, &pool));
  vlm_thread_pool_parallel_for(pool, 0, 1, note_caller, &check);
  vlm_thread_pool_parallel_for(pool, INT64_MIN, 1, note_caller, &check);
  CHECK_INT_EQ(check.call_count, 0);
  vlm_thread_pool_release(pool);
  vlm_thread_pool_release(NULL);
}

/* Threads in this process, from /proc/self/task. */
static int thread_count_now(void) {
  DIR *directory = opendir("/proc/self/task");
  if (!directory) return -1;
  int count = 0;
  struct dirent *entry;
  while ((entry = readdir(directory))) {
    if (entry->d_name[0] != '.') count++;
  }
  closedir(directory);
  return count;
}

static void one_thread_pool_starts_no_threads(void) {
  int before = thread_count_now();
  vlm_thread_pool *pool = NULL;
  CHECK_OK(vlm_thread_pool_create(1, NULL, &pool));
  CHECK_INT_EQ(vlm_thread_pool_size(pool), 1);
  CHECK_INT_EQ(thread_count_now(), before);
  caller_check check = {pthread_self(), 0, -1, -1, -1, false};
  vlm_thread_pool_parallel_for(pool, 1000, 1, note_caller, &check);
  CHECK_INT_EQ(check.call_count, 1);
  CHECK(check.begin == 0 && check.end == 1000 && check.on_caller);
  vlm_thread_pool_release(pool);

  /* And a pool of 3 starts exactly 2, which release joins. */
  CHECK_OK(vlm_thread_pool_create(3, NULL, &pool));
  CHECK_INT_EQ(thread_count_now(), before + 2);
  vlm_thread_pool_release(pool);
  CHECK_INT_EQ(thread_count_now(), before);
}

static void refuses_absurd_thread_counts(void) {
  vlm_thread_pool *pool = (vlm_thread_pool *)&pool; /* must be reset to NULL */
  CHECK_ERROR(vlm_thread_pool_create(1025, NULL, &pool),
              VLM_STATUS_INVALID_ARGUMENT,
              "thread_count 1025 exceeds the maximum of 1024");
  CHECK(pool == NULL);
  CHECK_ERROR(vlm_thread_pool_create(1 << 30, NULL, &pool),
              VLM_STATUS_INVALID_ARGUMENT, "exceeds the maximum");
  CHECK_ERROR(vlm_thread_pool_create(2, NULL, NULL),
              VLM_STATUS_INVALID_ARGUMENT, "out_pool is NULL");
}

static void default_size_is_the_cpu_count(void) {
  int cpus = vlm_cpu_count();
  CHECK(cpus >= 1);
  CHECK(cpus <= sysconf(_SC_NPROCESSORS_CONF) || sysconf(_SC_NPROCESSORS_CONF) < 1);
  for (int thread_count = 0; thread_count >= -1; thread_count--) {
    vlm_thread_pool *pool = NULL;
    CHECK_OK(vlm_thread_pool_create(thread_count, NULL, &pool));
    CHECK_INT_EQ(vlm_thread_pool_size(pool), cpus);
    vlm_thread_pool_release(pool);
  }
}

static void parses_cgroup_cpu_max(void) {
  CHECK_INT_EQ(vlm_cgroup_cpu_max_parse("max 100000\n"), 0);
  CHECK_INT_EQ(vlm_cgroup_cpu_max_parse("200000 100000\n"), 2);
  CHECK_INT_EQ(vlm_cgroup_cpu_max_parse("150000 100000\n"), 2); /* rounds up */
  CHECK_INT_EQ(vlm_cgroup_cpu_max_parse("50000 100000"), 1);
  CHECK_INT_EQ(vlm_cgroup_cpu_max_parse("1 1000000"), 1);
  CHECK_INT_EQ(vlm_cgroup_cpu_max_parse("800000 100000"), 8);
  /* Anything malformed is ignored (no cap) rather than trusted. */
  CHECK_INT_EQ(vlm_cgroup_cpu_max_parse(""), 0);
  CHECK_INT_EQ(vlm_cgroup_cpu_max_parse("100000"), 0);
  CHECK_INT_EQ(vlm_cgroup_cpu_max_parse("-1 100000"), 0);
  CHECK_INT_EQ(vlm_cgroup_cpu_max_parse("100000 0"), 0);
  CHECK_INT_EQ(vlm_cgroup_cpu_max_parse("100000 100000 junk"), 0);
  CHECK_INT_EQ(vlm_cgroup_cpu_max_parse(NULL), 0);
}

/* Counts allocations so the test can see the pool returns what it takes. */
typedef struct counting_allocator {
  _Atomic int live;
  int total;
} counting_allocator;

static void *counting_allocate(void *context, size_t size, size_t alignment) {
  counting_allocator *counts = context;
  void *pointer = vlm_allocator_system()->allocate(NULL, size, alignment);
  if (pointer) {
    atomic_fetch_add(&counts->live, 1);
    counts->total++;
  }
  return pointer;
}

static void counting_release(void *context, void *pointer) {
  counting_allocator *counts = context;
  atomic_fetch_sub(&counts->live, 1);
  vlm_allocator_system()->release(NULL, pointer);
}

static void memory_comes_from_the_given_allocator(void) {
  counting_allocator counts = {0, 0};
  vlm_allocator allocator = {&counts, counting_allocate, counting_release};
  vlm_thread_pool *pool = NULL;
  CHECK_OK(vlm_thread_pool_create(3, &allocator, &pool));
  CHECK(counts.total > 0);
  _Atomic int64_t total = 0;
  vlm_thread_pool_parallel_for(pool, 999, 1, add_range_length, &total);
  CHECK_INT_EQ(total, 999);
  vlm_thread_pool_release(pool);
  CHECK_INT_EQ(counts.live, 0);
}

typedef struct external_caller {
  vlm_thread_pool *pool;
  _Atomic int64_t *total;
  _Atomic int *workers_in_use; /* bit per worker index currently running */
  _Atomic int *overlaps;
} external_caller;

static void claim_worker_index(void *context, int64_t begin, int64_t end,
                               int worker_index) {
  external_caller *caller = context;
  int bit = 1 << worker_index;
  /* Two callers sharing worker indices at once would both hold a bit. */
  if (atomic_fetch_or(caller->workers_in_use, bit) & bit) {
    atomic_fetch_add(caller->overlaps, 1);
  }
  atomic_fetch_add(caller->total, end - begin);
  atomic_fetch_and(caller->workers_in_use, ~bit);
}

static void *call_repeatedly(void *argument) {
  external_caller *caller = argument;
  for (int call = 0; call < 2000; call++) {
    vlm_thread_pool_parallel_for(caller->pool, 1 + call % 7, 1,
                                 claim_worker_index, caller);
  }
  return NULL;
}

static void unrelated_callers_take_turns(void) {
  vlm_thread_pool *pool = NULL;
  CHECK_OK(vlm_thread_pool_create(3, NULL, &pool));
  if (!pool) return;
  _Atomic int64_t total = 0;
  _Atomic int workers_in_use = 0, overlaps = 0;
  external_caller caller = {pool, &total, &workers_in_use, &overlaps};
  pthread_t threads[3];
  for (int i = 0; i < 3; i++) pthread_create(&threads[i], NULL, call_repeatedly, &caller);
  for (int i = 0; i < 3; i++) pthread_join(threads[i], NULL);
  int64_t expected = 0;
  for (int call = 0; call < 2000; call++) expected += 1 + call % 7;
  CHECK_INT_EQ(total, 3 * expected);
  CHECK_INT_EQ(overlaps, 0);
  vlm_thread_pool_release(pool);
}

TEST_MAIN(TEST(visits_every_index_exactly_once),
          TEST(partition_is_balanced_and_static),
          TEST(same_ranges_on_repeated_calls),
          TEST(many_back_to_back_calls_complete),
          TEST(nested_call_runs_serially_on_the_caller),
          TEST(null_pool_runs_everything_on_the_caller),
          TEST(one_thread_pool_starts_no_threads),
          TEST(refuses_absurd_thread_counts),
          TEST(default_size_is_the_cpu_count),
          TEST(parses_cgroup_cpu_max),
          TEST(memory_comes_from_the_given_allocator),
          TEST(unrelated_callers_take_turns))
