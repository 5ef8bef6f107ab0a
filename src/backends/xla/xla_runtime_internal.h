/* Internals of the xla runtime shared by the text module's runtime
 * (xla_runtime.c) and the vision module's (xla_vision_runtime.c): the one
 * embedded interpreter per process, C-owned aligned buffers, and binding
 * artifact functions to them through vlm_xla_bridge.py. Part of vlm_xla
 * (needs Python.h); include it after defining PY_SSIZE_T_CLEAN. */
#ifndef VLM_BACKENDS_XLA_XLA_RUNTIME_INTERNAL_H
#define VLM_BACKENDS_XLA_XLA_RUNTIME_INTERNAL_H

#include <Python.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/xla/xla_layout.h"
#include "io/checkpoint.h"
#include "vlm.h"

/* 64-byte aligned host memory imported once into IREE (docs/XLA_ROUTE.md,
 * hazard 1: unaligned imports crashed without an error). */
typedef struct xla_host_buffer {
  void *data;
  size_t bytes;
} xla_host_buffer;

/* One argument or result of an artifact function: its buffer, "f32" or
 * "i32", and shape. */
typedef struct xla_binding {
  const xla_host_buffer *buffer;
  const char *dtype;
  int rank;
  int64_t shape[5];
} xla_binding;

/* The venv of vlm_xla_paths_get: $VLM_XLA_VENV, else the source tree's or the install's. */
const char *xla_default_venv(void);
/* Starts the interpreter and imports the bridge, once per process. */
vlm_status xla_python_start(const char *venv);
/* The pending Python exception as an error (and cleared); GIL held. */
vlm_status xla_python_error(const char *what);
vlm_status xla_buffer_allocate(xla_host_buffer *buffer, size_t bytes);

/* With the GIL held: a bridge Session on `artifact_dir`/module.vmfb whose
 * parameters resolve from the checkpoint's own shards (by stored name) and
 * from `layout`'s buffers (NULL: none; it must outlive the session).
 * `driver` NULL picks local-task with `threads` workers when threads > 1
 * (the first session of the process fixes the count), else local-sync. */
vlm_status xla_session_open(const vlm_checkpoint *weights, const vlm_xla_layout *layout,
                            const char *artifact_dir, const char *driver, int threads, PyObject **out_session);
/* With the GIL held: a callable that invokes `name` on the bound buffers. */
vlm_status xla_session_bind(PyObject *session, const char *name, int input_count, const xla_binding *inputs,
                            int output_count, const xla_binding *outputs, PyObject **out_call);
/* Takes the GIL and calls a bound function. */
vlm_status xla_invoke(PyObject *call, const char *name);

#endif
