/* Printers for MLIR's generic op form. Each returns the result value; the
 * text goes to the emitter's builder (which records out-of-memory once). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backends/xla/stablehlo_internal.h"

xla_value xla_make_value(const char *element, int rank, const int64_t *shape) {
  xla_value value = {.rank = rank};
  snprintf(value.element, sizeof(value.element), "%s", element);
  for (int i = 0; i < rank; i++) value.shape[i] = shape[i];
  return value;
}

void xla_type_text(const xla_value *value, char *out, size_t size) {
  size_t used = (size_t)snprintf(out, size, "tensor<");
  for (int i = 0; i < value->rank && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, "%lldx", (long long)value->shape[i]);
  if (used < size) snprintf(out + used, size - used, "%s>", value->element);
}

static void fresh_name(xla_emitter *e, xla_value *value) {
  snprintf(value->name, sizeof(value->name), "%%t%d", e->next_temp++);
}

static void append_dims(char *out, size_t size, int count, const int64_t *dims) {
  size_t used = strlen(out);
  for (int i = 0; i < count && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, "%s%lld", i ? ", " : "", (long long)dims[i]);
}

xla_value xla_op(xla_emitter *e, const char *op, const char *attributes, const xla_value *like,
                 int count, const xla_value *args) {
  xla_value result = *like;
  fresh_name(e, &result);
  char type[160];
  /* A dotted name is another dialect's op ("chlo.erf"); plain ones are StableHLO's. */
  vlm_sb_appendf(e->out, "    %s = \"%s%s\"(", result.name, strchr(op, '.') ? "" : "stablehlo.", op);
  for (int i = 0; i < count; i++) vlm_sb_appendf(e->out, "%s%s", i ? ", " : "", args[i].name);
  vlm_sb_appendf(e->out, ")%s%s%s : (", attributes && *attributes ? " {" : "",
                 attributes ? attributes : "", attributes && *attributes ? "}" : "");
  for (int i = 0; i < count; i++) {
    xla_type_text(&args[i], type, sizeof(type));
    vlm_sb_appendf(e->out, "%s%s", i ? ", " : "", type);
  }
  xla_type_text(&result, type, sizeof(type));
  vlm_sb_appendf(e->out, ") -> %s\n", type);
  return result;
}

/* MLIR float literals: hex bit patterns for infinities, %.9e otherwise (enough
 * digits to round-trip an f32). */
static void float_literal(double number, char *out, size_t size) {
  if (isinf(number)) snprintf(out, size, "%s", number > 0 ? "0x7F800000" : "0xFF800000");
  else snprintf(out, size, "%.9e", number);
}

xla_value xla_splat(xla_emitter *e, double number, const char *element, int rank, const int64_t *shape) {
  xla_value result = xla_make_value(element, rank, shape);
  fresh_name(e, &result);
  char literal[40], type[160];
  if (element[0] == 'f') float_literal(number, literal, sizeof(literal));
  else snprintf(literal, sizeof(literal), "%lld", (long long)number);
  xla_type_text(&result, type, sizeof(type));
  vlm_sb_appendf(e->out, "    %s = \"stablehlo.constant\"() {value = dense<%s> : %s} : () -> %s\n",
                 result.name, literal, type, type);
  return result;
}

xla_value xla_convert(xla_emitter *e, xla_value x, const char *element) {
  if (strcmp(x.element, element) == 0) return x;
  xla_value like = xla_make_value(element, x.rank, x.shape);
  return XLA_OP(e, "convert", NULL, &like, x);
}

xla_value xla_reshape(xla_emitter *e, xla_value x, int rank, const int64_t *shape) {
  xla_value like = xla_make_value(x.element, rank, shape);
  return XLA_OP(e, "reshape", NULL, &like, x);
}

xla_value xla_broadcast(xla_emitter *e, xla_value x, int rank, const int64_t *shape, const int64_t *dims) {
  char attributes[128] = "broadcast_dimensions = array<i64";
  if (x.rank) strcat(attributes, ": ");
  append_dims(attributes, sizeof(attributes), x.rank, dims);
  strcat(attributes, ">");
  xla_value like = xla_make_value(x.element, rank, shape);
  return XLA_OP(e, "broadcast_in_dim", attributes, &like, x);
}

xla_value xla_slice(xla_emitter *e, xla_value x, const int64_t *start, const int64_t *limit) {
  char attributes[320] = "start_indices = array<i64: ";
  int64_t strides[XLA_MAX_RANK], shape[XLA_MAX_RANK];
  for (int i = 0; i < x.rank; i++) {
    strides[i] = 1;
    shape[i] = limit[i] - start[i];
  }
  append_dims(attributes, sizeof(attributes), x.rank, start);
  strcat(attributes, ">, limit_indices = array<i64: ");
  append_dims(attributes, sizeof(attributes), x.rank, limit);
  strcat(attributes, ">, strides = array<i64: ");
  append_dims(attributes, sizeof(attributes), x.rank, strides);
  strcat(attributes, ">");
  xla_value like = xla_make_value(x.element, x.rank, shape);
  return XLA_OP(e, "slice", attributes, &like, x);
}

xla_value xla_concatenate(xla_emitter *e, int count, const xla_value *parts, int dimension) {
  xla_value like = parts[0];
  for (int i = 1; i < count; i++) like.shape[dimension] += parts[i].shape[dimension];
  char attributes[48];
  snprintf(attributes, sizeof(attributes), "dimension = %d : i64", dimension);
  return xla_op(e, "concatenate", attributes, &like, count, parts);
}

xla_value xla_compare(xla_emitter *e, xla_value a, xla_value b, const char *direction) {
  char attributes[96];
  snprintf(attributes, sizeof(attributes), "comparison_direction = #stablehlo<comparison_direction %s>",
           direction);
  xla_value like = xla_make_value("i1", a.rank, a.shape);
  return XLA_OP(e, "compare", attributes, &like, a, b);
}

xla_value xla_select(xla_emitter *e, xla_value predicate, xla_value on_true, xla_value on_false) {
  return XLA_OP(e, "select", NULL, &on_true, predicate, on_true, on_false);
}

xla_value xla_iota(xla_emitter *e, const char *element, int rank, const int64_t *shape, int dimension) {
  char attributes[40];
  snprintf(attributes, sizeof(attributes), "iota_dimension = %d : i64", dimension);
  xla_value like = xla_make_value(element, rank, shape);
  return xla_op(e, "iota", attributes, &like, 0, NULL);
}

xla_value xla_reduce_last(xla_emitter *e, xla_value x, const char *combiner, double init) {
  xla_value initial = xla_splat(e, init, x.element, 0, NULL);
  xla_value result = xla_make_value(x.element, x.rank - 1, x.shape);
  fresh_name(e, &result);
  char x_type[160], result_type[160];
  xla_type_text(&x, x_type, sizeof(x_type));
  xla_type_text(&result, result_type, sizeof(result_type));
  const char *t = x.element;
  vlm_sb_appendf(e->out,
                 "    %s = \"stablehlo.reduce\"(%s, %s) ({\n"
                 "    ^bb0(%%a: tensor<%s>, %%b: tensor<%s>):\n"
                 "      %%r = \"stablehlo.%s\"(%%a, %%b) : (tensor<%s>, tensor<%s>) -> tensor<%s>\n"
                 "      \"stablehlo.return\"(%%r) : (tensor<%s>) -> ()\n"
                 "    }) {dimensions = array<i64: %d>} : (%s, tensor<%s>) -> %s\n",
                 result.name, x.name, initial.name, t, t, combiner, t, t, t, t, x.rank - 1, x_type, t,
                 result_type);
  return result;
}

xla_value xla_dot_general(xla_emitter *e, xla_value lhs, xla_value rhs, int batch_count,
                          const int64_t *lhs_batch, const int64_t *rhs_batch,
                          int64_t lhs_contracting, int64_t rhs_contracting, int rank,
                          const int64_t *shape) {
  char attributes[256] = "dot_dimension_numbers = #stablehlo.dot<";
  if (batch_count) {
    strcat(attributes, "lhs_batching_dimensions = [");
    append_dims(attributes, sizeof(attributes), batch_count, lhs_batch);
    strcat(attributes, "], rhs_batching_dimensions = [");
    append_dims(attributes, sizeof(attributes), batch_count, rhs_batch);
    strcat(attributes, "], ");
  }
  size_t used = strlen(attributes);
  snprintf(attributes + used, sizeof(attributes) - used,
           "lhs_contracting_dimensions = [%lld], rhs_contracting_dimensions = [%lld]>",
           (long long)lhs_contracting, (long long)rhs_contracting);
  xla_value like = xla_make_value(lhs.element, rank, shape);
  return XLA_OP(e, "dot_general", attributes, &like, lhs, rhs);
}

xla_value xla_dynamic_slice(xla_emitter *e, xla_value x, int index_count, const xla_value *indices,
                            const int64_t *sizes) {
  xla_value args[1 + XLA_MAX_RANK];
  args[0] = x;
  for (int i = 0; i < index_count; i++) args[1 + i] = indices[i];
  char attributes[128] = "slice_sizes = array<i64: ";
  append_dims(attributes, sizeof(attributes), x.rank, sizes);
  strcat(attributes, ">");
  xla_value like = xla_make_value(x.element, x.rank, sizes);
  return xla_op(e, "dynamic_slice", attributes, &like, 1 + index_count, args);
}

xla_value xla_dynamic_update_slice(xla_emitter *e, xla_value x, xla_value update, int index_count,
                                   const xla_value *indices) {
  xla_value args[2 + XLA_MAX_RANK];
  args[0] = x;
  args[1] = update;
  for (int i = 0; i < index_count; i++) args[2 + i] = indices[i];
  return xla_op(e, "dynamic_update_slice", NULL, &x, 2 + index_count, args);
}

xla_value xla_global_load(xla_emitter *e, const char *global, const xla_value *like) {
  xla_value result = *like;
  fresh_name(e, &result);
  char type[160];
  xla_type_text(&result, type, sizeof(type));
  vlm_sb_appendf(e->out, "    %s = util.global.load @%s : %s\n", result.name, global, type);
  return result;
}

void xla_global_store(xla_emitter *e, xla_value value, const char *global) {
  char type[160];
  xla_type_text(&value, type, sizeof(type));
  vlm_sb_appendf(e->out, "    util.global.store %s, @%s : %s\n", value.name, global, type);
}

xla_value xla_cache_shape(const xla_emitter *e) {
  const vlm_text_config *text = e->text;
  return xla_make_value("f32", 6, (int64_t[]){text->num_hidden_layers, 2, e->options->slot_count, e->cache_rows,
                                              text->num_key_value_heads, text->head_dim});
}

xla_value xla_current_cache(xla_emitter *e) {
  if (!e->cache.name[0]) {
    xla_value like = xla_cache_shape(e);
    e->cache = xla_global_load(e, XLA_CACHE_GLOBAL, &like);
  }
  return e->cache;
}

void xla_flush_cache(xla_emitter *e) {
  if (e->cache.name[0]) xla_global_store(e, e->cache, XLA_CACHE_GLOBAL);
  e->cache.name[0] = '\0';
}
