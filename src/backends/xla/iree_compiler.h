/* Compiling emitted modules with IREE's `iree-compile` (PyPI's pinned
 * iree-base-compiler, docs/XLA_ROUTE.md) and the artifact cache.
 *
 * The compiler runs as a subprocess: the wheel ships its library without a
 * header, so there is no C API to link. Artifacts live under a cache
 * directory, one subdirectory per compatibility key (named by its hash):
 *
 *   <cache>/<key hash>/module.mlir   what was compiled (for diagnostics)
 *   <cache>/<key hash>/module.vmfb   the artifact
 *   <cache>/<key hash>/key.json      the full key (xla_key.h)
 *
 * A loader computes the key it needs and refuses an artifact whose stored
 * key differs (vlm_xla_artifact_check) before anything executes. */
#ifndef VLM_BACKENDS_XLA_IREE_COMPILER_H
#define VLM_BACKENDS_XLA_IREE_COMPILER_H

#include <stdbool.h>
#include <stdio.h>

#include "backends/xla/xla_key.h"
#include "vlm.h"

#define VLM_XLA_PATH_LENGTH 4096

typedef enum vlm_xla_target {
  VLM_XLA_TARGET_LLVM_CPU, /* this machine's CPU (--iree-llvmcpu-target-cpu=host) */
  VLM_XLA_TARGET_CUDA,     /* sm_80 PTX: IREE 3.13 has no Hopper target; newer GPUs JIT it */
} vlm_xla_target;

/* "llvm-cpu" or "cuda". */
vlm_status vlm_xla_target_from_name(const char *name, vlm_xla_target *out_target);
const char *vlm_xla_target_name(vlm_xla_target target);

typedef struct vlm_iree_compiler {
  char path[VLM_XLA_PATH_LENGTH];
  /* "3.13.0rc20261016@89ece87b..." from `iree-compile --version`. */
  char version[256];
} vlm_iree_compiler;

/* Where the xla backend's Python side lives. A vlm built here uses the
 * source tree's (src/backends/xla, .venv-xla); an installed one (`cmake
 * --install`, the .deb: PREFIX/bin/vlm, found from /proc/self/exe) uses
 * PREFIX/share/vlm/xla for the bridge and its requirements.txt and
 * PREFIX/lib/vlm/xla-venv for the venv. $VLM_XLA_VENV and
 * $VLM_XLA_BRIDGE_DIR override either. */
typedef struct vlm_xla_paths {
  bool installed;
  char bridge_dir[VLM_XLA_PATH_LENGTH];   /* holds vlm_xla_bridge.py */
  char venv[VLM_XLA_PATH_LENGTH];         /* python3 and iree-compile in bin/ */
  char requirements[VLM_XLA_PATH_LENGTH]; /* for messages: how to make the venv */
} vlm_xla_paths;
void vlm_xla_paths_get(vlm_xla_paths *out);

/* Finds iree-compile: $VLM_IREE_COMPILE, else bin/iree-compile in the venv
 * of vlm_xla_paths_get, else `iree-compile` on PATH; then asks it for its
 * version. NOT_FOUND says how to install it. */
vlm_status vlm_iree_compiler_find(vlm_iree_compiler *out_compiler);

/* Adds the compile-time fields to a key: compiler version, target, target
 * flags and, for llvm-cpu, the host CPU's features (code compiled for
 * `host` may use any of them). */
vlm_status vlm_xla_key_add_target(vlm_xla_key *key, const char *compiler_version, vlm_xla_target target);

/* $VLM_XLA_CACHE, else $XDG_CACHE_HOME/vlm/xla, else ~/.cache/vlm/xla. */
void vlm_xla_default_cache_dir(char *out, size_t size);
/* <cache_dir>/<key hash>. */
void vlm_xla_artifact_dir(const char *cache_dir, const vlm_xla_key *key, char *out, size_t size);

/* Compiles `module_text` into the artifact directory of `key` (which must
 * already hold the target fields), streaming iree-compile's output and
 * progress lines to `progress` (may be NULL). A failed compile returns an
 * error carrying the compiler's diagnostics (the last few KB). */
vlm_status vlm_xla_compile(const vlm_iree_compiler *compiler, const char *module_text, const vlm_xla_key *key,
                           vlm_xla_target target, const char *cache_dir, FILE *progress,
                           char *out_artifact_dir, size_t size);

/* Refuses, before any execution, an artifact directory whose key.json is
 * missing, unreadable or differs from `expected`, or that lacks module.vmfb. */
vlm_status vlm_xla_artifact_check(const char *artifact_dir, const vlm_xla_key *expected);

#endif
