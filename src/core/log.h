/* Internal logging entry point; the level and sink are set via vlm.h. */
#ifndef VLM_CORE_LOG_H
#define VLM_CORE_LOG_H

#include "vlm.h"

void vlm_log(vlm_log_level level, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

#define VLM_LOG_DEBUGF(...) vlm_log(VLM_LOG_DEBUG, __VA_ARGS__)
#define VLM_LOG_INFOF(...) vlm_log(VLM_LOG_INFO, __VA_ARGS__)
#define VLM_LOG_WARNF(...) vlm_log(VLM_LOG_WARN, __VA_ARGS__)
#define VLM_LOG_ERRORF(...) vlm_log(VLM_LOG_ERROR, __VA_ARGS__)

#endif
