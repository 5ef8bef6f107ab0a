#include "backends/xla/iree_compiler.h"

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/status.h"

extern char **environ;

#define DIAGNOSTICS_TAIL 6144
#ifndef VLM_XLA_SOURCE_VENV
#define VLM_XLA_SOURCE_VENV ".venv-xla"
#endif
#ifndef VLM_XLA_BRIDGE_DIR
#define VLM_XLA_BRIDGE_DIR "src/backends/xla"
#endif

/* ---------------------------------------------------------------------- */
/* Targets                                                                 */
/* ---------------------------------------------------------------------- */

vlm_status vlm_xla_target_from_name(const char *name, vlm_xla_target *out_target) {
  if (strcmp(name, "llvm-cpu") == 0) *out_target = VLM_XLA_TARGET_LLVM_CPU;
  else if (strcmp(name, "cuda") == 0) *out_target = VLM_XLA_TARGET_CUDA;
  else return VLM_ERROR(INVALID_ARGUMENT, "unknown xla target '%s' (expected llvm-cpu or cuda)", name);
  return VLM_OK;
}

const char *vlm_xla_target_name(vlm_xla_target target) {
  return target == VLM_XLA_TARGET_CUDA ? "cuda" : "llvm-cpu";
}

/* The flags after the input file; the newer --iree-hal-target-device
 * spelling (the spike checked both). */
static int target_flags(vlm_xla_target target, const char **flags) {
  if (target == VLM_XLA_TARGET_CUDA) {
    flags[0] = "--iree-hal-target-device=cuda";
    flags[1] = "--iree-cuda-target=sm_80";
    return 2;
  }
  flags[0] = "--iree-hal-target-device=local";
  flags[1] = "--iree-hal-local-target-device-backends=llvm-cpu";
  flags[2] = "--iree-llvmcpu-target-cpu=host";
  return 3;
}

/* The host CPU's feature flags (x86 "flags", Arm "Features") hashed: an
 * artifact compiled for `host` on one machine may use instructions another
 * lacks. */
static void host_cpu_features(char *out, size_t size) {
  FILE *file = fopen("/proc/cpuinfo", "r");
  char line[8192];
  uint64_t hash = VLM_FNV1A64_SEED;
  bool found = false;
  while (file && !found && fgets(line, sizeof(line), file))
    if (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0) {
      hash = vlm_fnv1a64(line, strlen(line), hash);
      found = true;
    }
  if (file) fclose(file);
#if defined(__x86_64__)
  const char *architecture = "x86_64";
#elif defined(__aarch64__)
  const char *architecture = "aarch64";
#else
  const char *architecture = "other";
#endif
  snprintf(out, size, "%s:%s%016llx", architecture, found ? "" : "unknown-", (unsigned long long)hash);
}

vlm_status vlm_xla_key_add_target(vlm_xla_key *key, const char *compiler_version, vlm_xla_target target) {
  const char *flags[4];
  int count = target_flags(target, flags);
  char joined[512] = "";
  for (int i = 0; i < count; i++) {
    strcat(joined, i ? " " : "");
    strcat(joined, flags[i]);
  }
  char features[96] = "sm_80";
  if (target == VLM_XLA_TARGET_LLVM_CPU) host_cpu_features(features, sizeof(features));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "compiler", "iree %s", compiler_version));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "target", "%s", vlm_xla_target_name(target)));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "target_flags", "%s", joined));
  return vlm_xla_key_set(key, "target_features", "%s", features);
}

/* ---------------------------------------------------------------------- */
/* Running the compiler                                                    */
/* ---------------------------------------------------------------------- */

typedef struct process_output {
  char tail[DIAGNOSTICS_TAIL];
  size_t length;
} process_output;

static void keep_tail(process_output *output, const char *data, size_t length) {
  if (length >= sizeof(output->tail) - 1) {
    data += length - (sizeof(output->tail) - 1);
    length = sizeof(output->tail) - 1;
  }
  if (output->length + length >= sizeof(output->tail)) {
    size_t drop = output->length + length - (sizeof(output->tail) - 1);
    memmove(output->tail, output->tail + drop, output->length - drop);
    output->length -= drop;
  }
  memcpy(output->tail + output->length, data, length);
  output->length += length;
  output->tail[output->length] = '\0';
}

/* Runs argv with stdout and stderr on one pipe, copying the output to
 * `progress` as it comes and keeping its tail; *out_exit is the exit code
 * (or 128 + signal). */
static vlm_status run_process(char *const *argv, FILE *progress, process_output *output, int *out_exit) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) return VLM_ERROR(IO, "pipe: %s", strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
  pid_t child;
  int spawned = posix_spawn(&child, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_ends[1]);
  if (spawned != 0) {
    close(pipe_ends[0]);
    return VLM_ERROR(IO, "cannot run %s: %s", argv[0], strerror(spawned));
  }
  char buffer[4096];
  for (;;) {
    ssize_t got = read(pipe_ends[0], buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    keep_tail(output, buffer, (size_t)got);
    if (progress) {
      fwrite(buffer, 1, (size_t)got, progress);
      fflush(progress);
    }
  }
  close(pipe_ends[0]);
  int wait_status;
  while (waitpid(child, &wait_status, 0) < 0)
    if (errno != EINTR) return VLM_ERROR(IO, "waitpid: %s", strerror(errno));
  *out_exit = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
  return VLM_OK;
}

static bool executable(const char *path) { return access(path, X_OK) == 0; }

static bool find_on_path(const char *name, char *out, size_t size) {
  const char *path = getenv("PATH");
  while (path && *path) {
    const char *end = strchr(path, ':');
    size_t length = end ? (size_t)(end - path) : strlen(path);
    snprintf(out, size, "%.*s/%s", (int)length, path, name);
    if (length && executable(out)) return true;
    path = end ? end + 1 : NULL;
  }
  return false;
}

/* "IREE compiler version 3.13.0rc20261016 @ 89ece87..." -> "3.13.0rc20261016@89ece87...". */
static vlm_status parse_version(const char *text, char *out, size_t size) {
  const char *at = strstr(text, "IREE compiler version ");
  if (!at) return VLM_ERROR(FAILED_PRECONDITION, "cannot read the version from: %.200s", text);
  at += strlen("IREE compiler version ");
  char version[128] = "", revision[128] = "";
  if (sscanf(at, "%127s @ %127s", version, revision) < 1)
    return VLM_ERROR(FAILED_PRECONDITION, "cannot read the version from: %.200s", text);
  snprintf(out, size, "%s@%s", version, revision);
  return VLM_OK;
}

/* PREFIX when this process is PREFIX/bin/vlm of an installed vlm (its
 * bridge at PREFIX/share/vlm/xla), else false. */
static bool installed_prefix(char *out, size_t size) {
  char exe[VLM_XLA_PATH_LENGTH];
  ssize_t length = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (length <= 0) return false;
  exe[length] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return false;
  *slash = '\0'; /* PREFIX/bin */
  slash = strrchr(exe, '/');
  if (!slash || strcmp(slash, "/bin") != 0) return false;
  *slash = '\0';
  char bridge[VLM_XLA_PATH_LENGTH + 64];
  snprintf(bridge, sizeof(bridge), "%s/share/vlm/xla/vlm_xla_bridge.py", exe);
  if (access(bridge, R_OK) != 0) return false;
  snprintf(out, size, "%.*s", (int)(size - 1), exe);
  return strlen(exe) < size;
}

void vlm_xla_paths_get(vlm_xla_paths *out) {
  memset(out, 0, sizeof(*out));
  char prefix[VLM_XLA_PATH_LENGTH - 64];
  out->installed = installed_prefix(prefix, sizeof(prefix));
  if (out->installed) {
    snprintf(out->bridge_dir, sizeof(out->bridge_dir), "%.4000s/share/vlm/xla", prefix);
    snprintf(out->venv, sizeof(out->venv), "%.4000s/lib/vlm/xla-venv", prefix);
    snprintf(out->requirements, sizeof(out->requirements), "%.4000s/share/vlm/xla/requirements.txt", prefix);
  } else {
    snprintf(out->bridge_dir, sizeof(out->bridge_dir), "%s", VLM_XLA_BRIDGE_DIR);
    snprintf(out->venv, sizeof(out->venv), "%s", VLM_XLA_SOURCE_VENV);
    snprintf(out->requirements, sizeof(out->requirements), "tools/xla/requirements.txt");
  }
  const char *venv = getenv("VLM_XLA_VENV"), *bridge = getenv("VLM_XLA_BRIDGE_DIR");
  if (venv && *venv) snprintf(out->venv, sizeof(out->venv), "%.4000s", venv);
  if (bridge && *bridge) snprintf(out->bridge_dir, sizeof(out->bridge_dir), "%.4000s", bridge);
}

vlm_status vlm_iree_compiler_find(vlm_iree_compiler *out_compiler) {
  memset(out_compiler, 0, sizeof(*out_compiler));
  const char *from_environment = getenv("VLM_IREE_COMPILE");
  char *path = out_compiler->path;
  size_t size = sizeof(out_compiler->path);
  if (from_environment && *from_environment) {
    snprintf(path, size, "%s", from_environment);
    if (!executable(path))
      return VLM_ERROR(NOT_FOUND, "VLM_IREE_COMPILE=%s is not an executable file", from_environment);
  } else {
    vlm_xla_paths paths;
    vlm_xla_paths_get(&paths);
    snprintf(path, size, "%.*s/bin/iree-compile", (int)(size - 32), paths.venv);
    if (!executable(path) && !find_on_path("iree-compile", path, size))
      return VLM_ERROR(NOT_FOUND,
                       "iree-compile was not found (not in $VLM_IREE_COMPILE, %s/bin, or PATH); install "
                       "the pinned compiler: /usr/bin/python3.11 -m venv %s && %s/bin/pip install -r %s",
                       paths.venv, paths.venv, paths.venv, paths.requirements);
  }
  char *argv[] = {path, "--version", NULL};
  process_output output = {0};
  int exit_code = 0;
  VLM_RETURN_IF_ERROR(run_process(argv, NULL, &output, &exit_code));
  if (exit_code != 0)
    return VLM_ERROR(FAILED_PRECONDITION, "%s --version failed (exit %d): %s", path, exit_code, output.tail);
  return vlm_status_annotate(parse_version(output.tail, out_compiler->version, sizeof(out_compiler->version)),
                             "%s --version: ", path);
}

/* ---------------------------------------------------------------------- */
/* The cache                                                               */
/* ---------------------------------------------------------------------- */

void vlm_xla_default_cache_dir(char *out, size_t size) {
  const char *explicit_dir = getenv("VLM_XLA_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (explicit_dir && *explicit_dir) snprintf(out, size, "%s", explicit_dir);
  else if (xdg && *xdg) snprintf(out, size, "%s/vlm/xla", xdg);
  else snprintf(out, size, "%s/.cache/vlm/xla", home && *home ? home : ".");
}

void vlm_xla_artifact_dir(const char *cache_dir, const vlm_xla_key *key, char *out, size_t size) {
  char hash[17];
  vlm_xla_key_hash_hex(key, hash);
  snprintf(out, size, "%s/%s", cache_dir, hash);
}

static vlm_status make_directories(const char *path) {
  char partial[VLM_XLA_PATH_LENGTH];
  snprintf(partial, sizeof(partial), "%s", path);
  for (char *slash = partial + 1;; slash++) {
    bool end = *slash == '\0';
    if (*slash == '/' || end) {
      char saved = *slash;
      *slash = '\0';
      if (mkdir(partial, 0755) != 0 && errno != EEXIST)
        return VLM_ERROR(IO, "cannot create %s: %s", partial, strerror(errno));
      *slash = saved;
    }
    if (end) return VLM_OK;
  }
}

static vlm_status write_text(const char *path, const char *text) {
  FILE *file = fopen(path, "w");
  size_t length = strlen(text);
  bool written = file && fwrite(text, 1, length, file) == length;
  if (file && fclose(file) != 0) written = false;
  return written ? VLM_OK : VLM_ERROR(IO, "cannot write %s: %s", path, strerror(errno));
}

static double seconds_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

vlm_status vlm_xla_compile(const vlm_iree_compiler *compiler, const char *module_text, const vlm_xla_key *key,
                           vlm_xla_target target, const char *cache_dir, FILE *progress,
                           char *out_artifact_dir, size_t size) {
  if (!vlm_xla_key_get(key, "target") || strcmp(vlm_xla_key_get(key, "target"), vlm_xla_target_name(target)) != 0)
    return VLM_ERROR(INTERNAL, "vlm_xla_compile: the key's target fields are not set for %s",
                     vlm_xla_target_name(target));
  vlm_xla_artifact_dir(cache_dir, key, out_artifact_dir, size);
  VLM_RETURN_IF_ERROR(make_directories(out_artifact_dir));
  char mlir_path[VLM_XLA_PATH_LENGTH + 32], partial_path[VLM_XLA_PATH_LENGTH + 32],
      vmfb_path[VLM_XLA_PATH_LENGTH + 32], key_path[VLM_XLA_PATH_LENGTH + 32];
  snprintf(mlir_path, sizeof(mlir_path), "%s/module.mlir", out_artifact_dir);
  snprintf(partial_path, sizeof(partial_path), "%s/module.vmfb.partial", out_artifact_dir);
  snprintf(vmfb_path, sizeof(vmfb_path), "%s/module.vmfb", out_artifact_dir);
  snprintf(key_path, sizeof(key_path), "%s/key.json", out_artifact_dir);
  VLM_RETURN_IF_ERROR(write_text(mlir_path, module_text));
  const char *flags[4];
  int flag_count = target_flags(target, flags);
  char *argv[12];
  int argc = 0;
  argv[argc++] = (char *)compiler->path;
  argv[argc++] = mlir_path;
  for (int i = 0; i < flag_count; i++) argv[argc++] = (char *)flags[i];
  argv[argc++] = "-o";
  argv[argc++] = partial_path;
  argv[argc] = NULL;
  if (progress) {
    fprintf(progress, "vlm compile: running");
    for (int i = 0; i < argc; i++) fprintf(progress, " %s", argv[i]);
    fprintf(progress, "\n");
  }
  double started = seconds_now();
  process_output output = {0};
  int exit_code = 0;
  VLM_RETURN_IF_ERROR(run_process(argv, progress, &output, &exit_code));
  if (exit_code != 0) {
    unlink(partial_path);
    return VLM_ERROR(FAILED_PRECONDITION, "iree-compile failed (exit %d) on %s:\n%s", exit_code, mlir_path,
                     output.length ? output.tail : "(no diagnostics)");
  }
  if (rename(partial_path, vmfb_path) != 0)
    return VLM_ERROR(IO, "cannot rename %s: %s", partial_path, strerror(errno));
  /* The sidecar last: a directory with key.json holds a complete artifact. */
  VLM_RETURN_IF_ERROR(vlm_xla_key_write_json(key, "module.vmfb", key_path));
  double seconds = seconds_now() - started;
  if (progress) fprintf(progress, "vlm compile: compiled in %.1f s -> %s\n", seconds, vmfb_path);
  const char *module = vlm_xla_key_get(key, "module"), *rows = vlm_xla_key_get(key, "encoder_rows");
  VLM_LOG_INFOF("xla: compiled the %s module%s%s%s in %.1f s -> %s", module ? module : "?",
                rows && strcmp(rows, "none") ? " (" : "", rows && strcmp(rows, "none") ? rows : "",
                rows && strcmp(rows, "none") ? " encoder rows)" : "", seconds, vmfb_path);
  return VLM_OK;
}

vlm_status vlm_xla_artifact_check(const char *artifact_dir, const vlm_xla_key *expected) {
  char key_path[VLM_XLA_PATH_LENGTH + 32], vmfb_path[VLM_XLA_PATH_LENGTH + 32];
  snprintf(key_path, sizeof(key_path), "%s/key.json", artifact_dir);
  snprintf(vmfb_path, sizeof(vmfb_path), "%s/module.vmfb", artifact_dir);
  if (access(key_path, R_OK) != 0)
    return VLM_ERROR(NOT_FOUND, "%s: no compiled artifact (key.json missing); run `vlm compile --backend xla`",
                     artifact_dir);
  vlm_xla_key stored;
  VLM_RETURN_IF_ERROR(vlm_xla_key_read_json(key_path, &stored));
  VLM_RETURN_IF_ERROR(vlm_xla_key_check(expected, &stored, artifact_dir));
  if (access(vmfb_path, R_OK) != 0)
    return VLM_ERROR(NOT_FOUND, "%s: module.vmfb is missing; run `vlm compile --backend xla`", artifact_dir);
  return VLM_OK;
}
