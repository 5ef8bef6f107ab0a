/* The int4 GPTQ and AWQ linear layers of hub checkpoints (config.json's
 * quantization_config, io/quantization_config.h) converted into the cpu
 * kernels' q4 layout (backends/cpu/cpu_quant.h), once, at load. The layouts
 * (docs/KERNELS.md, "GPTQ and AWQ checkpoints"), for a layer `X` of
 * `out` outputs and `in` inputs in groups of G:
 *
 * GPTQ  X.qweight int32 [in/8, out]: input k of output o is nibble k % 8
 *       (bits 4(k % 8)..) of qweight[k / 8][o];
 *       X.qzeros int32 [groups, out/8]: output o's zero is nibble o % 8 of
 *       qzeros[g][o / 8], plus 1 in the original "gptq" format (which
 *       stores zero - 1); X.scales [groups, out]; X.g_idx int32 [in]:
 *       input k's group (k / G, or a permutation of groups: act-order).
 *       w[o][k] = scales[g][o] * (q - zero[g][o]) with g = g_idx[k].
 * AWQ   X.qweight int32 [in, out/8]: output o of input k is nibble
 *       {0, 4, 1, 5, 2, 6, 3, 7}[o % 8] of qweight[k][o / 8] (AutoAWQ packs
 *       columns in the order 0 2 4 6 1 3 5 7); X.qzeros int32 [groups,
 *       out/8] in the same order; X.scales [groups, out]; group k / G.
 * The bias, when the layer has one, is X.bias as stored. Scales must be
 * f16 (or bf16 values f16 holds exactly). */
#ifndef VLM_BACKENDS_CPU_HUB_QUANT_H
#define VLM_BACKENDS_CPU_HUB_QUANT_H

#include "backends/cpu/cpu_quant.h"
#include "io/checkpoint.h"
#include "io/quantization_config.h"

/* `prefix` is the layer's name up to and including the dot ("model.
 * layers.0.mlp.up_proj."). Every tensor's dtype and shape is checked, and
 * every value (g_idx in range, act-order groups of G) before use. */
vlm_status cpu_hub_quant_pack(vlm_thread_pool *pool, const vlm_checkpoint *checkpoint,
                              const vlm_quantization_config *config, const char *prefix, int64_t output_count,
                              int64_t input_count, const void *bias, vlm_dtype bias_dtype,
                              cpu_packed_linear **out_packed);

#endif
