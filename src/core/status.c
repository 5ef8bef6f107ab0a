/* Status values: a code plus an owned, human-readable message.
 *
 * Errors travel up the stack and gain context on the way
 * ("model.safetensors: tensor 'x': shape ... does not match"), so the message
 * a user finally sees names the file and the problem in one line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vlm.h"

struct vlm_status_record {
  vlm_status_code code;
  char *message;
};

/* Returned when we cannot even allocate the status itself. Freeing it is a
 * no-op (see vlm_status_free). */
static struct vlm_status_record out_of_memory_status = {
    VLM_STATUS_RESOURCE_EXHAUSTED, "out of memory while reporting an error"};

vlm_status vlm_status_makev(vlm_status_code code, const char *format,
                            va_list args) {
  if (code == VLM_STATUS_OK) return VLM_OK;
  vlm_status status = malloc(sizeof(*status));
  if (!status) return &out_of_memory_status;
  va_list copy;
  va_copy(copy, args);
  int length = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (length < 0) length = 0;
  status->code = code;
  status->message = malloc((size_t)length + 1);
  if (!status->message) {
    free(status);
    return &out_of_memory_status;
  }
  vsnprintf(status->message, (size_t)length + 1, format, args);
  return status;
}

vlm_status vlm_status_make(vlm_status_code code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vlm_status status = vlm_status_makev(code, format, args);
  va_end(args);
  return status;
}

vlm_status vlm_status_annotate(vlm_status status, const char *format, ...) {
  if (status == VLM_OK || status == &out_of_memory_status) return status;
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int prefix_length = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (prefix_length < 0) prefix_length = 0;
  size_t old_length = strlen(status->message);
  char *message = malloc((size_t)prefix_length + 2 + old_length + 1);
  if (message) {
    vsnprintf(message, (size_t)prefix_length + 1, format, args);
    memcpy(message + prefix_length, ": ", 2);
    memcpy(message + prefix_length + 2, status->message, old_length + 1);
    free(status->message);
    status->message = message;
  }
  va_end(args);
  return status;
}

vlm_status_code vlm_status_code_of(vlm_status status) {
  return status ? status->code : VLM_STATUS_OK;
}

const char *vlm_status_message(vlm_status status) {
  return status ? status->message : "OK";
}

const char *vlm_status_code_name(vlm_status_code code) {
  switch (code) {
    case VLM_STATUS_OK: return "ok";
    case VLM_STATUS_INVALID_ARGUMENT: return "invalid_argument";
    case VLM_STATUS_NOT_FOUND: return "not_found";
    case VLM_STATUS_OUT_OF_RANGE: return "out_of_range";
    case VLM_STATUS_DATA_LOSS: return "data_loss";
    case VLM_STATUS_RESOURCE_EXHAUSTED: return "resource_exhausted";
    case VLM_STATUS_UNIMPLEMENTED: return "unimplemented";
    case VLM_STATUS_IO: return "io";
    case VLM_STATUS_CANCELLED: return "cancelled";
    case VLM_STATUS_FAILED_PRECONDITION: return "failed_precondition";
    case VLM_STATUS_INTERNAL: return "internal";
    case VLM_STATUS_UNAVAILABLE: return "unavailable";
  }
  return "unknown";
}

void vlm_status_free(vlm_status status) {
  if (!status || status == &out_of_memory_status) return;
  free(status->message);
  free(status);
}
