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
assert report["kernel_path"] in ("portable", "avx2", "avx512") and report["isa"], report
assert report["fma_peak_gflops"] > 0 and report["fma_peak_gflops_cpu_time"] > 0, report
assert all(0 < p["fraction_of_fma_peak_cpu_time"] for p in report["prefill"]), report
assert all(0 < d["fraction_of_roofline_cpu_time"] for d in report["decode"]), report
assert len(report["load_average"]) == 2 and report["rss_after_load_bytes"] > 0, report
PY
}
check bench_reports_json bench_reports

# --quantize: the report says so and bounds decode by the quantized bytes
# (q4 is 0.59 bytes a weight against bf16's 2; the rest as stored).
bench_quantized() {
  "$vlm" --threads 1 bench --model "$work/model" --prefill 8 --decode-batch 1 --steps 2 --repetitions 1 \
    >"$work/plain" 2>/dev/null || return 1
  for q in q8 q4; do
    "$vlm" --threads 1 bench --model "$work/model" --prefill 8 --decode-batch 1 --steps 2 --repetitions 1 \
      --quantize $q >"$work/$q" 2>"$work/err" || { cat "$work/err"; return 1; }
  done
  python3 - "$work/plain" "$work/q8" "$work/q4" <<'PY'
import json, sys
plain, q8, q4 = (json.load(open(path)) for path in sys.argv[1:])
assert plain["quantize"] == "none" and q8["quantize"] == "q8" and q4["quantize"] == "q4", (plain, q8, q4)
assert 0.45 < q8["weight_bytes"] / plain["weight_bytes"] < 0.6, (plain["weight_bytes"], q8["weight_bytes"])
assert 0.25 < q4["weight_bytes"] / plain["weight_bytes"] < 0.35, (plain["weight_bytes"], q4["weight_bytes"])
assert all(d["tokens_per_second"] > 0 for d in q4["decode"]), q4
PY
}
check bench_bounds_quantized_decode_by_the_quantized_bytes bench_quantized

# vlm-quant-accuracy: the stored weights against themselves are identical
# (KL 0, every argmax agrees); q8 moves the distributions less than q4.
accuracy="$(dirname "$vlm")/vlm-quant-accuracy"
measures_accuracy() {
  local golden="$source_dir/tests/goldens/qwen2"
  for q in none q8 q4; do
    "$accuracy" --model "$work/model" --quantize $q --greedy 4 "$golden/chat" "$golden/plain" >"$work/$q" \
      2>"$work/err" || { cat "$work/err"; return 1; }
  done
  python3 - "$work/none" "$work/q8" "$work/q4" <<'PY'
import json, sys
none, q8, q4 = (json.load(open(path)) for path in sys.argv[1:])
assert none["mean_kl"] == 0 and none["top1_agreement"] == 1 and none["greedy_same_before_divergence"] == 1, none
assert none["positions"] > 40 and none["cases"] == 2, none
assert 0 < q8["mean_kl"] < q4["mean_kl"], (q8, q4)
PY
}
# On the tokens of a llama.cpp --kl-divergence-base file (llama_kld_file.h):
# against a uniform base, the perplexity is the vocabulary size; the
# reference written back in that format and read again is itself up to the
# 16-bit log-probabilities; q4 against it is what q4 against the reference is.
measures_against_a_llama_base() {
  python3 - "$work/uniform.bin" <<'PY'
import math, random, struct, sys
n_ctx, vocab, chunks = 24, 512, 2
random.seed(7)
with open(sys.argv[1], "wb") as f:
    f.write(b"_logits_" + struct.pack("<Iii", n_ctx, vocab, chunks))
    f.write(struct.pack(f"<{n_ctx * chunks}i", *(random.randrange(vocab) for _ in range(n_ctx * chunks))))
    row = struct.pack("<ff", 0.0, -math.log(vocab)) + bytes(2 * vocab)
    f.write(row * ((n_ctx - 1 - n_ctx // 2) * chunks))
PY
  "$accuracy" --model "$work/model" --llama-base "$work/uniform.bin" --write-llama-base "$work/vlm.bin" \
    >"$work/uniform.json" 2>"$work/err" &&
  "$accuracy" --model "$work/model" --quantize q4 --llama-base "$work/vlm.bin" >"$work/q4.json" 2>>"$work/err" ||
    { cat "$work/err"; return 1; }
  printf 'not a base file' >"$work/bad.bin"
  ! "$accuracy" --model "$work/model" --llama-base "$work/bad.bin" >/dev/null 2>"$work/err" &&
    grep -q "not a llama.cpp --kl-divergence-base file" "$work/err" || { cat "$work/err"; return 1; }
  python3 - "$work/uniform.json" "$work/q4.json" <<'PY'
import json, math, sys
uniform, q4 = (json.load(open(path)) for path in sys.argv[1:])
u, b = uniform["llama_base"], q4["llama_base"]
assert uniform["positions"] == u["positions"] == 2 * 11 and uniform["cases"] == 2, uniform
assert abs(u["ppl_base"] / 512 - 1) < 1e-5 and u["kl_base_reference"] > 0.01, uniform
assert u["kl_base_reference"] == u["kl_base_candidate"] and uniform["mean_kl"] == 0, uniform
assert b["kl_base_reference"] < 1e-5 and abs(b["ppl_base"] / b["ppl_reference"] - 1) < 1e-3, q4
assert b["top1_base_reference"] == 1, q4
assert q4["mean_kl"] > 0 and abs(b["kl_base_candidate"] / q4["mean_kl"] - 1) < 0.05, q4
PY
}
if [ -x "$accuracy" ]; then
  check quant_accuracy_measures_kl_and_agreement measures_accuracy
  check quant_accuracy_measures_against_a_llama_base measures_against_a_llama_base
else
  check quant_accuracy_is_built false
fi

# Every kernel path this CPU can run, forced: the report names it and both
# probes measure on it (the FMA probe was AVX-512 only: AVX2 machines
# reported 0), and the debug log says which path the decoder chose.
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { for flag in "$@"; do [[ " $flags " == *" $flag "* ]] || return 1; done; }
paths="portable"
has avx2 fma f16c && paths="$paths avx2"
has avx512f avx512bw avx512vl avx512dq avx2 fma f16c && paths="$paths avx512"
bench_on_every_path() {
  for path in $paths; do
    VLM_CPU_PATH=$path "$vlm" --threads 1 --log-level debug bench --model "$work/model" --prefill 8 --decode-batch 1 \
      --steps 2 --repetitions 1 >"$work/out" 2>"$work/err" || { cat "$work/err"; return 1; }
    grep -q "kernel path $path (forced by VLM_CPU_PATH)" "$work/err" || { echo "no path line for $path"; cat "$work/err"; return 1; }
    python3 - "$work/out" "$path" <<'PY' || return 1
import json, sys
report = json.load(open(sys.argv[1]))
assert report["kernel_path"] == sys.argv[2], report
assert report["fma_peak_gflops"] > 0 and report["read_bandwidth_gb_per_s"] > 0, report
PY
  done
}
check bench_probes_and_names_every_path bench_on_every_path

# A path this CPU cannot run (or no path at all) is said, not ignored.
warns_about_unknown_path() {
  VLM_CPU_PATH=avx1024 "$vlm" --threads 1 bench --model "$work/model" --prefill 8 --decode-batch 1 --steps 2 \
    --repetitions 1 >/dev/null 2>"$work/err" && grep -q "VLM_CPU_PATH=avx1024 is not a kernel path" "$work/err"
}
check bench_warns_about_an_unknown_path warns_about_unknown_path

# --compare: both sides alternately (here the same build twice), every run
# kept, medians and b/a per metric.
compares_alternately() {
  "$vlm" --threads 1 bench --model "$work/model" --prefill 8 --decode-batch 1 --steps 2 --repetitions 1 \
    --compare "$vlm" --rounds 2 >"$work/out" 2>"$work/err" || { cat "$work/err"; return 1; }
  grep -q "compare round 2/2, side b" "$work/err" && python3 - "$work/out" <<'PY'
import json, sys
compare = json.load(open(sys.argv[1]))["compare"]
assert compare["rounds"] == 2 and len(compare["a"]["runs"]) == 2 and len(compare["b"]["runs"]) == 2, compare
assert all(run["prefill"][0]["tokens"] == 8 and run["threads"] == 1 for run in compare["a"]["runs"]), compare
median = compare["median"]["decode_1_tokens_per_second"]
assert median["a"] > 0 and median["b"] > 0 and median["b_over_a"] > 0, median
PY
}
check bench_compare_runs_both_sides_alternately compares_alternately

compare_refusals() {
  "$vlm" bench --model "$work/model" --prefill 8 --decode-batch 1 --steps 2 --repetitions 1 \
    --compare "$work/no-such-vlm" --rounds 1 >/dev/null 2>"$work/err"
  [ $? -eq 1 ] && grep -q "cannot run $work/no-such-vlm" "$work/err" || { cat "$work/err"; return 1; }
  "$vlm" bench --model "$work/model" --rounds 2 >/dev/null 2>"$work/err"
  [ $? -eq 2 ] && grep -q "rounds applies to --compare" "$work/err" || { cat "$work/err"; return 1; }
  "$vlm" bench --model "$work/model" --backend tpu >/dev/null 2>"$work/err"
  [ $? -eq 2 ] && grep -q "unknown backend 'tpu'" "$work/err"
}
check bench_compare_refuses_what_it_cannot_do compare_refusals

# --backend xla times the xla text decoder (compiled into a scratch cache
# for the run's geometry) and lists its module with the compile and load
# times; a second run takes the module from the cache (compile 0). Two
# threads: IREE's local-task workers (they once freed the bridge's Python
# buffers without the GIL at exit: a crash).
bench_on_xla() {
  export VLM_XLA_CACHE="$work/xla-cache"
  # CPython's own allocations at exit, under ASan (as run.sh does)
  export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$source_dir/tests/lsan_xla.supp:print_suppressions=0
  local run
  for run in first second; do
    "$vlm" --threads 2 --log-level info bench --model "$work/model" --backend xla --prefill 8,16 \
      --decode-batch 1,2 --steps 3 --repetitions 1 >"$work/out.$run" 2>"$work/err.$run" \
      || { cat "$work/err.$run"; return 1; }
  done
  grep -q "xla: compiled the text_decoder module in" "$work/err.first" || { cat "$work/err.first"; return 1; }
  grep -q "xla: text_decoder module from the cache" "$work/err.second" || { cat "$work/err.second"; return 1; }
  python3 - "$work/out.first" "$work/out.second" <<'PY'
import json, sys
first, second = (json.load(open(path)) for path in sys.argv[1:3])
for report in (first, second):
    assert report["backend"] == "xla", report
    assert [d["batch"] for d in report["decode"]] == [1, 2], report
    assert all(p["tokens_per_second"] > 0 for p in report["prefill"] + report["decode"]), report
    assert [m["name"] for m in report["modules"]] == ["text_decoder"], report
    module = report["modules"][0]
    # Every weight once, bf16: 2 layers x (q, o 128x128; k, v 64x128; gate,
    # up, down 256x128 (transposed); 2 norms 128; biases 128 + 64 + 64),
    # the final norm, and the tied table once (transposed, for the head and
    # the embedding).
    layer = 2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128 + 2 * 128 + 128 + 64 + 64
    assert module["weight_bytes"] == 2 * (2 * layer + 128 + 512 * 128), module
    assert module["load_seconds"] > 0, module
m1, m2 = first["modules"][0], second["modules"][0]
assert not m1["cached"] and m1["compile_seconds"] > 0, m1
assert m2["cached"] and m2["compile_seconds"] == 0, m2
PY
}
# --audio on xla lists the audio encoder's module next to the decoder's:
# the clip's length bucket (encoder rows 16, 32, .., 256, 500 or whole
# 500-row blocks, 8 frames each), compiled on the first call.
bench_audio_on_xla() {
  export VLM_XLA_CACHE="$work/xla-cache-audio"
  export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$source_dir/tests/lsan_xla.supp:print_suppressions=0
  "$vlm" --threads 2 bench --model "$source_dir/tests/models/phi4_multimodal" --backend xla --prefill 8 \
    --decode-batch 1 --steps 1 --repetitions 1 --audio "$fixtures_root/media/audio/speech_quick_fox_16k.flac" \
    >"$work/out.audio" 2>"$work/err.audio" || { cat "$work/err.audio"; return 1; }
  python3 - "$work/out.audio" <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
assert report["audio"]["encode_backend"] == "xla", report
names = [m["name"] for m in report["modules"]]
assert len(names) == 2 and names[0] == "text_decoder", names
rows = int(re.fullmatch(r"media_encoder\[rows=(\d+)\]", names[1]).group(1))
assert rows % 8 == 0 and (rows // 8 in (16, 32, 64, 128, 256, 500) or rows // 8 % 500 == 0), names
encoder = report["modules"][1]
assert not encoder["cached"] and encoder["compile_seconds"] > 0, encoder
PY
}
if [ -x "$source_dir/.venv-xla/bin/iree-compile" ]; then
  check bench_times_the_xla_decoder_and_its_compile bench_on_xla
  if have_fixtures bench_lists_the_audio_encoder_module; then
    check bench_lists_the_audio_encoder_module bench_audio_on_xla
  fi
else
  skip no-venv-xla bench_times_the_xla_decoder_and_its_compile "$source_dir/.venv-xla has no iree-compile"
  skip no-venv-xla bench_lists_the_audio_encoder_module "$source_dir/.venv-xla has no iree-compile"
fi

refuses_bad_lists() {
  "$vlm" bench --model "$work/model" --prefill 8,x >/dev/null 2>"$work/err"
  [ $? -eq 2 ] && grep -q "needs lengths like 128,512" "$work/err"
}
check bench_refuses_bad_lists refuses_bad_lists

finish
