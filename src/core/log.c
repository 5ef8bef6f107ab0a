/* Leveled logging to a replaceable sink. The level, format and sink are the
 * one piece of process-wide state in the library: a log is a property of the
 * process, not of any one model. All are atomics so threads may log freely.
 *
 * The default sink writes each message as one line on stderr, with its UTC
 * time, in text or JSON (vlm.h). A message may quote what a client sent (a
 * model name, a field): control characters and bytes that are not UTF-8 are
 * escaped, so no message can forge a second line or drive a terminal. The
 * line goes out in one write, so lines of concurrent threads do not mix. */
#include "core/log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static _Atomic int current_level = -1; /* -1: not yet read from VLM_LOG */
static _Atomic int current_format = -1; /* -1: not yet read from VLM_LOG_FORMAT */
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

bool vlm_log_format_parse(const char *name, vlm_log_format *out) {
  if (!name) return false;
  if (strcasecmp(name, "text") == 0) *out = VLM_LOG_FORMAT_TEXT;
  else if (strcasecmp(name, "json") == 0) *out = VLM_LOG_FORMAT_JSON;
  else return false;
  return true;
}

vlm_log_format vlm_log_get_format(void) {
  int format = atomic_load(&current_format);
  if (format < 0) {
    vlm_log_format parsed = VLM_LOG_FORMAT_TEXT;
    const char *env = getenv("VLM_LOG_FORMAT");
    if (env && !vlm_log_format_parse(env, &parsed)) parsed = VLM_LOG_FORMAT_TEXT;
    int expected = -1;
    atomic_compare_exchange_strong(&current_format, &expected, (int)parsed);
    format = atomic_load(&current_format);
  }
  return (vlm_log_format)format;
}

void vlm_log_set_format(vlm_log_format format) {
  atomic_store(&current_format, (int)format);
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

/* Length of the well-formed UTF-8 sequence at `bytes`, or 0 (no
 * overlongs, no surrogates, nothing past U+10FFFF). */
static size_t utf8_length(const unsigned char *bytes, size_t remaining) {
  unsigned char c = bytes[0];
  if (c < 0x80) return 1;
  size_t length;
  unsigned char low = 0x80, high = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) length = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    length = 3;
    if (c == 0xe0) low = 0xa0;
    if (c == 0xed) high = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4;
    if (c == 0xf0) low = 0x90;
    if (c == 0xf4) high = 0x8f;
  } else return 0;
  if (remaining < length || bytes[1] < low || bytes[1] > high) return 0;
  for (size_t i = 2; i < length; i++)
    if (bytes[i] < 0x80 || bytes[i] > 0xbf) return 0;
  return length;
}

/* A line under construction; what does not fit is cut (the message itself
 * is at most 1023 bytes, and escaping at most sextuples it). */
typedef struct line {
  char text[8192];
  size_t length;
} line;

static void put(line *out, const char *text, size_t length) {
  if (length > sizeof(out->text) - 1 - out->length) length = sizeof(out->text) - 1 - out->length;
  memcpy(out->text + out->length, text, length);
  out->length += length;
}

static void put_string(line *out, const char *text) { put(out, text, strlen(text)); }

/* The message escaped for one text line (\xNN) or a JSON string (\uNNNN,
 * invalid UTF-8 as U+FFFD). */
static void put_escaped(line *out, const char *message, bool json) {
  const unsigned char *bytes = (const unsigned char *)message;
  size_t length = strlen(message);
  for (size_t i = 0; i < length;) {
    unsigned char c = bytes[i];
    size_t sequence = utf8_length(bytes + i, length - i);
    bool plain = sequence > 1 || (sequence == 1 && c >= 0x20 && c != 0x7f && !(json && (c == '"' || c == '\\')));
    if (plain) {
      put(out, message + i, sequence);
      i += sequence;
      continue;
    }
    char escape[8];
    if (json && sequence == 0) snprintf(escape, sizeof(escape), "\\ufffd");
    else if (json && (c == '"' || c == '\\')) snprintf(escape, sizeof(escape), "\\%c", c);
    else if (json && c == '\n') snprintf(escape, sizeof(escape), "\\n");
    else if (json) snprintf(escape, sizeof(escape), "\\u%04x", c);
    else snprintf(escape, sizeof(escape), "\\x%02x", c);
    put_string(out, escape);
    i++;
  }
}

/* 2026-05-04T09:12:03.481Z */
static void put_time(line *out) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  struct tm utc;
  gmtime_r(&now.tv_sec, &utc);
  char stamp[64];
  size_t length = strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &utc);
  snprintf(stamp + length, sizeof(stamp) - length, ".%03ldZ", now.tv_nsec / 1000000L);
  put_string(out, stamp);
}

static void write_line(vlm_log_level level, const char *message) {
  line out = {.length = 0};
  if (vlm_log_get_format() == VLM_LOG_FORMAT_JSON) {
    put_string(&out, "{\"time\":\"");
    put_time(&out);
    put_string(&out, "\",\"level\":\"");
    put_string(&out, level_tag(level));
    put_string(&out, "\",\"message\":\"");
    put_escaped(&out, message, true);
    put_string(&out, "\"}");
  } else {
    put_time(&out);
    put_string(&out, " vlm: ");
    put_string(&out, level_tag(level));
    put_string(&out, ": ");
    put_escaped(&out, message, false);
  }
  out.text[out.length++] = '\n'; /* put() always leaves room for it */
  fwrite(out.text, 1, out.length, stderr);
}

void vlm_log_print(vlm_log_level level, const char *message) {
  if (vlm_log_get_format() == VLM_LOG_FORMAT_JSON) {
    write_line(level, message);
    return;
  }
  /* As the program always printed it (an error may quote a tool's
   * output over several lines). */
  fprintf(stderr, "%s\n", message);
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
    write_line(level, buffer);
  }
}
