#include "backends/cpu/cpu_features.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
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

/* VLM_CPU_PATH as read at start-up, and whether it named a path this CPU
 * can run (reported by cpu_kernel_log_choice). */
static char requested_path[32];
static bool requested_path_refused;

static void detect_and_read_environment(void) {
  detect();
  const char *requested = getenv("VLM_CPU_PATH");
  if (!requested) return;
  snprintf(requested_path, sizeof(requested_path), "%s", requested);
  requested_path_refused = true;
  for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++)
    if (strcmp(requested, cpu_kernel_path_name((cpu_kernel_path)path)) == 0 &&
        path_supported_by(&detected_features, (cpu_kernel_path)path)) {
      atomic_store(&forced_path, path);
      requested_path_refused = false;
    }
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

void cpu_kernel_log_choice(const char *module, int threads) {
  cpu_kernel_path path = cpu_kernel_path_active();
  char isa[160];
  cpu_features_describe(isa, sizeof(isa));
  if (requested_path_refused)
    VLM_LOG_WARNF("VLM_CPU_PATH=%s is not a kernel path this CPU can run (portable, avx2, avx512 as supported); "
                  "using %s", requested_path, cpu_kernel_path_name(path));
  bool forced = atomic_load(&forced_path) != CPU_KERNEL_PATH_COUNT;
  VLM_LOG_DEBUGF("cpu backend (%s): kernel path %s (%s), %d threads; cpu: %s", module, cpu_kernel_path_name(path),
                 forced ? (requested_path[0] && !requested_path_refused ? "forced by VLM_CPU_PATH" : "forced")
                        : "the best this cpu supports",
                 threads, isa);
}

void cpu_features_describe(char *out, size_t size) {
  const cpu_features *features = cpu_features_detect();
  snprintf(out, size, "x86-64%s%s%s%s", features->avx2 ? " avx2 fma" : "", features->f16c ? " f16c" : "",
           features->avx512 ? " avx512f avx512bw avx512vl avx512dq" : "",
           features->avx512_bf16 ? " avx512_bf16" : "");
#if !CPU_FEATURES_X86
  snprintf(out, size, "portable");
#endif
}

void cpu_features_brand(char *out, size_t size) {
  snprintf(out, size, "unknown");
#if CPU_FEATURES_X86
  unsigned int words[12], eax, ebx, ecx, edx;
  if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000004u) return;
  for (unsigned int leaf = 0; leaf < 3; leaf++)
    __get_cpuid(0x80000002u + leaf, &words[4 * leaf], &words[4 * leaf + 1], &words[4 * leaf + 2],
                &words[4 * leaf + 3]);
  char brand[49];
  memcpy(brand, words, 48);
  brand[48] = '\0';
  const char *start = brand;
  while (*start == ' ') start++;
  size_t length = strlen(start);
  while (length > 0 && start[length - 1] == ' ') length--;
  snprintf(out, size, "%.*s", (int)length, start);
#endif
}
