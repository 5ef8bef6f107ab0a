/*
 * vlm — inference engine for vision- and audio-language models.
 *
 * This is the public C API. The `vlm` command-line tool and the server are
 * clients of exactly this header; nothing they do needs a private symbol.
 *
 * Conventions (borrowed from the IREE runtime C API):
 *   - Every fallible call returns a vlm_status. NULL (VLM_OK) means success;
 *     anything else owns a code and a message and must be released with
 *     vlm_status_free() (or handed back to the caller).
 *   - Objects are created with ..._create or ..._open and released with
 *     ..._release.
 *   - Memory comes from a vlm_allocator passed in; NULL means the system one.
 *   - There are no hidden globals except the log sink, which is process-wide
 *     by nature.
 */
#ifndef VLM_H
#define VLM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VLM_VERSION_MAJOR 0
#define VLM_VERSION_MINOR 1
#define VLM_VERSION_PATCH 0
#define VLM_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------ */
/* Status                                                                    */
/* ------------------------------------------------------------------------ */

typedef enum vlm_status_code {
  VLM_STATUS_OK = 0,
  VLM_STATUS_INVALID_ARGUMENT,   /* caller passed something malformed        */
  VLM_STATUS_NOT_FOUND,          /* file, tensor or key that must exist      */
  VLM_STATUS_OUT_OF_RANGE,       /* value outside what we accept (limits)    */
  VLM_STATUS_DATA_LOSS,          /* corrupt or truncated file contents       */
  VLM_STATUS_RESOURCE_EXHAUSTED, /* out of memory or over a capacity         */
  VLM_STATUS_UNIMPLEMENTED,      /* valid input we do not support (yet)      */
  VLM_STATUS_IO,                 /* the operating system refused             */
  VLM_STATUS_CANCELLED,          /* the caller asked us to stop              */
  VLM_STATUS_FAILED_PRECONDITION,/* object not in a state that allows this   */
  VLM_STATUS_INTERNAL,           /* a bug in vlm                             */
  VLM_STATUS_UNAVAILABLE,        /* shutting down; try again elsewhere/later */
} vlm_status_code;

typedef struct vlm_status_record *vlm_status;
#define VLM_OK ((vlm_status)NULL)

/* Creates a status with a printf-style message. Never returns NULL for a
 * non-OK code, even when out of memory (a static fallback is used). */
vlm_status vlm_status_make(vlm_status_code code, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
vlm_status vlm_status_makev(vlm_status_code code, const char *format,
                            va_list args);
/* Prefixes context ("loading model.safetensors: ") to an error. Passes OK
 * through untouched, so it can wrap any call: return annotate(s, ...). */
vlm_status vlm_status_annotate(vlm_status status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
vlm_status_code vlm_status_code_of(vlm_status status);
/* The message; "OK" for VLM_OK. Valid until the status is freed. */
const char *vlm_status_message(vlm_status status);
const char *vlm_status_code_name(vlm_status_code code);
void vlm_status_free(vlm_status status);

/* ------------------------------------------------------------------------ */
/* Logging                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum vlm_log_level {
  VLM_LOG_DEBUG = 0,
  VLM_LOG_INFO = 1,
  VLM_LOG_WARN = 2,
  VLM_LOG_ERROR = 3,
  VLM_LOG_OFF = 4,
} vlm_log_level;

typedef void (*vlm_log_sink)(void *user, vlm_log_level level,
                             const char *message);

/* Messages below `level` are dropped. Default: VLM_LOG_WARN, or the value of
 * the VLM_LOG environment variable (debug|info|warn|error|off). */
void vlm_log_set_level(vlm_log_level level);
vlm_log_level vlm_log_get_level(void);
/* Replaces the sink (default: one line per message on stderr). NULL restores
 * the default. */
void vlm_log_set_sink(vlm_log_sink sink, void *user);
/* Parses "debug", "info", ...; returns false for an unknown name. */
bool vlm_log_level_parse(const char *name, vlm_log_level *out);

/* How the default sink writes a line on stderr. TEXT:
 *   2026-05-04T09:12:03.481Z vlm: info: MESSAGE
 * with control characters in MESSAGE written as \xNN, so one message is
 * always one line; JSON: one object per line,
 *   {"time":"2026-05-04T09:12:03.481Z","level":"info","message":"..."}
 * Times are UTC with milliseconds. Default: TEXT, or the value of the
 * VLM_LOG_FORMAT environment variable (text|json). A sink set with
 * vlm_log_set_sink gets the bare message either way. */
typedef enum vlm_log_format {
  VLM_LOG_FORMAT_TEXT = 0,
  VLM_LOG_FORMAT_JSON = 1,
} vlm_log_format;
void vlm_log_set_format(vlm_log_format format);
vlm_log_format vlm_log_get_format(void);
/* Parses "text" or "json"; returns false for an unknown name. */
bool vlm_log_format_parse(const char *name, vlm_log_format *out);
/* A line a program prints whatever the level ("listening on ...", its
 * final error): in the text format `message` as it is (no time, no level,
 * nothing escaped: scripts read these lines), in JSON an object like every
 * other line. */
void vlm_log_print(vlm_log_level level, const char *message);

/* ------------------------------------------------------------------------ */
/* Allocator                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct vlm_allocator {
  void *context;
  /* Returns `size` bytes aligned to `alignment` (a power of two), or NULL. */
  void *(*allocate)(void *context, size_t size, size_t alignment);
  void (*release)(void *context, void *pointer);
} vlm_allocator;

/* The system allocator (posix_memalign/free). */
const vlm_allocator *vlm_allocator_system(void);

/* ------------------------------------------------------------------------ */
/* Runtime                                                                   */
/* ------------------------------------------------------------------------ */

/* Number of CPU cores this process may run on (affinity-aware). */
int vlm_cpu_count(void);

/* ------------------------------------------------------------------------ */
/* Model inspection                                                          */
/* ------------------------------------------------------------------------ */

typedef struct vlm_model_report vlm_model_report;

typedef struct vlm_inspect_options {
  const vlm_allocator *allocator; /* NULL: system allocator */
  int thread_count;               /* reported runtime threads; <= 0: one per core */
} vlm_inspect_options;

/* Opens a Hugging Face checkpoint directory, validates every safetensors
 * header and every config file in it, and describes what it holds:
 * architecture, modalities, dtypes, parameters and bytes per component, and
 * the tensors that are missing, unexpected or of the wrong shape. Fails on
 * anything malformed; a well-formed checkpoint with missing or unexpected
 * tensors still produces a report (which lists them). */
vlm_status vlm_model_inspect(const char *model_dir,
                             const vlm_inspect_options *options,
                             vlm_model_report **out_report);
/* The same for a model already opened (vlm/model.h: vlm_model_open, which
 * does the validation), so a caller that also runs it opens it once. */
struct vlm_model;
vlm_status vlm_model_inspect_opened(struct vlm_model *model, const vlm_inspect_options *options,
                                    vlm_model_report **out_report);
/* Human-readable report, or JSON when `as_json`. The string is owned by the
 * report. */
const char *vlm_model_report_text(const vlm_model_report *report, bool as_json);
/* True when every tensor the architecture needs is present with the right
 * shape (unexpected extra tensors are allowed, as Transformers allows them).
 * False as well when no tensor manifest exists yet for the family. */
bool vlm_model_report_can_load(const vlm_model_report *report);
/* One line saying why can_load is false; "" when it is true. */
const char *vlm_model_report_problem(const vlm_model_report *report);
void vlm_model_report_release(vlm_model_report *report);

#ifdef __cplusplus
}
#endif

/* The rest of the public API, one header per area. */
#include "vlm/benchmark.h"
#include "vlm/chat_template.h"
#include "vlm/generate.h"
#include "vlm/model.h"
#include "vlm/tokenizer.h"
#include "vlm/media.h"
#include "vlm/audio.h"

#endif /* VLM_H */
