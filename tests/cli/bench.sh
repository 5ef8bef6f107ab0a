#!/usr/bin/env bash
# `vlm bench` on a small bf16 checkpoint written from a custom config:
# the JSON report has every figure, and bf16 weights run through the whole
# engine. Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"

cat >"$work/config.json" <<'JSON'
{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": 512,
 "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
 "num_attention_heads": 2, "num_key_value_heads": 1, "tie_word_embeddings": true}
JSON
writes_bf16_model() {
  "$make_tiny" --config "$work/config.json" --dtype bf16 "$work/model" >/dev/null \
    && "$vlm" inspect --model "$work/model" --json | python3 -c '
import json, sys
report = json.load(sys.stdin)
assert report["can_load"] and list(report["stored_dtypes"]) == ["bf16"], report'
}
check make_tiny_model_writes_a_bf16_checkpoint writes_bf16_model

bench_reports() {
  "$vlm" --threads 2 bench --model "$work/model" --prefill 8,16 --decode-batch 1,2 --steps 3 \
    --repetitions 1 >"$work/out" 2>"$work/err" || { cat "$work/err"; return 1; }
  grep -q "decode batch 2" "$work/err" && python3 - "$work/out" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert report["threads"] == 2 and report["weight_bytes"] > 0, report
assert [p["tokens"] for p in report["prefill"]] == [8, 16], report
assert [d["batch"] for d in report["decode"]] == [1, 2], report
assert all(p["tokens_per_second"] > 0 for p in report["prefill"] + report["decode"]), report
assert report["read_bandwidth_gb_per_s"] > 0 and report["peak_rss_bytes"] > 0, report
PY
}
check bench_reports_json bench_reports

refuses_bad_lists() {
  "$vlm" bench --model "$work/model" --prefill 8,x >/dev/null 2>"$work/err"
  [ $? -eq 2 ] && grep -q "needs lengths like 128,512" "$work/err"
}
check bench_refuses_bad_lists refuses_bad_lists

finish
