/* Internal: the config families of src/io/configs, one file per
 * Transformers module (models/<name>/) holding its classes' records
 * (io/config_record.h), for the registry in config_records.c; and what one
 * module's records take from another's, as Transformers' modular files
 * derive one class from another. */
#ifndef VLM_IO_CONFIGS_CONFIGS_H
#define VLM_IO_CONFIGS_CONFIGS_H

#include "core/status.h"
#include "io/config_record.h"

extern const vlm_config_family vlm_config_family_llama;
extern const vlm_config_family vlm_config_family_mistral;
extern const vlm_config_family vlm_config_family_qwen2;
extern const vlm_config_family vlm_config_family_qwen3;
extern const vlm_config_family vlm_config_family_clip;
extern const vlm_config_family vlm_config_family_siglip;
extern const vlm_config_family vlm_config_family_llava;
extern const vlm_config_family vlm_config_family_qwen2_vl;
extern const vlm_config_family vlm_config_family_qwen2_5_vl;
extern const vlm_config_family vlm_config_family_qwen3_vl;
extern const vlm_config_family vlm_config_family_qwen3_vl_moe;
extern const vlm_config_family vlm_config_family_gemma3;
extern const vlm_config_family vlm_config_family_gemma3n;
extern const vlm_config_family vlm_config_family_phi4_multimodal;
extern const vlm_config_family vlm_config_family_molmo2;
extern const vlm_config_family vlm_config_family_youtu;

/* clip.c: CLIPVisionConfig's reader, which SiglipVisionConfig shares. */
vlm_status vlm_clip_read_vision(const vlm_config_section *section, vlm_vision_config *out);

/* qwen2_vl.c: Qwen2VLTextConfig's rules (Qwen2_5_VLTextConfig is a copy),
 * and the Qwen patch embedder and heads every Qwen-VL vision config has. */
extern const vlm_text_rules vlm_qwen2_vl_text_rules;
vlm_status vlm_qwen_vl_read_patching(const vlm_config_section *section, vlm_vision_config *out);
vlm_status vlm_qwen_vl_read_heads(const vlm_config_section *section, vlm_vision_config *out);

/* qwen3_vl.c: the text rules and vision reader Qwen3-VL-MoE derives. */
extern const vlm_text_rules vlm_qwen3_vl_text_rules;
vlm_status vlm_qwen3_vl_read_vision(const vlm_config_section *section, vlm_vision_config *out);

#endif
