/* Leveled logging to a replaceable sink. The level and sink are the one piece
 * of process-wide state in the library: a log is a property of the process,
 * not of any one model. Both are atomics so threads may log freely. */
#include "core/log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static _Atomic int current_level = -1; /* -1: not yet read from VLM_LOG */
static _Atomic(vlm_log_sink) current_sink; /* zero-initialised: no sink */
static _Atomic(void *) current_sink_user;

bool vlm_log_level_parse(const char *name, vlm_log_level *out) {
  static const struct {
    const char *name;
    vlm_log_level level;
  } names[] = {{"debug", VLM_LOG_DEBUG}, {"info", VLM_LOG_INFO},
               {"warn", VLM_LOG_WARN},   {"warning", VLM_LOG_WARN},
               {"error", VLM_LOG_ERROR}, {"off", VLM_LOG_OFF}};
  if (!name) return false;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    if (strcasecmp(name, names[i].name) == 0) {
      *out = names[i].level;
      return true;
    }
  }
  return false;
}

vlm_log_level vlm_log_get_level(void) {
  int level = atomic_load(&current_level);
  if (level < 0) {
    vlm_log_level parsed = VLM_LOG_WARN;
    const char *env = getenv("VLM_LOG");
    if (env && !vlm_log_level_parse(env, &parsed)) parsed = VLM_LOG_WARN;
    int expected = -1;
    atomic_compare_exchange_strong(&current_level, &expected, (int)parsed);
    level = atomic_load(&current_level);
  }
  return (vlm_log_level)level;
}

void vlm_log_set_level(vlm_log_level level) {
  atomic_store(&current_level, (int)level);
}

void vlm_log_set_sink(vlm_log_sink sink, void *user) {
  atomic_store(&current_sink_user, user);
  atomic_store(&current_sink, sink);
}

static const char *level_tag(vlm_log_level level) {
  switch (level) {
    case VLM_LOG_DEBUG: return "debug";
    case VLM_LOG_INFO: return "info";
    case VLM_LOG_WARN: return "warning";
    case VLM_LOG_ERROR: return "error";
    default: return "log";
  }
}

void vlm_log(vlm_log_level level, const char *format, ...) {
  if (level < vlm_log_get_level() || level >= VLM_LOG_OFF) return;
  char buffer[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  vlm_log_sink sink = atomic_load(&current_sink);
  if (sink) {
    sink(atomic_load(&current_sink_user), level, buffer);
  } else {
    fprintf(stderr, "vlm: %s: %s\n", level_tag(level), buffer);
  }
}
