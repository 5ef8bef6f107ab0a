#!/usr/bin/env bash
# Qwen3-VL-MoE expert layouts on checkpoints written by vlm-make-tiny-model
# (the canonical [E, 2I, hidden] / [E, hidden, I]): a shape the hub's
# [E, hidden, 2I] layout would give as well (hidden == 2I) is refused with
# the tensor's name, since which one it is cannot be told; an unambiguous
# one opens and decodes. Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"

write_config() { # write_config FILE MOE_INTERMEDIATE
  cat >"$1" <<JSON
{"architectures": ["Qwen3VLMoeForConditionalGeneration"], "model_type": "qwen3_vl_moe",
 "image_token_id": 60, "video_token_id": 61, "vision_start_token_id": 62, "vision_end_token_id": 63,
 "tie_word_embeddings": true,
 "text_config": {"model_type": "qwen3_vl_moe_text", "vocab_size": 64, "hidden_size": 8, "intermediate_size": 16,
                 "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                 "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": $2,
                 "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1],
                                     "mrope_interleaved": true}},
 "vision_config": {"model_type": "qwen3_vl_moe_vision", "depth": 1, "hidden_size": 16, "intermediate_size": 16,
                   "num_heads": 2, "patch_size": 16, "out_hidden_size": 8, "num_position_embeddings": 16,
                   "deepstack_visual_indexes": [0]}}
JSON
}

write_config "$work/ambiguous.json" 4
write_config "$work/clear.json" 6
"$make_tiny" --config "$work/ambiguous.json" "$work/ambiguous" >/dev/null
"$make_tiny" --config "$work/clear.json" "$work/clear" >/dev/null

bench_args="bench --prefill 4 --decode-batch 1,2 --steps 2 --repetitions 1"
check ambiguous_expert_layout_is_refused bash -c "run 1 $bench_args --model '$work/ambiguous' \
  && err_has \"mlp.experts.gate_up_proj': its shape [4, 8, 8] fits both expert layouts\""
check clear_expert_layout_decodes bash -c "run 0 $bench_args --model '$work/clear' && out_has '\"experts\":{\"count\":4,\"top_k\":2'"
check inspect_accepts_the_experts bash -c "run 0 inspect --model '$work/clear' && out_has 'status: ok' \
  && out_has 'family Qwen3-VL-MoE'"
finish
