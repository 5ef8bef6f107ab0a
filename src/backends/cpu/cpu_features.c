#include "backends/cpu/cpu_features.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#include <time.h>

#include "backends/cpu/cpu_kernels.h"
#include "core/thread_pool.h"
#define CPU_FEATURES_X86 1
#endif

static cpu_features detected_features;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
/* The forced path, or CPU_KERNEL_PATH_COUNT for "automatic". Read by every
 * kernel call, so it is an atomic rather than a lock. */
static _Atomic int forced_path = CPU_KERNEL_PATH_COUNT;

#if CPU_FEATURES_X86
/* xgetbv(0): which register states the OS saves on a context switch. A CPU
 * may support AVX-512 while the OS does not enable it; then it must not be
 * used. Inline asm because the _xgetbv intrinsic needs -mxsave. */
static unsigned long long read_xcr0(void) {
  unsigned int eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((unsigned long long)edx << 32) | eax;
}
#endif

static void detect(void) {
  memset(&detected_features, 0, sizeof(detected_features));
#if CPU_FEATURES_X86
  unsigned int eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return;
  bool fma = (ecx >> 12) & 1, osxsave = (ecx >> 27) & 1, avx = (ecx >> 28) & 1;
  bool f16c = (ecx >> 29) & 1;
  if (!osxsave || !avx) return;
  unsigned long long xcr0 = read_xcr0();
  bool ymm_saved = (xcr0 & 0x6) == 0x6;    /* SSE and AVX state */
  bool zmm_saved = (xcr0 & 0xe6) == 0xe6;  /* plus opmask and zmm state */
  if (!ymm_saved) return;
  detected_features.f16c = f16c;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return;
  bool avx2 = (ebx >> 5) & 1;
  bool avx512f = (ebx >> 16) & 1, avx512dq = (ebx >> 17) & 1;
  bool avx512bw = (ebx >> 30) & 1, avx512vl = (ebx >> 31) & 1;
  detected_features.avx2 = avx2 && fma;
  detected_features.avx512 = zmm_saved && avx512f && avx512dq && avx512bw &&
                             avx512vl && detected_features.avx2 && f16c;
  unsigned int max_subleaf = eax;
  if (detected_features.avx512 && max_subleaf >= 1 &&
      __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
    detected_features.avx512_bf16 = (eax >> 5) & 1;
#endif
}

/* What `path` needs, from already detected features (no pthread_once: this
 * also runs inside the once routine). */
static bool path_supported_by(const cpu_features *features, cpu_kernel_path path) {
  switch (path) {
    case CPU_KERNEL_PATH_PORTABLE: return true;
    /* The AVX2 path converts f16 with F16C, which every AVX2 CPU has. */
    case CPU_KERNEL_PATH_AVX2: return features->avx2 && features->f16c;
    case CPU_KERNEL_PATH_AVX512: return features->avx512;
    default: return false;
  }
}

static void detect_and_read_environment(void) {
  detect();
  const char *requested = getenv("VLM_CPU_PATH");
  if (!requested) return;
  for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++)
    if (strcmp(requested, cpu_kernel_path_name((cpu_kernel_path)path)) == 0 &&
        path_supported_by(&detected_features, (cpu_kernel_path)path))
      atomic_store(&forced_path, path);
}

const cpu_features *cpu_features_detect(void) {
  pthread_once(&detect_once, detect_and_read_environment);
  return &detected_features;
}

bool cpu_kernel_path_supported(cpu_kernel_path path) {
  return path_supported_by(cpu_features_detect(), path);
}

cpu_kernel_path cpu_kernel_path_active(void) {
  cpu_features_detect();
  int forced = atomic_load_explicit(&forced_path, memory_order_relaxed);
  if (forced != CPU_KERNEL_PATH_COUNT) return (cpu_kernel_path)forced;
  if (cpu_kernel_path_supported(CPU_KERNEL_PATH_AVX512)) return CPU_KERNEL_PATH_AVX512;
  if (cpu_kernel_path_supported(CPU_KERNEL_PATH_AVX2)) return CPU_KERNEL_PATH_AVX2;
  return CPU_KERNEL_PATH_PORTABLE;
}

bool cpu_kernel_path_force(cpu_kernel_path path) {
  cpu_features_detect();
  if (path != CPU_KERNEL_PATH_COUNT && !cpu_kernel_path_supported(path)) return false;
  atomic_store(&forced_path, (int)path);
  return true;
}

const char *cpu_kernel_path_name(cpu_kernel_path path) {
  switch (path) {
    case CPU_KERNEL_PATH_PORTABLE: return "portable";
    case CPU_KERNEL_PATH_AVX2: return "avx2";
    case CPU_KERNEL_PATH_AVX512: return "avx512";
    default: return "automatic";
  }
}

/* ---- Machine limits ------------------------------------------------------ */

#define FMA_CHAINS 12
#define FMA_ITERATIONS 20000000

__attribute__((target("avx512f"))) static void fma_worker(void *context, int64_t begin,
                                                         int64_t end, int worker) {
  __m512 accumulators[FMA_CHAINS], scale = _mm512_set1_ps(0.999f), add = _mm512_set1_ps(0.001f);
  for (int j = 0; j < FMA_CHAINS; j++) accumulators[j] = _mm512_set1_ps((float)j);
  for (int64_t i = begin; i < end; i++)
#pragma GCC unroll 12
    for (int j = 0; j < FMA_CHAINS; j++)
      accumulators[j] = _mm512_fmadd_ps(accumulators[j], scale, add);
  float *sink = context;
  for (int j = 0; j < FMA_CHAINS; j++) sink[worker] += _mm512_reduce_add_ps(accumulators[j]);
}

double cpu_measure_fma_peak_gflops(vlm_thread_pool *pool) {
  if (!cpu_features_detect()->avx512) return 0;
  int workers = vlm_thread_pool_size(pool);
  float sink[VLM_THREAD_POOL_MAX_THREADS] = {0};
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  vlm_thread_pool_parallel_for(pool, (int64_t)FMA_ITERATIONS * workers, FMA_ITERATIONS,
                               fma_worker, sink);
  clock_gettime(CLOCK_MONOTONIC, &end);
  double seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9;
  return 2.0 * 16 * FMA_CHAINS * (double)FMA_ITERATIONS * workers / seconds / 1e9;
}
