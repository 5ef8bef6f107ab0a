/* Internal helpers for propagating vlm_status values. */
#ifndef VLM_CORE_STATUS_H
#define VLM_CORE_STATUS_H

#include "vlm.h"

#define VLM_RETURN_IF_ERROR(expression)        \
  do {                                         \
    vlm_status status_ = (expression);         \
    if (status_ != VLM_OK) return status_;     \
  } while (0)

#define VLM_ERROR(code, ...) vlm_status_make(VLM_STATUS_##code, __VA_ARGS__)

#endif
