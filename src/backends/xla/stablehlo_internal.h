/* Internals shared by the StableHLO emitter's files: the value type, the
 * per-function emitter state, and the op printers (stablehlo_text.c) that
 * the lowering of graph ops (stablehlo_lower.c) and the module assembly
 * (stablehlo_emitter.c) use.
 *
 * Every StableHLO op is printed in MLIR's generic form
 * ("stablehlo.add"(%a, %b) : (types) -> type): one printer covers all ops,
 * the text parses the same in every MLIR version that has the op, and the
 * golden tests count ops by their quoted name. */
#ifndef VLM_BACKENDS_XLA_STABLEHLO_INTERNAL_H
#define VLM_BACKENDS_XLA_STABLEHLO_INTERNAL_H

#include <stdint.h>

#include "backends/xla/xla_layout.h"
#include "backends/xla/stablehlo_emitter.h"
#include "graph/graph.h"
#include "io/checkpoint.h"
#include "io/json.h"

#define XLA_MAX_RANK 6
#define XLA_MAX_WEIGHTS 4096

/* An SSA value: its name and tensor type. */
typedef struct xla_value {
  char name[24];        /* "%t12", "%tokens"; empty: not made yet */
  int rank;
  int64_t shape[XLA_MAX_RANK];
  char element[8];      /* "f32", "bf16", "i32", "i1" */
} xla_value;

typedef enum xla_function_kind {
  XLA_TOKEN_PREFILL,
  XLA_EMBEDDINGS_PREFILL,
  XLA_DECODE,
  XLA_GRAPH_FUNCTION, /* a stateless graph function (encoders): no KV cache */
} xla_function_kind;

/* A parameter global the module declares (deduplicated across functions). */
typedef struct xla_weight {
  char name[VLM_GRAPH_NAME_LENGTH];
  int rank;
  int64_t shape[XLA_MAX_RANK];  /* as declared: [in, out] when transposed */
  char element[8];
  /* A linear's weight read [in, out]: the global "<name>#t". */
  bool transposed;
  /* A buffer the runtime lays out once at load (XLA_LAYOUT_SCOPE, key
   * "<name>" or "<name>#t"), not read from the checkpoint files by IREE:
   * every weight of a text decoder. */
  bool laid_out;
} xla_weight;


typedef struct xla_weight_list {
  xla_weight *items;
  int count;
} xla_weight_list;

#define XLA_MAX_MASKS 4
typedef struct xla_mask {
  int64_t sliding_window;
  xla_value value;
} xla_mask;

typedef struct xla_emitter {
  vlm_string_builder *out;
  xla_function_kind kind;
  const vlm_graph *graph;
  const vlm_checkpoint *weights;
  const vlm_stablehlo_options *options;
  const vlm_text_config *text;
  int64_t max_position_embeddings;
  xla_weight_list *declared;
  int64_t rows;                 /* chunk (prefill) or slots (decode) */
  int64_t cache_rows;           /* capacity + prefill_chunk: see the KV layout */
  int next_temp;
  xla_value *nodes;             /* per graph node; weights in their own dtype */
  xla_value *nodes_f32;         /* weights converted to f32, on first use */
  /* Text decoder functions: a linear reads its weight transposed, [in,
   * out] (the layout IREE's llvm-cpu matvec streams fastest; as a
   * transpose inside the module IREE would hoist it into a private copy
   * per function, next to the mapped original), and every weight is a
   * buffer the runtime lays out (xla_layout.h). NULL: W [out, in] as
   * stored, parameters read from the checkpoint's files. */
  xla_value *nodes_transposed, *nodes_transposed_f32;
  /* Function arguments and values every layer shares. */
  xla_value tokens, embeddings, feature_mask, positions, bias, valid_rows, slot, start, active;
  xla_value layer_features;     /* embeddings_prefill with layer features: [L, rows, hidden] f32 */
  int position_axes;            /* the text model's: 1, or 3 for M-RoPE */
  int64_t layer_feature_count;  /* L of the decoder description (models/decoder.h) */
  xla_value row_positions;      /* embeddings_prefill with 3 axes: [3, rows] i32 */
  /* Graph inputs other than tokens/embeddings, by node name: the function
   * arguments of stateless graph modules (stablehlo_graph.c). */
  const char *const *input_names;
  const xla_value *input_values;
  int input_count;
  xla_value zero_index;         /* tensor<i32> 0 */
  xla_value cache_index;        /* [rows] i32: where each row's K/V goes */
  xla_value write_index;        /* decode: cache_index, or a spill row when inactive */
  xla_value rope_positions;     /* [rows] f32 */
  xla_value row_valid;          /* prefill: [rows] i1, row < valid_rows */
  xla_value rope_cos[VLM_GRAPH_MAX_ROPES], rope_sin[VLM_GRAPH_MAX_ROPES];
  /* The KV cache global's current value in this function (loaded on first
   * use, stored once before returning: xla_flush_cache). */
  xla_value cache;
  /* Prefill and decode: attention reads the cache as it was loaded at the
   * start of the function (`cache`, never updated while layers run) plus
   * the rows this call computes, which are kept here per layer ([rows,
   * kv_heads, head_dim]) and written in one go after the last layer
   * (xla_write_new_rows). Reads all come before the writes in program order,
   * so IREE can update the global in place. */
  xla_value *new_keys, *new_values;
  int64_t window;               /* decode: cache rows [0, window) attention reads */
  /* Which keys each row sees, per sliding window (0: none), made by the
   * first layer that needs it: prefill an additive bias, decode an i1 mask. */
  xla_mask masks[XLA_MAX_MASKS];
  int mask_count;
  char function_name[48];       /* "decode", "decode_256", ... */
  /* Request state (text functions of a decoder with LoRA adapters or
   * longrope, vlm_xla_text_decoder.request_state): prefill takes the slot's
   * adapter and its prompt length as scalars, decode each row's adapter and
   * row window; rope_length [rows] i32 is each row's RoPE sequence length
   * and the lora_mask.<k> inputs [rows] i32 derive from the adapters. */
  bool request_state;
  int adapter_count;
  xla_value adapter, prompt_length, adapters, row_windows, rope_length;
  const char *lora_names[VLM_DECODER_MAX_ADAPTERS];
  xla_value lora_values[VLM_DECODER_MAX_ADAPTERS];
} xla_emitter;

/* The parameter scope of a checkpoint tensor ("model", or "shard<N>" for
 * an extra file: stablehlo_emitter.c). */
void xla_parameter_scope(const vlm_checkpoint *checkpoint, const char *name, char *out, size_t size);

/* Types and printers (stablehlo_text.c). */
xla_value xla_make_value(const char *element, int rank, const int64_t *shape);
void xla_type_text(const xla_value *value, char *out, size_t size);
/* Prints `result = "stablehlo.<op>"(args) {attributes} : (types) -> type`
 * with a fresh name and returns the result (shape/element from `like`). */
xla_value xla_op(xla_emitter *e, const char *op, const char *attributes, const xla_value *like,
                 int count, const xla_value *args);
#define XLA_OP(e, op, attributes, like, ...)                                              \
  xla_op((e), (op), (attributes), (like), (int)(sizeof((xla_value[]){__VA_ARGS__}) /      \
                                                sizeof(xla_value)),                      \
         (xla_value[]){__VA_ARGS__})
xla_value xla_splat(xla_emitter *e, double number, const char *element, int rank, const int64_t *shape);
xla_value xla_convert(xla_emitter *e, xla_value x, const char *element);
xla_value xla_reshape(xla_emitter *e, xla_value x, int rank, const int64_t *shape);
/* broadcast_in_dim of x into shape, x's dims going to `dims`. */
xla_value xla_broadcast(xla_emitter *e, xla_value x, int rank, const int64_t *shape, const int64_t *dims);
xla_value xla_slice(xla_emitter *e, xla_value x, const int64_t *start, const int64_t *limit);
xla_value xla_concatenate(xla_emitter *e, int count, const xla_value *parts, int dimension);
xla_value xla_compare(xla_emitter *e, xla_value a, xla_value b, const char *direction);
xla_value xla_select(xla_emitter *e, xla_value predicate, xla_value on_true, xla_value on_false);
xla_value xla_iota(xla_emitter *e, const char *element, int rank, const int64_t *shape, int dimension);
/* Reduces the last dimension with "add" or "maximum". */
xla_value xla_reduce_last(xla_emitter *e, xla_value x, const char *combiner, double init);
xla_value xla_dot_general(xla_emitter *e, xla_value lhs, xla_value rhs, int batch_count,
                          const int64_t *lhs_batch, const int64_t *rhs_batch,
                          int64_t lhs_contracting, int64_t rhs_contracting, int rank,
                          const int64_t *shape);
xla_value xla_dynamic_slice(xla_emitter *e, xla_value x, int index_count, const xla_value *indices,
                            const int64_t *sizes);
xla_value xla_dynamic_update_slice(xla_emitter *e, xla_value x, xla_value update, int index_count,
                                   const xla_value *indices);
xla_value xla_global_load(xla_emitter *e, const char *global, const xla_value *like);
void xla_global_store(xla_emitter *e, xla_value value, const char *global);
/* The single KV cache global: see stablehlo_emitter.h for why one. */
#define XLA_CACHE_GLOBAL "kv_cache"
xla_value xla_cache_shape(const xla_emitter *e);
xla_value xla_current_cache(xla_emitter *e);
void xla_flush_cache(xla_emitter *e);
/* Writes every layer's new K/V rows (e->new_keys/new_values) into `cache`. */
void xla_write_new_rows(xla_emitter *e);

/* Module assembly shared by the text and vision modules (stablehlo_emitter.c). */
xla_value xla_argument(const char *name, const char *element, int rank, const int64_t *shape);
/* The name a tensor is stored under in the checkpoint (parameters are looked up by it). */
const char *xla_stored_name(const vlm_checkpoint *checkpoint, const char *name);
/* Hash of the parameters' names, stored names, dtypes and shapes; `dtypes`
 * gets "f32", "bf16", "f32+bf16", ... */
void xla_weights_signature(const vlm_checkpoint *checkpoint, const xla_weight_list *weights, uint64_t *out_hash,
                           char *dtypes, size_t size);
/* `description` (comment lines), the module line with its attributes and
 * compatibility key, and one parameter global per weight. */
void xla_emit_module_header(vlm_string_builder *out, const char *module, const char *description,
                            int contract_version, int emitter_version, const vlm_xla_key *key,
                            const vlm_checkpoint *checkpoint, const xla_weight_list *weights);
void xla_emit_compatibility(vlm_string_builder *out, int contract_version, int emitter_version, uint64_t key_hash);

/* Lowering (stablehlo_lower.c). */
vlm_status xla_lower_node(xla_emitter *e, int32_t index);
/* OK when the emitter can lower `node`; UNIMPLEMENTED naming it otherwise. */
vlm_status xla_check_node(const vlm_graph *graph, const vlm_node *node);
/* The f32 value of input `which` of `node` (weights converted on first use). */
xla_value xla_input_f32(xla_emitter *e, const vlm_node *node, int which);
/* The f32 value of node `index` itself. */
xla_value xla_node_f32(xla_emitter *e, int32_t index);
xla_value xla_splat_like(xla_emitter *e, double number, xla_value like);
/* The activation as the cpu backend computes it, elementwise. */
xla_value xla_activate(xla_emitter *e, vlm_activation activation, xla_value x);
/* The moe op (stablehlo_lower_moe.c). */
xla_value xla_lower_moe(xla_emitter *e, const vlm_node *node);
vlm_status xla_check_moe(const vlm_node *node);
/* Softmax over the last dimension, guarded against rows that see no key. */
xla_value xla_softmax_last(xla_emitter *e, xla_value scores);

/* Lowering of the encoder ops (stablehlo_lower_encoder.c): layer_norm,
 * segment_attention, concat, row_select. */
vlm_status xla_lower_encoder_node(xla_emitter *e, const vlm_node *node, xla_value *out);

#endif
