/* The cpu backend's repacked linear weights, one store per module (the text
 * decoder, a media encoder): each weight is packed into the kernels' panel
 * layout (cpu_kernels.h, cpu_packed_linear) the first time a graph uses it
 * (or when the module prepares its graph at open), and its pages in the
 * checkpoint's memory map are then evicted, so the weights are resident
 * once, in the packed form. Keyed by the weight's (and bias's) address in
 * the map. Thread-safe. */
#ifndef VLM_BACKENDS_CPU_PACKS_H
#define VLM_BACKENDS_CPU_PACKS_H

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_quant.h"
#include "io/checkpoint.h"
#include "io/quantization_config.h"

typedef struct vlm_cpu_packs vlm_cpu_packs;

vlm_status vlm_cpu_packs_create(vlm_cpu_packs **out_packs);
/* From now on, weights packed by this store are quantized to `format`
 * (cpu_quant.h) in groups of `group_size` inputs (--quantize); the source
 * pages are evicted after each tensor. CPU_QUANT_NONE: as stored. */
void vlm_cpu_packs_set_quantization(vlm_cpu_packs *packs, cpu_quant_format format, int64_t group_size);
void vlm_cpu_packs_release(vlm_cpu_packs *packs);

/* The packed form of `weights`, packing it now if it is new. `checkpoint`
 * (may be NULL): the checkpoint the tensors are mapped from, whose pages
 * for them are evicted after packing. */
vlm_status vlm_cpu_packs_get(vlm_cpu_packs *packs, vlm_thread_pool *pool, const cpu_linear_weights *weights,
                             const vlm_checkpoint *checkpoint, const cpu_packed_linear **out_packed);

/* The checkpoint's GPTQ/AWQ layout (borrowed; NULL: none): linear weights
 * stored as X.qweight etc. are found through vlm_cpu_packs_get_hub. */
void vlm_cpu_packs_set_hub_quantization(vlm_cpu_packs *packs, const vlm_quantization_config *config);
const vlm_quantization_config *vlm_cpu_packs_hub_quantization(const vlm_cpu_packs *packs);
/* The packed form of the GPTQ/AWQ layer `prefix` (cpu_hub_quant.h),
 * converting it now if it is new; keyed by its qweight's address `qweight`
 * and `bias` (may be NULL, of `bias_dtype`). */
vlm_status vlm_cpu_packs_get_hub(vlm_cpu_packs *packs, vlm_thread_pool *pool, const vlm_checkpoint *checkpoint,
                                 const char *prefix, const void *qweight, int64_t output_count, int64_t input_count,
                                 const void *bias, vlm_dtype bias_dtype, const cpu_packed_linear **out_packed);

/* Weights packed so far and the bytes they hold. */
int64_t vlm_cpu_packs_count(const vlm_cpu_packs *packs);
uint64_t vlm_cpu_packs_bytes(const vlm_cpu_packs *packs);

#endif
