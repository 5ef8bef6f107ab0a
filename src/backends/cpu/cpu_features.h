/* Runtime CPU feature detection and the choice of kernel path.
 *
 * Kernels come in up to three paths: portable C, AVX2+FMA and AVX-512. Each
 * path is compiled with __attribute__((target)) in the same translation unit,
 * so the library itself is built for the baseline x86-64 ISA and runs
 * anywhere; the path is picked once at run time from cpuid/xgetbv.
 *
 * Every path computes bit-identical results (see docs/KERNELS.md, "reduction
 * order"), so the choice is a matter of speed only. Tests force each path in
 * turn with cpu_kernel_path_force and compare the results bit for bit. */
#ifndef VLM_BACKENDS_CPU_CPU_FEATURES_H
#define VLM_BACKENDS_CPU_CPU_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cpu_features {
  bool avx2;        /* AVX2 and FMA3, with the OS saving ymm state */
  bool f16c;        /* half-precision conversions (vcvtph2ps) */
  bool avx512;      /* AVX-512 F, BW, VL and DQ, with the OS saving zmm state */
  bool avx512_bf16; /* AVX512-BF16 (vdpbf16ps, vcvtneps2bf16) */
} cpu_features;

typedef enum cpu_kernel_path {
  CPU_KERNEL_PATH_PORTABLE = 0,
  CPU_KERNEL_PATH_AVX2,
  CPU_KERNEL_PATH_AVX512,
  CPU_KERNEL_PATH_COUNT
} cpu_kernel_path;

/* What this CPU supports, detected once (thread-safe). */
const cpu_features *cpu_features_detect(void);

/* The path kernels use now: the forced one if any, else the best the CPU
 * supports. */
cpu_kernel_path cpu_kernel_path_active(void);

/* True when the CPU can run `path`. */
bool cpu_kernel_path_supported(cpu_kernel_path path);

/* Makes kernels use `path` (for tests and benchmarks; not for use while
 * kernels run on other threads). Returns false, changing nothing, when the
 * CPU cannot run it. CPU_KERNEL_PATH_COUNT restores automatic choice. The
 * environment variable VLM_CPU_PATH=portable|avx2|avx512 has the same effect
 * at start-up. */
bool cpu_kernel_path_force(cpu_kernel_path path);

const char *cpu_kernel_path_name(cpu_kernel_path path);

/* Logs (debug) the path a module's kernels run on, why, its thread count
 * and the detected instruction sets; warns when VLM_CPU_PATH named a path
 * this CPU cannot run. */
void cpu_kernel_log_choice(const char *module, int threads);

/* The detected instruction sets as a line ("x86-64 avx2 fma f16c ..."). */
void cpu_features_describe(char *out, size_t size);
/* The CPU's brand string (cpuid 0x80000002-4), or "unknown". */
void cpu_features_brand(char *out, size_t size);

#endif
