/* The C half of the xla runtime: embedded CPython (Debian's libpython3.11,
 * configured isolated on the venv's interpreter so only the venv's
 * site-packages are seen), buffers owned here, and one bound Python
 * callable per artifact function (vlm_xla_bridge.py). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "backends/xla/xla_runtime.h"
#include "backends/xla/xla_runtime_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/thread_pool.h"
#include "core/status.h"
#include "backends/cpu/text_model.h"
#include "backends/xla/xla_layout.h"
#include "models/modules.h"

/* IREE dispatches assume 64-byte aligned imported memory: an unaligned
 * input crashed in the spike with no error (docs/XLA_ROUTE.md, hazard 1). */
#define IMPORT_ALIGNMENT 64

typedef xla_host_buffer host_buffer;

enum { FUNCTION_READ_KV, FUNCTION_CLEAR_SLOT, FUNCTION_COMPATIBILITY, FUNCTION_COUNT };

/* One prefill row bucket: its functions and views of the first `rows` rows
 * of the chunk-sized input buffers (not owned). */
typedef struct prefill_bucket {
  int64_t rows;
  PyObject *token_call, *embeddings_call;
  host_buffer tokens, features, mask, positions, bias, layer_features;
} prefill_bucket;

struct vlm_xla_runtime {
  vlm_stablehlo_options geometry;
  int32_t slots;
  int64_t capacity, chunk, vocab, hidden, layers, kv_heads, head_dim;
  int64_t layer_feature_count;   /* L of the decoder's layer features (0: no such argument) */
  int position_axes;
  PyObject *session;
  vlm_xla_layout *layout;         /* weights laid out for the module (owned; outlives the session) */
  PyObject *calls[FUNCTION_COUNT];
  /* decode, one per attention window (ascending; the last spans the capacity). */
  int window_count;
  int64_t windows[VLM_STABLEHLO_MAX_WINDOWS];
  PyObject *decode_calls[VLM_STABLEHLO_MAX_WINDOWS];
  int bucket_count;
  prefill_bucket buckets[VLM_STABLEHLO_MAX_WINDOWS];
  /* Inputs (prefill scalars are shared by both prefill functions). */
  host_buffer tokens, valid_rows, slot, start, features, mask, positions, bias, layer_features;
  host_buffer decode_tokens, decode_cache_index, decode_positions, decode_active, kv_slot;
  /* Request state (vlm_xla_text_decoder.request_state): the prefill's
   * adapter and prompt length, decode's per-row adapters and windows. */
  bool request_state;
  host_buffer adapter, prompt_length, decode_adapters, decode_windows;
  /* Outputs. */
  host_buffer prefill_logits, decode_logits, kv, compatibility;
};

/* ---------------------------------------------------------------------- */
/* Python                                                                  */
/* ---------------------------------------------------------------------- */

static PyObject *bridge_module;
/* Every memoryview handed to IREE, never released. With the local-task
 * driver IREE may drop its last reference to an imported buffer on one of
 * its worker threads, which do not hold the GIL: the binding then frees
 * the memoryview there and crashes (seen at exit, PyObject_GC_Del on
 * "iree-worker-0"). Held here, that last reference is never the last. A
 * few hundred small objects per opened module. */
static PyObject *kept_views;

/* With the GIL held: `view` (a new reference) kept alive; NULL on failure. */
static PyObject *keep_view(PyObject *view) {
  if (view && (!kept_views || PyList_Append(kept_views, view) != 0)) Py_CLEAR(view);
  return view;
}

static vlm_xla_paths default_paths;
static void read_default_paths(void) { vlm_xla_paths_get(&default_paths); }

const char *xla_default_venv(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, read_default_paths);
  return default_paths.venv;
}

bool vlm_xla_runtime_available(const char *venv) {
  char path[VLM_XLA_PATH_LENGTH];
  snprintf(path, sizeof(path), "%.4000s/bin/python3", venv ? venv : xla_default_venv());
  return access(path, X_OK) == 0;
}

/* The pending Python exception as an error (and cleared). */
vlm_status xla_python_error(const char *what) {
  PyObject *type = NULL, *value = NULL, *traceback = NULL;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject *text = value ? PyObject_Str(value) : NULL;
  const char *message = text ? PyUnicode_AsUTF8(text) : NULL;
  const char *type_name = type ? ((PyTypeObject *)type)->tp_name : "error";
  vlm_status status = VLM_ERROR(FAILED_PRECONDITION, "xla runtime: %s: %s: %s", what, type_name,
                                message ? message : "(no message)");
  Py_XDECREF(text);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  PyErr_Clear();
  return status;
}

/* Starts the interpreter once per process; later calls reuse it. The
 * venv must be made from Debian's /usr/bin/python3.11, the interpreter
 * whose libpython is linked (the wheels are cp311). */
vlm_status xla_python_start(const char *venv) {
  if (bridge_module) return VLM_OK;
  if (Py_IsInitialized())
    return VLM_ERROR(FAILED_PRECONDITION, "xla runtime: this process already runs its own Python interpreter");
  char executable[VLM_XLA_PATH_LENGTH];
  snprintf(executable, sizeof(executable), "%s/bin/python3", venv);
  vlm_xla_paths paths;
  vlm_xla_paths_get(&paths);
  if (access(executable, X_OK) != 0)
    return VLM_ERROR(NOT_FOUND,
                     "xla runtime: no Python venv at %s (create it: /usr/bin/python3.11 -m venv %s && "
                     "%s/bin/pip install -r %s; or point $VLM_XLA_VENV at one)",
                     venv, venv, venv, paths.requirements);
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.write_bytecode = 0; /* no __pycache__ next to the bridge in the source tree */
  PyStatus started = PyConfig_SetBytesString(&config, &config.executable, executable);
  if (!PyStatus_Exception(started)) started = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(started))
    return VLM_ERROR(FAILED_PRECONDITION, "xla runtime: cannot start Python from %s: %s", executable,
                     started.err_msg ? started.err_msg : "unknown error");
  const char *bridge_dir = paths.bridge_dir;
  vlm_log(VLM_LOG_DEBUG, "xla runtime: Python from %s, the bridge from %s", venv, bridge_dir);
  PyObject *path = PySys_GetObject("path"); /* borrowed */
  PyObject *directory = PyUnicode_FromString(bridge_dir);
  vlm_status status = VLM_OK;
  if (!path || !directory || PyList_Insert(path, 0, directory) != 0) status = xla_python_error("sys.path");
  Py_XDECREF(directory);
  if (!status) {
    kept_views = PyList_New(0);
    bridge_module = kept_views ? PyImport_ImportModule("vlm_xla_bridge") : NULL;
    if (!bridge_module) status = xla_python_error("importing vlm_xla_bridge (iree.runtime missing from the venv?)");
  }
  /* Release the GIL: every call below takes it, from whichever thread. */
  PyEval_SaveThread();
  return status;
}

vlm_status vlm_xla_runtime_version(const vlm_xla_runtime_options *options, char *out, size_t size) {
  VLM_RETURN_IF_ERROR(xla_python_start(options && options->venv ? options->venv : xla_default_venv()));
  if (!bridge_module) return VLM_ERROR(FAILED_PRECONDITION, "xla runtime: the bridge failed to load earlier");
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *version = PyObject_CallMethod(bridge_module, "version", NULL);
  vlm_status status = VLM_OK;
  const char *text = version ? PyUnicode_AsUTF8(version) : NULL;
  if (!text) status = xla_python_error("reading the runtime version");
  else snprintf(out, size, "%s", text);
  Py_XDECREF(version);
  PyGILState_Release(gil);
  return status;
}

/* ---------------------------------------------------------------------- */
/* Buffers and bindings                                                    */
/* ---------------------------------------------------------------------- */

vlm_status xla_buffer_allocate(host_buffer *buffer, size_t bytes) {
  size_t rounded = (bytes + IMPORT_ALIGNMENT - 1) / IMPORT_ALIGNMENT * IMPORT_ALIGNMENT;
  buffer->data = aligned_alloc(IMPORT_ALIGNMENT, rounded ? rounded : IMPORT_ALIGNMENT);
  buffer->bytes = bytes;
  if (!buffer->data) return VLM_ERROR(RESOURCE_EXHAUSTED, "xla runtime: out of memory for %zu bytes", bytes);
  memset(buffer->data, 0, rounded ? rounded : IMPORT_ALIGNMENT);
  return VLM_OK;
}

/* (memoryview, dtype, [shape]): writable even for inputs, because
 * iree.runtime imports only writable buffers. */
static PyObject *buffer_spec(const host_buffer *buffer, const char *dtype, int rank, const int64_t *shape) {
  PyObject *dims = PyList_New(rank);
  for (int i = 0; dims && i < rank; i++) PyList_SET_ITEM(dims, i, PyLong_FromLongLong(shape[i]));
  PyObject *view = keep_view(PyMemoryView_FromMemory(buffer->data, (Py_ssize_t)buffer->bytes, PyBUF_WRITE));
  if (!dims || !view) {
    Py_XDECREF(dims);
    Py_XDECREF(view);
    return NULL;
  }
  return Py_BuildValue("(NsN)", view, dtype, dims);
}

typedef xla_binding binding;

vlm_status xla_session_bind(PyObject *session, const char *name, int input_count, const xla_binding *inputs,
                            int output_count, const xla_binding *outputs, PyObject **out_call) {
  *out_call = NULL;
  PyObject *input_list = PyList_New(input_count), *output_list = PyList_New(output_count);
  bool built = input_list && output_list;
  for (int i = 0; built && i < input_count; i++) {
    PyObject *spec = buffer_spec(inputs[i].buffer, inputs[i].dtype, inputs[i].rank, inputs[i].shape);
    if (spec) PyList_SET_ITEM(input_list, i, spec);
    else built = false;
  }
  for (int i = 0; built && i < output_count; i++) {
    PyObject *spec = buffer_spec(outputs[i].buffer, outputs[i].dtype, outputs[i].rank, outputs[i].shape);
    if (spec) PyList_SET_ITEM(output_list, i, spec);
    else built = false;
  }
  if (built) *out_call = PyObject_CallMethod(session, "bind", "sOO", name, input_list, output_list);
  Py_XDECREF(input_list);
  Py_XDECREF(output_list);
  return *out_call ? VLM_OK : xla_python_error(name);
}

static vlm_status bind(vlm_xla_runtime *runtime, int function, const char *name, int input_count,
                       const binding *inputs, int output_count, const binding *outputs) {
  return xla_session_bind(runtime->session, name, input_count, inputs, output_count, outputs,
                          &runtime->calls[function]);
}

static vlm_status allocate_buffers(vlm_xla_runtime *r) {
  size_t i32 = sizeof(int32_t), f32 = sizeof(float);
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->tokens, (size_t)r->chunk * i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->valid_rows, i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->slot, i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->start, i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->features, (size_t)(r->chunk * r->hidden) * f32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->mask, (size_t)r->chunk * i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->positions, (size_t)(r->position_axes * r->chunk) * i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->bias, (size_t)(r->chunk * r->capacity) * f32));
  if (r->layer_feature_count)
    VLM_RETURN_IF_ERROR(
        xla_buffer_allocate(&r->layer_features, (size_t)(r->layer_feature_count * r->chunk * r->hidden) * f32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->decode_tokens, (size_t)r->slots * i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->decode_cache_index, (size_t)r->slots * i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->decode_positions, (size_t)r->slots * i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->decode_active, (size_t)r->slots * i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->kv_slot, i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->adapter, i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->prompt_length, i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->decode_adapters, (size_t)r->slots * i32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->decode_windows, (size_t)r->slots * i32));
  *(int32_t *)r->adapter.data = -1;
  for (int32_t b = 0; b < r->slots; b++) ((int32_t *)r->decode_adapters.data)[b] = -1;
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->prefill_logits, (size_t)r->vocab * f32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->decode_logits, (size_t)(r->slots * r->vocab) * f32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->kv, (size_t)(r->layers * 2 * r->capacity * r->kv_heads * r->head_dim) * f32));
  return xla_buffer_allocate(&r->compatibility, 4 * i32);
}

static vlm_status bind_all(vlm_xla_runtime *r) {
  binding valid = {&r->valid_rows, "i32", 0, {0}}, slot = {&r->slot, "i32", 0, {0}},
          start = {&r->start, "i32", 0, {0}};
  binding prefill_logits = {&r->prefill_logits, "f32", 2, {1, r->vocab}};
  binding adapter = {&r->adapter, "i32", 0, {0}}, prompt_length = {&r->prompt_length, "i32", 0, {0}};
  int extra = r->request_state ? 2 : 0;
  for (int i = 0; i < r->bucket_count; i++) {
    prefill_bucket *b = &r->buckets[i];
    int64_t rows = b->rows;
    /* Views of the first `rows` rows (positions: of each axis, rows apart). */
    b->tokens = (host_buffer){r->tokens.data, (size_t)rows * sizeof(int32_t)};
    b->features = (host_buffer){r->features.data, (size_t)(rows * r->hidden) * sizeof(float)};
    b->mask = (host_buffer){r->mask.data, (size_t)rows * sizeof(int32_t)};
    b->positions = (host_buffer){r->positions.data, (size_t)(r->position_axes * rows) * sizeof(int32_t)};
    b->bias = (host_buffer){r->bias.data, (size_t)(rows * r->capacity) * sizeof(float)};
    /* Layer features: [L, rows, hidden], so each bucket packs its rows per layer. */
    b->layer_features = (host_buffer){r->layer_features.data,
                                      (size_t)(r->layer_feature_count * rows * r->hidden) * sizeof(float)};
    binding tokens = {&b->tokens, "i32", 1, {rows}}, features = {&b->features, "f32", 2, {rows, r->hidden}},
            mask = {&b->mask, "i32", 1, {rows}}, positions = {&b->positions, "i32", 2, {r->position_axes, rows}},
            bias = {&b->bias, "f32", 2, {rows, r->capacity}};
    char name[48];
    vlm_stablehlo_prefill_function(&r->geometry, "token_prefill", rows, name, sizeof(name));
    VLM_RETURN_IF_ERROR(xla_session_bind(r->session, name, 4 + extra,
                                         (binding[]){tokens, valid, slot, start, adapter, prompt_length}, 1,
                                         &prefill_logits, &b->token_call));
    vlm_stablehlo_prefill_function(&r->geometry, "embeddings_prefill", rows, name, sizeof(name));
    binding layer_features = {&b->layer_features, "f32", 3, {r->layer_feature_count, rows, r->hidden}};
    binding inputs[11] = {tokens, features, mask, positions, bias};
    int count = 5;
    if (r->layer_feature_count) inputs[count++] = layer_features;
    inputs[count++] = valid;
    inputs[count++] = slot;
    inputs[count++] = start;
    if (extra) {
      inputs[count++] = adapter;
      inputs[count++] = prompt_length;
    }
    VLM_RETURN_IF_ERROR(xla_session_bind(r->session, name, count, inputs, 1, &prefill_logits, &b->embeddings_call));
  }
  binding decode_inputs[6] = {{&r->decode_tokens, "i32", 1, {r->slots}},
                              {&r->decode_cache_index, "i32", 1, {r->slots}},
                              {&r->decode_positions, "i32", 1, {r->slots}},
                              {&r->decode_active, "i32", 1, {r->slots}},
                              {&r->decode_adapters, "i32", 1, {r->slots}},
                              {&r->decode_windows, "i32", 1, {r->slots}}};
  binding decode_logits = {&r->decode_logits, "f32", 2, {r->slots, r->vocab}};
  for (int i = 0; i < r->window_count; i++) {
    char name[48];
    vlm_stablehlo_decode_function(&r->geometry, r->windows[i], name, sizeof(name));
    VLM_RETURN_IF_ERROR(xla_session_bind(r->session, name, 4 + extra, decode_inputs, 1, &decode_logits,
                                         &r->decode_calls[i]));
  }
  binding kv_slot = {&r->kv_slot, "i32", 0, {0}};
  binding kv = {&r->kv, "f32", 5, {r->layers, 2, r->capacity, r->kv_heads, r->head_dim}};
  VLM_RETURN_IF_ERROR(bind(r, FUNCTION_READ_KV, "read_kv", 1, &kv_slot, 1, &kv));
  VLM_RETURN_IF_ERROR(bind(r, FUNCTION_CLEAR_SLOT, "clear_slot", 1, &kv_slot, 0, NULL));
  binding compatibility = {&r->compatibility, "i32", 1, {4}};
  return bind(r, FUNCTION_COMPATIBILITY, "compatibility", 0, NULL, 1, &compatibility);
}

vlm_status xla_invoke(PyObject *call, const char *name) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *result = PyObject_CallNoArgs(call);
  vlm_status status = result ? VLM_OK : xla_python_error(name);
  Py_XDECREF(result);
  PyGILState_Release(gil);
  return status;
}

static vlm_status invoke(vlm_xla_runtime *runtime, int function, const char *name) {
  return xla_invoke(runtime->calls[function], name);
}

/* ---------------------------------------------------------------------- */
/* Opening                                                                 */
/* ---------------------------------------------------------------------- */

/* Parameters come from the checkpoint's own shards, looked up by the name
 * stored in the file (the emitter writes stored names into the module's
 * parameter references, so older layouts load too). */
static vlm_status shard_list(const vlm_checkpoint *weights, PyObject **out_list) {
  PyObject *list = PyList_New(0);
  /* (path, scope): the model's shards under "model", each extra file
   * (an adapter) under a scope of its own (xla_parameter_scope). */
  size_t main = weights ? vlm_checkpoint_main_shard_count(weights) : 0;
  for (size_t shard = 0; list && weights && shard < vlm_checkpoint_shard_count(weights); shard++) {
    char scope[32];
    if (shard < main) snprintf(scope, sizeof(scope), "model");
    else snprintf(scope, sizeof(scope), "shard%zu", shard);
    PyObject *entry = Py_BuildValue("(ss)", vlm_checkpoint_shard_path(weights, shard), scope);
    if (!entry || PyList_Append(list, entry) != 0) Py_CLEAR(list);
    Py_XDECREF(entry);
  }
  *out_list = list;
  return list ? VLM_OK : xla_python_error("shard list");
}

/* (scope, name, memoryview) per laid-out tensor (xla_layout.h). */
static vlm_status layout_list(const vlm_xla_layout *layout, PyObject **out_list) {
  PyObject *list = PyList_New(0);
  for (int i = 0; list && layout && i < layout->count; i++) {
    const vlm_xla_layout_tensor *tensor = &layout->tensors[i];
    PyObject *view = keep_view(PyMemoryView_FromMemory(tensor->data, (Py_ssize_t)tensor->bytes, PyBUF_READ));
    PyObject *entry = view ? Py_BuildValue("(ssN)", XLA_LAYOUT_SCOPE, tensor->key, view) : NULL;
    if (!entry || PyList_Append(list, entry) != 0) Py_CLEAR(list);
    Py_XDECREF(entry);
  }
  *out_list = list;
  return list ? VLM_OK : xla_python_error("layout list");
}

int xla_thread_count(int requested) { return requested < 0 ? vlm_cpu_count() : requested; }

double xla_seconds_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

uint64_t vlm_xla_runtime_layout_bytes(const vlm_xla_runtime *runtime) {
  return runtime && runtime->layout ? runtime->layout->bytes : 0;
}

/* local-task runs a dispatch's workgroups on a pool of worker threads;
 * local-sync on the caller's thread. */
static vlm_status choose_driver(const char *driver, int threads, const char **out_driver) {
  *out_driver = driver;
  if (driver) return VLM_OK;
  *out_driver = "local-sync";
  if (threads <= 1) return VLM_OK;
  PyObject *count = PyObject_CallMethod(bridge_module, "configure_workers", "i", threads);
  if (!count) return xla_python_error("configuring the local-task workers");
  long configured = PyLong_AsLong(count);
  Py_DECREF(count);
  if (configured != threads)
    VLM_LOG_INFOF("xla runtime: local-task keeps the %ld worker(s) this process started it with (asked: %d)",
                  configured, threads);
  *out_driver = "local-task";
  return VLM_OK;
}

vlm_status xla_session_open(const vlm_checkpoint *weights, const vlm_xla_layout *layout, const char *artifact_dir,
                            const char *driver, int threads, PyObject **out_session) {
  char vmfb[VLM_XLA_PATH_LENGTH + 32];
  snprintf(vmfb, sizeof(vmfb), "%s/module.vmfb", artifact_dir);
  PyObject *shards = NULL, *buffers = NULL;
  const char *chosen = NULL;
  vlm_status status = shard_list(weights, &shards);
  if (!status) status = layout_list(layout, &buffers);
  if (!status) status = choose_driver(driver, threads, &chosen);
  if (!status) {
    *out_session = PyObject_CallMethod(bridge_module, "Session", "ssOO", vmfb, chosen, shards, buffers);
    if (!*out_session) status = xla_python_error("loading the artifact");
  }
  Py_XDECREF(shards);
  Py_XDECREF(buffers);
  return status;
}

static vlm_status load_session(vlm_xla_runtime *runtime, const vlm_xla_text_decoder *model,
                               const char *artifact_dir, const vlm_xla_runtime_options *options) {
  PyGILState_STATE gil = PyGILState_Ensure();
  vlm_status status = xla_session_open(model->weights, runtime->layout, artifact_dir, options->driver,
                                       options->thread_count, &runtime->session);
  if (!status) status = bind_all(runtime);
  PyGILState_Release(gil);
  return status;
}

/* The artifact's own record of what it was built from. */
static vlm_status check_compatibility(vlm_xla_runtime *runtime, const vlm_xla_key *emit_key, const char *artifact_dir) {
  VLM_RETURN_IF_ERROR(invoke(runtime, FUNCTION_COMPATIBILITY, "compatibility"));
  const int32_t *got = runtime->compatibility.data;
  uint64_t hash = vlm_xla_key_hash(emit_key);
  int32_t want[4] = {VLM_TEXT_CONTRACT_VERSION, VLM_XLA_EMITTER_VERSION, (int32_t)(uint32_t)hash,
                     (int32_t)(uint32_t)(hash >> 32)};
  if (memcmp(got, want, sizeof(want)) != 0)
    return VLM_ERROR(FAILED_PRECONDITION,
                     "%s: incompatible artifact: module.vmfb was built for contract %d, emitter %d, key "
                     "%08x%08x; expected contract %d, emitter %d, key %016llx (sidecar and artifact disagree)",
                     artifact_dir, got[0], got[1], (uint32_t)got[3], (uint32_t)got[2], want[0], want[1],
                     (unsigned long long)hash);
  return VLM_OK;
}

vlm_status vlm_xla_runtime_open(const vlm_xla_text_decoder *model, const vlm_stablehlo_options *options,
                                const char *cache_dir, const char *artifact_dir,
                                const vlm_xla_runtime_options *runtime_options, vlm_xla_runtime **out_runtime) {
  *out_runtime = NULL;
  vlm_xla_runtime_options defaults = {0};
  if (!runtime_options) runtime_options = &defaults;
  /* The key this model and these options need, with this runtime's release
   * standing in for the compiler's (they must be the same release). */
  char *module = NULL;
  vlm_xla_key emit_key, key;
  VLM_RETURN_IF_ERROR(vlm_stablehlo_emit_text_decoder(model, options, &module, &emit_key));
  char version[256];
  vlm_status checked = vlm_xla_runtime_version(runtime_options, version, sizeof(version));
  key = emit_key;
  if (!checked) checked = vlm_xla_key_add_target(&key, version, runtime_options->target);
  char directory[VLM_XLA_PATH_LENGTH];
  if (artifact_dir) snprintf(directory, sizeof(directory), "%s", artifact_dir);
  else vlm_xla_artifact_dir(cache_dir, &key, directory, sizeof(directory));
  if (!checked) checked = vlm_xla_artifact_check(directory, &key);
  vlm_xla_runtime *runtime = checked ? NULL : calloc(1, sizeof(*runtime));
  if (!checked && !runtime) checked = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  /* The weights the module reads transposed, laid out before IREE loads
   * anything (the artifact is known good by now). */
  vlm_xla_layout *layout = NULL;
  if (!checked) checked = vlm_xla_layout_create(model->weights, module, &layout);
  free(module);
  if (checked) {
    free(runtime);
    return checked;
  }
  const vlm_text_config *text = &model->config->text;
  *runtime = (vlm_xla_runtime){.geometry = *options, .slots = options->slot_count, .capacity = options->capacity,
                               .chunk = options->prefill_chunk, .vocab = text->vocab_size,
                               .hidden = text->hidden_size, .layers = text->num_hidden_layers,
                               .kv_heads = text->num_key_value_heads, .head_dim = text->head_dim,
                               .position_axes = text->rope.mrope_section_count > 0 ? 3 : 1,
                               .layer_feature_count = (int64_t)model->decoder.layer_features.count,
                               .request_state = model->request_state, .layout = layout};
  runtime->window_count = vlm_stablehlo_decode_windows(options, runtime->windows);
  int64_t buckets[VLM_STABLEHLO_MAX_WINDOWS];
  runtime->bucket_count = vlm_stablehlo_prefill_buckets(options, buckets);
  for (int i = 0; i < runtime->bucket_count; i++) runtime->buckets[i].rows = buckets[i];
  vlm_status status = allocate_buffers(runtime);
  if (!status) status = load_session(runtime, model, directory, runtime_options);
  if (!status) status = check_compatibility(runtime, &emit_key, directory);
  if (status) {
    vlm_xla_runtime_release(runtime);
    return status;
  }
  *out_runtime = runtime;
  return VLM_OK;
}

void vlm_xla_runtime_release(vlm_xla_runtime *runtime) {
  if (!runtime) return;
  if (bridge_module) {
    PyGILState_STATE gil = PyGILState_Ensure();
    for (int i = 0; i < FUNCTION_COUNT; i++) Py_XDECREF(runtime->calls[i]);
    for (int i = 0; i < runtime->window_count; i++) Py_XDECREF(runtime->decode_calls[i]);
    for (int i = 0; i < runtime->bucket_count; i++) {
      Py_XDECREF(runtime->buckets[i].token_call);
      Py_XDECREF(runtime->buckets[i].embeddings_call);
    }
    Py_XDECREF(runtime->session);
    PyGILState_Release(gil);
  }
  vlm_xla_layout_release(runtime->layout); /* after the session that imported it */
  host_buffer *buffers[] = {&runtime->tokens, &runtime->valid_rows, &runtime->slot, &runtime->start,
                            &runtime->features, &runtime->mask, &runtime->positions, &runtime->bias,
                            &runtime->layer_features,
                            &runtime->decode_tokens, &runtime->decode_cache_index, &runtime->decode_positions,
                            &runtime->decode_active, &runtime->kv_slot, &runtime->adapter,
                            &runtime->prompt_length, &runtime->decode_adapters, &runtime->decode_windows,
                            &runtime->prefill_logits, &runtime->decode_logits, &runtime->kv,
                            &runtime->compatibility};
  for (size_t i = 0; i < sizeof(buffers) / sizeof(buffers[0]); i++) free(buffers[i]->data);
  free(runtime);
}

/* ---------------------------------------------------------------------- */
/* Calls                                                                   */
/* ---------------------------------------------------------------------- */

static vlm_status check_rows(const vlm_xla_runtime *runtime, int32_t slot, int64_t start, int64_t count) {
  if (slot < 0 || slot >= runtime->slots)
    return VLM_ERROR(INVALID_ARGUMENT, "slot %d is outside 0..%d", slot, runtime->slots - 1);
  if (count <= 0 || start < 0 || start + count > runtime->capacity)
    return VLM_ERROR(OUT_OF_RANGE, "rows [%lld, %lld) do not fit the capacity of %lld", (long long)start,
                     (long long)(start + count), (long long)runtime->capacity);
  return VLM_OK;
}

static vlm_status check_tokens(const vlm_xla_runtime *runtime, const int32_t *tokens, int64_t count) {
  if (!tokens) return VLM_ERROR(INVALID_ARGUMENT, "tokens are missing");
  for (int64_t i = 0; i < count; i++)
    if (tokens[i] < 0 || tokens[i] >= runtime->vocab)
      return VLM_ERROR(INVALID_ARGUMENT, "token %lld (id %d) is outside the vocabulary of %lld", (long long)i,
                       tokens[i], (long long)runtime->vocab);
  return VLM_OK;
}

static void set_scalars(vlm_xla_runtime *runtime, int64_t valid, int32_t slot, int64_t start) {
  *(int32_t *)runtime->valid_rows.data = (int32_t)valid;
  *(int32_t *)runtime->slot.data = slot;
  *(int32_t *)runtime->start.data = (int32_t)start;
}

/* The smallest row bucket that holds `rows` (<= the chunk, the last bucket). */
static const prefill_bucket *bucket_for(const vlm_xla_runtime *runtime, int64_t rows) {
  int i = 0;
  while (runtime->buckets[i].rows < rows) i++;
  return &runtime->buckets[i];
}

vlm_status vlm_xla_token_prefill(vlm_xla_runtime *runtime, int32_t slot, int64_t start, const int32_t *tokens,
                                 int64_t count, float *last_logits) {
  VLM_RETURN_IF_ERROR(check_rows(runtime, slot, start, count));
  VLM_RETURN_IF_ERROR(check_tokens(runtime, tokens, count));
  for (int64_t first = 0; first < count; first += runtime->chunk) {
    int64_t rows = count - first < runtime->chunk ? count - first : runtime->chunk;
    const prefill_bucket *bucket = bucket_for(runtime, rows);
    memset(bucket->tokens.data, 0, bucket->tokens.bytes);
    memcpy(bucket->tokens.data, tokens + first, (size_t)rows * sizeof(int32_t));
    set_scalars(runtime, rows, slot, start + first);
    VLM_RETURN_IF_ERROR(xla_invoke(bucket->token_call, "token_prefill"));
  }
  memcpy(last_logits, runtime->prefill_logits.data, runtime->prefill_logits.bytes);
  return VLM_OK;
}

/* One call's bias rows [bucket rows, capacity]: the caller's (over its
 * bias_keys cache indices; later ones hidden), or causal over cache
 * indices; padded rows see nothing. */
static void fill_bias(vlm_xla_runtime *runtime, const prefill_bucket *bucket, const float *bias, int64_t bias_keys,
                      int64_t first, int64_t rows, int64_t start) {
  float *out = bucket->bias.data;
  for (int64_t r = 0; r < bucket->rows; r++)
    for (int64_t key = 0; key < runtime->capacity; key++) {
      float value = -INFINITY;
      if (r < rows && bias) value = key < bias_keys ? bias[(first + r) * bias_keys + key] : -INFINITY;
      else if (r < rows) value = key <= start + first + r ? 0.0f : -INFINITY;
      out[r * runtime->capacity + key] = value;
    }
}

static vlm_status prefill_step(vlm_xla_runtime *runtime, int32_t slot, int64_t start,
                               const vlm_xla_prefill_rows *input, int64_t count, int64_t first, int64_t rows);

vlm_status vlm_xla_embeddings_prefill(vlm_xla_runtime *runtime, int32_t slot, int64_t start,
                                      const vlm_xla_prefill_rows *input, int64_t count, float *last_logits) {
  VLM_RETURN_IF_ERROR(check_rows(runtime, slot, start, count));
  if (!input->tokens || !input->positions)
    return VLM_ERROR(INVALID_ARGUMENT, "embeddings_prefill: tokens and positions are required");
  int axes = runtime->position_axes;
  for (int64_t i = 0; i < count * axes; i++)
    if (input->positions[i] < 0)
      return VLM_ERROR(INVALID_ARGUMENT, "embeddings_prefill: position %lld is negative", (long long)(i % count));
  /* Steps of at most the compiled chunk that never end inside rows the
   * bias lets see each other (their keys would not be in the cache yet);
   * rows of one such block beyond the chunk cannot run. */
  int64_t *reach = NULL;
  if (input->bias) {
    reach = malloc((size_t)count * sizeof(int64_t));
    if (!reach) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    vlm_prefill_bias_reach(input->bias, count, input->bias_key_count, start, reach);
  }
  vlm_status status = VLM_OK;
  for (int64_t first = 0, end; !status && first < count; first = end) {
    end = reach ? vlm_prefill_chunk_end(reach, count, first, runtime->chunk)
                : (count - first < runtime->chunk ? count : first + runtime->chunk);
    status = prefill_step(runtime, slot, start, input, count, first, end - first);
  }
  free(reach);
  if (status) return status;
  memcpy(last_logits, runtime->prefill_logits.data, runtime->prefill_logits.bytes);
  return VLM_OK;
}

/* Rows [first, first + rows) of an embeddings_prefill in one call of the
 * smallest bucket that holds them. */
static vlm_status prefill_step(vlm_xla_runtime *runtime, int32_t slot, int64_t start,
                               const vlm_xla_prefill_rows *input, int64_t count, int64_t first, int64_t rows) {
  if (rows > runtime->chunk)
    return VLM_ERROR(INVALID_ARGUMENT,
                     "embeddings_prefill: rows %lld..%lld attend to each other (an attention block) and must run in "
                     "one step, over the compiled prefill chunk of %lld rows",
                     (long long)first, (long long)(first + rows - 1), (long long)runtime->chunk);
  int axes = runtime->position_axes;
  const prefill_bucket *bucket = bucket_for(runtime, rows);
  int32_t *tokens = bucket->tokens.data, *mask = bucket->mask.data, *positions = bucket->positions.data;
  memset(bucket->tokens.data, 0, bucket->tokens.bytes);
  memset(bucket->features.data, 0, bucket->features.bytes);
  memset(bucket->mask.data, 0, bucket->mask.bytes);
  memset(bucket->positions.data, 0, bucket->positions.bytes);
  if (runtime->layer_feature_count) memset(bucket->layer_features.data, 0, bucket->layer_features.bytes);
  for (int64_t r = 0; r < rows; r++) {
    bool feature = input->feature_mask && input->feature_mask[first + r];
    /* A feature row's id is not read, but the gather looks it up. */
    tokens[r] = feature ? 0 : input->tokens[first + r];
    mask[r] = feature;
    if (feature)
      memcpy((float *)bucket->features.data + r * runtime->hidden, input->features + (first + r) * runtime->hidden,
             (size_t)runtime->hidden * sizeof(float));
    for (int64_t j = 0; feature && input->layer_features && j < runtime->layer_feature_count; j++)
      memcpy((float *)bucket->layer_features.data + (j * bucket->rows + r) * runtime->hidden,
             input->layer_features + (j * count + first + r) * runtime->hidden, (size_t)runtime->hidden * sizeof(float));
    for (int a = 0; a < axes; a++)
      positions[a * bucket->rows + r] = input->positions[a * count + first + r];
  }
  VLM_RETURN_IF_ERROR(check_tokens(runtime, tokens, rows));
  fill_bias(runtime, bucket, input->bias, input->bias_key_count, first, rows, start);
  set_scalars(runtime, rows, slot, start + first);
  VLM_RETURN_IF_ERROR(xla_invoke(bucket->embeddings_call, "embeddings_prefill"));
  return VLM_OK;
}

vlm_status vlm_xla_decode(vlm_xla_runtime *runtime, const int32_t *tokens, const int32_t *cache_indices,
                          const int32_t *positions, const int32_t *active, float *logits) {
  if (!tokens || !cache_indices || !positions || !active)
    return VLM_ERROR(INVALID_ARGUMENT, "decode: tokens, cache indices, positions and active are required");
  for (int32_t b = 0; b < runtime->slots; b++) {
    if (!active[b]) continue;
    VLM_RETURN_IF_ERROR(check_tokens(runtime, tokens + b, 1));
    if (cache_indices[b] < 0 || cache_indices[b] >= runtime->capacity)
      return VLM_ERROR(OUT_OF_RANGE, "decode: slot %d's cache index %d is outside its capacity of %lld", b,
                       cache_indices[b], (long long)runtime->capacity);
    if (positions[b] < 0) return VLM_ERROR(INVALID_ARGUMENT, "decode: slot %d's position %d is negative", b, positions[b]);
  }
  int32_t furthest = 0;
  for (int32_t b = 0; b < runtime->slots; b++) {
    ((int32_t *)runtime->decode_tokens.data)[b] = active[b] ? tokens[b] : 0;
    ((int32_t *)runtime->decode_cache_index.data)[b] = active[b] ? cache_indices[b] : 0;
    ((int32_t *)runtime->decode_positions.data)[b] = active[b] ? positions[b] : 0;
    ((int32_t *)runtime->decode_active.data)[b] = active[b] ? 1 : 0;
    if (active[b] && cache_indices[b] > furthest) furthest = cache_indices[b];
  }
  /* A row at cache index i attends to cached rows [0, i): a window of i holds them. */
  int window = 0;
  while (runtime->windows[window] < furthest) window++;
  VLM_RETURN_IF_ERROR(xla_invoke(runtime->decode_calls[window], "decode"));
  memcpy(logits, runtime->decode_logits.data, runtime->decode_logits.bytes);
  return VLM_OK;
}

vlm_status vlm_xla_set_prefill_state(vlm_xla_runtime *runtime, int32_t adapter, int64_t prompt_length) {
  if (!runtime->request_state) {
    if (adapter >= 0) return VLM_ERROR(INTERNAL, "the module takes no adapter");
    return VLM_OK;
  }
  if (prompt_length < 0 || prompt_length > INT32_MAX)
    return VLM_ERROR(INVALID_ARGUMENT, "prompt length %lld", (long long)prompt_length);
  *(int32_t *)runtime->adapter.data = adapter;
  *(int32_t *)runtime->prompt_length.data = (int32_t)prompt_length;
  return VLM_OK;
}

vlm_status vlm_xla_set_decode_state(vlm_xla_runtime *runtime, const int32_t *adapters, const int32_t *windows) {
  for (int32_t b = 0; b < runtime->slots; b++) {
    if (!runtime->request_state && (adapters[b] >= 0 || windows[b] != 0))
      return VLM_ERROR(INTERNAL, "the module takes no adapter or row window");
    if (windows[b] != 0 && windows[b] != 1)
      return VLM_ERROR(UNIMPLEMENTED, "decode: row window %d (the module takes 0 or 1)", windows[b]);
    ((int32_t *)runtime->decode_adapters.data)[b] = adapters[b];
    ((int32_t *)runtime->decode_windows.data)[b] = windows[b];
  }
  return VLM_OK;
}

vlm_status vlm_xla_read_kv(vlm_xla_runtime *runtime, int32_t slot, float *out) {
  VLM_RETURN_IF_ERROR(check_rows(runtime, slot, 0, 1));
  *(int32_t *)runtime->kv_slot.data = slot;
  VLM_RETURN_IF_ERROR(invoke(runtime, FUNCTION_READ_KV, "read_kv"));
  memcpy(out, runtime->kv.data, runtime->kv.bytes);
  return VLM_OK;
}

vlm_status vlm_xla_clear_slot(vlm_xla_runtime *runtime, int32_t slot) {
  VLM_RETURN_IF_ERROR(check_rows(runtime, slot, 0, 1));
  *(int32_t *)runtime->kv_slot.data = slot;
  return invoke(runtime, FUNCTION_CLEAR_SLOT, "clear_slot");
}
