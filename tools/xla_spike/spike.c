/*
 * xla route spike: a C program that embeds CPython (Debian's libpython3.11)
 * and runs an iree-compile'd StableHLO module through iree.runtime (the
 * pinned iree-base-runtime wheel in a venv), with
 *   - weights resolved by name from a safetensors file at load time,
 *   - a cache kept on the device across calls as a mutable module global,
 *   - inputs handed over zero-copy (C memory imported as HAL buffers),
 * checked call by call against a C reference, and timed.
 *
 * usage: spike VENV_DIR BRIDGE_DIR MODULE.vmfb WEIGHTS.safetensors ROWS
 *              DRIVER STEPS
 * Prints one JSON object per measurement on stdout; exit 0 when every result
 * matched the reference.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DIM 64
#define BATCHES 5

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  fclose(f);
  return kib;
}

static void die_py(const char *what) {
  fprintf(stderr, "spike: %s failed\n", what);
  if (PyErr_Occurred()) PyErr_Print();
  exit(2);
}

static uint32_t lcg(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}
static float rnd(uint32_t *s) { /* [-1, 1) */
  return (float)lcg(s) / (float)(1u << 23) - 1.0f;
}
static uint16_t f32_to_bf16(float f) { /* round to nearest even */
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static float bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* A one-tensor safetensors file: "layers.0.w", BF16 [64, 64]. */
static void write_weights(const char *path, float *w_ref) {
  uint16_t w[DIM * DIM];
  uint32_t seed = 42;
  for (int i = 0; i < DIM * DIM; i++) {
    w[i] = f32_to_bf16(0.1f * rnd(&seed));
    w_ref[i] = bf16_to_f32(w[i]);
  }
  char header[128];
  int n = snprintf(header, sizeof header,
                   "{\"layers.0.w\":{\"dtype\":\"BF16\",\"shape\":[%d,%d],"
                   "\"data_offsets\":[0,%zu]}}",
                   DIM, DIM, sizeof w);
  while (n % 8) header[n++] = ' ';
  uint64_t len = (uint64_t)n;
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(&len, 8, 1, f) != 1 || fwrite(header, 1, (size_t)n, f) != (size_t)n ||
      fwrite(w, sizeof w, 1, f) != 1 || fclose(f) != 0) {
    fprintf(stderr, "spike: cannot write %s\n", path);
    exit(2);
  }
}

/* Python embedding with the venv's site-packages; nothing from the user's
 * environment (PYTHONPATH, user site) leaks in. */
static void start_python(const char *venv, const char *bridge_dir) {
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  char exe[4096];
  snprintf(exe, sizeof exe, "%s/bin/python3", venv);
  PyStatus st = PyConfig_SetBytesString(&config, &config.executable, exe);
  if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) Py_ExitStatusException(st);
  PyObject *path = PySys_GetObject("path"); /* borrowed */
  PyObject *dir = PyUnicode_FromString(bridge_dir);
  if (!path || !dir || PyList_Insert(path, 0, dir) != 0) die_py("sys.path");
  Py_DECREF(dir);
}

/* Writable even for inputs: iree.runtime imports only writable buffers.
 * Imported memory must be 64-byte aligned: dispatches assume it (an
 * unaligned 1 MiB+ input crashed in a vectorized dispatch). */
static PyObject *mv(void *p, size_t n) {
  PyObject *o = PyMemoryView_FromMemory((char *)p, (Py_ssize_t)n, PyBUF_WRITE);
  if (!o) die_py("memoryview");
  return o;
}

/* (memoryview over C memory, dtype, [shape...]) */
static PyObject *spec(void *p, size_t n, const char *dtype, int rank,
                      const long *shape) {
  PyObject *dims = PyList_New(rank);
  for (int i = 0; i < rank; i++) PyList_SET_ITEM(dims, i, PyLong_FromLong(shape[i]));
  PyObject *t = Py_BuildValue("(NsN)", mv(p, n), dtype, dims);
  if (!t) die_py("spec");
  return t;
}

static PyObject *bind(PyObject *sess, const char *fn, PyObject *ins, PyObject *outs) {
  PyObject *c = PyObject_CallMethod(sess, "bind", "sNN", fn, ins, outs);
  if (!c) die_py(fn);
  return c;
}

static void call0(PyObject *callable) {
  PyObject *r = PyObject_CallNoArgs(callable);
  if (!r) die_py("call");
  Py_DECREF(r);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: spike VENV BRIDGE_DIR MODULE.vmfb WEIGHTS.safetensors "
                    "ROWS DRIVER STEPS\n");
    return 2;
  }
  const char *venv = argv[1], *bridge_dir = argv[2], *vmfb = argv[3];
  const char *weights = argv[4], *driver = argv[6];
  long rows = atol(argv[5]), steps = atol(argv[7]);
  if (rows < 2 || steps < 1) return 2;

  static float w_ref[DIM * DIM];
  write_weights(weights, w_ref);

  double t0 = now_us();
  start_python(venv, bridge_dir);
  double t_python = now_us() - t0;
  PyObject *bridge = PyImport_ImportModule("bridge");
  if (!bridge) die_py("import bridge");
  double t_import = now_us() - t0 - t_python;
  long rss_before = rss_kib();
  t0 = now_us();
  PyObject *sess = PyObject_CallMethod(bridge, "Session", "sssN", vmfb, driver, "model",
                                       Py_BuildValue("[s]", weights));
  if (!sess) die_py("Session");
  double t_load = now_us() - t0;
  long rss_loaded = rss_kib();
  int failures = 0;

  /* 1. Trivial module: the per-call floor. */
  _Alignas(64) float x4[4];
  _Alignas(64) float y4[4];
  long s4 = 4;
  PyObject *noop = bind(sess, "noop",
                        Py_BuildValue("[N]", spec(x4, sizeof x4, "f32", 1, &s4)),
                        Py_BuildValue("[N]", spec(y4, sizeof y4, "f32", 1, &s4)));
  double noop_us[BATCHES];
  for (int b = 0; b < BATCHES; b++) {
    double t = now_us();
    for (long i = 0; i < steps; i++) {
      for (int k = 0; k < 4; k++) x4[k] = (float)(i + k);
      call0(noop);
      for (int k = 0; k < 4; k++)
        if (y4[k] != x4[k] + 1.0f) failures++;
    }
    noop_us[b] = (now_us() - t) / (double)steps;
  }
  /* The same calls the naive way: fresh memoryviews + device copies. */
  double copy_us[BATCHES];
  for (int b = 0; b < BATCHES; b++) {
    double t = now_us();
    for (long i = 0; i < steps; i++) {
      for (int k = 0; k < 4; k++) x4[k] = (float)(i - k);
      PyObject *r = PyObject_CallMethod(
          sess, "call_copy", "sNN", "noop",
          Py_BuildValue("[N]", spec(x4, sizeof x4, "f32", 1, &s4)),
          Py_BuildValue("[N]", spec(y4, sizeof y4, "f32", 1, &s4)));
      if (!r) die_py("call_copy");
      Py_DECREF(r);
      for (int k = 0; k < 4; k++)
        if (y4[k] != x4[k] + 1.0f) failures++;
    }
    copy_us[b] = (now_us() - t) / (double)steps;
  }

  /* 2. Decode-like step on a device-resident cache of ROWS x 64 f32:
   *    out = x @ w + cache[max(pos-1, 0)]; cache[pos] = out. */
  _Alignas(64) float x[DIM];
  _Alignas(64) float out[DIM];
  _Alignas(64) int32_t pos = 0;
  long sx[2] = {1, DIM}, s0 = 0;
  PyObject *step = bind(
      sess, "step",
      Py_BuildValue("[NN]", spec(x, sizeof x, "f32", 2, sx),
                    spec(&pos, sizeof pos, "i32", 0, &s0)),
      Py_BuildValue("[N]", spec(out, sizeof out, "f32", 2, sx)));
  /* got: what the module returned for each row (what it must have stored);
   * each step is checked against x @ w + got[prev] computed in C. */
  long ref_rows = rows < BATCHES * steps ? rows : BATCHES * steps;
  float *got = calloc((size_t)ref_rows * DIM, sizeof(float));
  if (!got) return 2;
  uint32_t seed = 7;
  double step_us[BATCHES], max_err = 0.0;
  long n = 0;
  for (int b = 0; b < BATCHES; b++) {
    double t = now_us();
    for (long i = 0; i < steps; i++, n++) {
      pos = (int32_t)(n % ref_rows);
      for (int k = 0; k < DIM; k++) x[k] = rnd(&seed);
      call0(step);
      const float *prev = got + (size_t)(pos > 0 ? pos - 1 : 0) * DIM;
      for (int j = 0; j < DIM; j++) {
        float acc = 0.0f;
        for (int k = 0; k < DIM; k++) acc += x[k] * w_ref[k * DIM + j];
        double want = (double)(acc + prev[j]);
        double err = fabs(want - (double)out[j]) / (1.0 + fabs(want));
        if (err > max_err) max_err = err;
      }
      memcpy(got + (size_t)pos * DIM, out, sizeof out);
    }
    step_us[b] = (now_us() - t) / (double)steps;
  }
  if (max_err > 1e-5) failures++;
  long rss_end = rss_kib();

  /* 3. The state really lives on the device: read rows back and compare. */
  _Alignas(64) int32_t rpos = 0;
  _Alignas(64) float row[DIM];
  PyObject *read_row =
      bind(sess, "read_row", Py_BuildValue("[N]", spec(&rpos, sizeof rpos, "i32", 0, &s0)),
           Py_BuildValue("[N]", spec(row, sizeof row, "f32", 2, sx)));
  double row_err = 0.0;
  for (long r = 0; r < ref_rows; r += (ref_rows / 64 > 0 ? ref_rows / 64 : 1)) {
    rpos = (int32_t)r;
    call0(read_row);
    for (int j = 0; j < DIM; j++) {
      double e = fabs((double)row[j] - (double)got[r * DIM + j]);
      if (e > row_err) row_err = e;
    }
  }
  if (row_err != 0.0) failures++; /* the module stored exactly what it returned */

  /* 4. Hazard probe: @step_arg takes the cache as an argument. Does the
   *    module write into the caller's (here: C's) input memory? */
  size_t cbytes = (size_t)rows * DIM * sizeof(float);
  float *carg = aligned_alloc(64, cbytes);
  _Alignas(64) float xo[DIM];
  _Alignas(64) float cout[DIM];
  _Alignas(64) int32_t apos = 3;
  if (!carg) return 2;
  memset(carg, 0, cbytes);
  for (int k = 0; k < DIM; k++) xo[k] = 1.0f;
  long sc[2] = {rows, DIM};
  PyObject *step_arg = bind(
      sess, "step_arg",
      Py_BuildValue("[NNN]", spec(carg, cbytes, "f32", 2, sc),
                    spec(xo, sizeof xo, "f32", 2, sx), spec(&apos, sizeof apos, "i32", 0, &s0)),
      Py_BuildValue("[N]", spec(cout, sizeof cout, "f32", 2, sx)));
  double ta = now_us();
  call0(step_arg);
  double step_arg_us = now_us() - ta;
  int clobbered = carg[3 * DIM] != 0.0f;
  Py_DECREF(step_arg);
  free(carg);

  qsort(noop_us, BATCHES, sizeof(double), cmp_double);
  qsort(copy_us, BATCHES, sizeof(double), cmp_double);
  qsort(step_us, BATCHES, sizeof(double), cmp_double);
  printf("{\"driver\":\"%s\",\"rows\":%ld,\"state_mib\":%.2f,\"calls_per_batch\":%ld,"
         "\"python_init_ms\":%.1f,\"import_ms\":%.1f,\"load_ms\":%.1f,"
         "\"noop_us\":{\"best\":%.2f,\"median\":%.2f},"
         "\"noop_copy_us\":{\"best\":%.2f,\"median\":%.2f},"
         "\"step_us\":{\"best\":%.2f,\"median\":%.2f},"
         "\"rss_mib\":{\"before_load\":%.1f,\"loaded\":%.1f,\"after_steps\":%.1f},"
         "\"step_max_rel_err\":%.3g,\"readback_max_abs_err\":%.3g,"
         "\"step_arg_first_call_us\":%.1f,\"step_arg_wrote_into_input\":%s,\"failures\":%d}\n",
         driver, rows, (double)rows * DIM * 4 / 1048576.0, steps, t_python / 1e3,
         t_import / 1e3, t_load / 1e3, noop_us[0], noop_us[BATCHES / 2], copy_us[0],
         copy_us[BATCHES / 2], step_us[0], step_us[BATCHES / 2], rss_before / 1024.0,
         rss_loaded / 1024.0, rss_end / 1024.0, max_err, row_err, step_arg_us,
         clobbered ? "true" : "false", failures);

  Py_DECREF(read_row);
  Py_DECREF(step);
  Py_DECREF(noop);
  Py_DECREF(sess);
  Py_DECREF(bridge);
  free(got);
  if (Py_FinalizeEx() != 0) failures++;
  return failures ? 1 : 0;
}
