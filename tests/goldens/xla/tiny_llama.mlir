// vlm text decoder: StableHLO emitted from the shared decoder graph
// (src/backends/xla/stablehlo_emitter.h describes the functions and layout).
module @vlm_text_decoder attributes {vlm.contract_version = 1 : i32, vlm.emitter_version = 2 : i32, vlm.compatibility_key_hash = "5c9fdfda11a771ed", vlm.compatibility_key = {contract_version = "1", emitter_version = "2", module = "text_decoder", model_type = "llama", config_hash = "c80345396a98558b", weights_signature = "a91eb50570581fcc", dtype = "compute=f32,weights=f32", capacity = "32", slots = "2", prefill_chunk = "8", position_mode = "rope-1d", mask_mode = "token_prefill=causal,embeddings_prefill=additive-bias", kv_layout = "global:f32[layers,2,slots,capacity+chunk,kv_heads,head_dim]", encoder_buckets = "none", side_inputs = "none"}} {
  util.global private @"model.embed_tokens.weight" = #stream.parameter.named<"model"::"model.embed_tokens.weight"> : tensor<512x128xf32>
  util.global private @"model.layers.0.input_layernorm.weight" = #stream.parameter.named<"model"::"model.layers.0.input_layernorm.weight"> : tensor<128xf32>
  util.global private @"model.layers.0.self_attn.q_proj.weight" = #stream.parameter.named<"model"::"model.layers.0.self_attn.q_proj.weight"> : tensor<128x128xf32>
  util.global private @"model.layers.0.self_attn.k_proj.weight" = #stream.parameter.named<"model"::"model.layers.0.self_attn.k_proj.weight"> : tensor<64x128xf32>
  util.global private @"model.layers.0.self_attn.v_proj.weight" = #stream.parameter.named<"model"::"model.layers.0.self_attn.v_proj.weight"> : tensor<64x128xf32>
  util.global private @"model.layers.0.self_attn.o_proj.weight" = #stream.parameter.named<"model"::"model.layers.0.self_attn.o_proj.weight"> : tensor<128x128xf32>
  util.global private @"model.layers.0.post_attention_layernorm.weight" = #stream.parameter.named<"model"::"model.layers.0.post_attention_layernorm.weight"> : tensor<128xf32>
  util.global private @"model.layers.0.mlp.gate_proj.weight" = #stream.parameter.named<"model"::"model.layers.0.mlp.gate_proj.weight"> : tensor<256x128xf32>
  util.global private @"model.layers.0.mlp.up_proj.weight" = #stream.parameter.named<"model"::"model.layers.0.mlp.up_proj.weight"> : tensor<256x128xf32>
  util.global private @"model.layers.0.mlp.down_proj.weight" = #stream.parameter.named<"model"::"model.layers.0.mlp.down_proj.weight"> : tensor<128x256xf32>
  util.global private @"model.layers.1.input_layernorm.weight" = #stream.parameter.named<"model"::"model.layers.1.input_layernorm.weight"> : tensor<128xf32>
  util.global private @"model.layers.1.self_attn.q_proj.weight" = #stream.parameter.named<"model"::"model.layers.1.self_attn.q_proj.weight"> : tensor<128x128xf32>
  util.global private @"model.layers.1.self_attn.k_proj.weight" = #stream.parameter.named<"model"::"model.layers.1.self_attn.k_proj.weight"> : tensor<64x128xf32>
  util.global private @"model.layers.1.self_attn.v_proj.weight" = #stream.parameter.named<"model"::"model.layers.1.self_attn.v_proj.weight"> : tensor<64x128xf32>
  util.global private @"model.layers.1.self_attn.o_proj.weight" = #stream.parameter.named<"model"::"model.layers.1.self_attn.o_proj.weight"> : tensor<128x128xf32>
  util.global private @"model.layers.1.post_attention_layernorm.weight" = #stream.parameter.named<"model"::"model.layers.1.post_attention_layernorm.weight"> : tensor<128xf32>
  util.global private @"model.layers.1.mlp.gate_proj.weight" = #stream.parameter.named<"model"::"model.layers.1.mlp.gate_proj.weight"> : tensor<256x128xf32>
  util.global private @"model.layers.1.mlp.up_proj.weight" = #stream.parameter.named<"model"::"model.layers.1.mlp.up_proj.weight"> : tensor<256x128xf32>
  util.global private @"model.layers.1.mlp.down_proj.weight" = #stream.parameter.named<"model"::"model.layers.1.mlp.down_proj.weight"> : tensor<128x256xf32>
  util.global private @"model.norm.weight" = #stream.parameter.named<"model"::"model.norm.weight"> : tensor<128xf32>
  util.global private @"lm_head.weight" = #stream.parameter.named<"model"::"lm_head.weight"> : tensor<512x128xf32>
  util.global private mutable @kv_cache = dense<0.0> : tensor<2x2x2x40x1x64xf32>

  func.func @token_prefill(%tokens: tensor<8xi32>, %valid_rows: tensor<i32>, %slot: tensor<i32>, %start: tensor<i32>) -> tensor<8x512xf32> {
    %t0 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<8xi32>
    %t1 = "stablehlo.broadcast_in_dim"(%start) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<8xi32>
    %t2 = "stablehlo.add"(%t0, %t1) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
    %t3 = "stablehlo.broadcast_in_dim"(%valid_rows) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<8xi32>
    %t4 = "stablehlo.compare"(%t0, %t3) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %t5 = "stablehlo.convert"(%t2) : (tensor<8xi32>) -> tensor<8xf32>
    %t6 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t7 = util.global.load @"model.embed_tokens.weight" : tensor<512x128xf32>
    %t8 = "stablehlo.reshape"(%tokens) : (tensor<8xi32>) -> tensor<8x1xi32>
    %t9 = "stablehlo.gather"(%t7, %t8) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 128>} : (tensor<512x128xf32>, tensor<8x1xi32>) -> tensor<8x128xf32>
    %t10 = util.global.load @"model.layers.0.input_layernorm.weight" : tensor<128xf32>
    %t11 = "stablehlo.multiply"(%t9, %t9) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t12 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t13 = "stablehlo.reduce"(%t11, %t12) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t14 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t15 = "stablehlo.divide"(%t13, %t14) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t16 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t17 = "stablehlo.add"(%t15, %t16) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t18 = "stablehlo.rsqrt"(%t17) : (tensor<8xf32>) -> tensor<8xf32>
    %t19 = "stablehlo.broadcast_in_dim"(%t18) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t20 = "stablehlo.multiply"(%t9, %t19) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t21 = "stablehlo.broadcast_in_dim"(%t10) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t22 = "stablehlo.multiply"(%t21, %t20) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t23 = util.global.load @"model.layers.0.self_attn.q_proj.weight" : tensor<128x128xf32>
    %t24 = "stablehlo.dot_general"(%t22, %t23) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t25 = util.global.load @"model.layers.0.self_attn.k_proj.weight" : tensor<64x128xf32>
    %t26 = "stablehlo.dot_general"(%t22, %t25) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<64x128xf32>) -> tensor<8x64xf32>
    %t27 = util.global.load @"model.layers.0.self_attn.v_proj.weight" : tensor<64x128xf32>
    %t28 = "stablehlo.dot_general"(%t22, %t27) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<64x128xf32>) -> tensor<8x64xf32>
    %t29 = "stablehlo.reshape"(%t24) : (tensor<8x128xf32>) -> tensor<8x2x64xf32>
    %t30 = "stablehlo.reshape"(%t26) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t31 = "stablehlo.reshape"(%t28) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t32 = "stablehlo.constant"() {value = dense<[1.000000000e+00, 7.498942018e-01, 5.623413324e-01, 4.216965139e-01, 3.162277639e-01, 2.371373624e-01, 1.778279394e-01, 1.333521456e-01, 1.000000015e-01, 7.498941571e-02, 5.623412877e-02, 4.216964915e-02, 3.162277862e-02, 2.371373586e-02, 1.778279431e-02, 1.333521493e-02, 9.999999776e-03, 7.498942316e-03, 5.623413250e-03, 4.216964822e-03, 3.162277862e-03, 2.371373819e-03, 1.778279431e-03, 1.333521446e-03, 1.000000047e-03, 7.498941850e-04, 5.623413017e-04, 4.216964880e-04, 3.162277862e-04, 2.371373848e-04, 1.778279402e-04, 1.333521504e-04]> : tensor<32xf32>} : () -> tensor<32xf32>
    %t33 = "stablehlo.broadcast_in_dim"(%t5) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x32xf32>
    %t34 = "stablehlo.broadcast_in_dim"(%t32) {broadcast_dimensions = array<i64: 1>} : (tensor<32xf32>) -> tensor<8x32xf32>
    %t35 = "stablehlo.multiply"(%t33, %t34) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %t36 = "stablehlo.cosine"(%t35) : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %t37 = "stablehlo.sine"(%t35) : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %t38 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t39 = "stablehlo.broadcast_in_dim"(%t37) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t40 = "stablehlo.slice"(%t29) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t41 = "stablehlo.slice"(%t29) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t42 = "stablehlo.multiply"(%t40, %t38) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t43 = "stablehlo.multiply"(%t41, %t39) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t44 = "stablehlo.subtract"(%t42, %t43) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t45 = "stablehlo.multiply"(%t41, %t38) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t46 = "stablehlo.multiply"(%t40, %t39) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t47 = "stablehlo.add"(%t45, %t46) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t48 = "stablehlo.concatenate"(%t44, %t47) {dimension = 2 : i64} : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x64xf32>
    %t49 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t50 = "stablehlo.broadcast_in_dim"(%t37) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t51 = "stablehlo.slice"(%t30) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t52 = "stablehlo.slice"(%t30) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t53 = "stablehlo.multiply"(%t51, %t49) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t54 = "stablehlo.multiply"(%t52, %t50) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t55 = "stablehlo.subtract"(%t53, %t54) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t56 = "stablehlo.multiply"(%t52, %t49) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t57 = "stablehlo.multiply"(%t51, %t50) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t58 = "stablehlo.add"(%t56, %t57) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t59 = "stablehlo.concatenate"(%t55, %t58) {dimension = 2 : i64} : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x64xf32>
    %t60 = util.global.load @kv_cache : tensor<2x2x2x40x1x64xf32>
    %t61 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t62 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t63 = "stablehlo.dynamic_slice"(%t60, %t61, %t62, %slot, %start, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 8, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x8x1x64xf32>
    %t64 = "stablehlo.reshape"(%t59) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t65 = "stablehlo.broadcast_in_dim"(%t4) {broadcast_dimensions = array<i64: 3>} : (tensor<8xi1>) -> tensor<1x1x1x8x1x64xi1>
    %t66 = "stablehlo.select"(%t65, %t64, %t63) : (tensor<1x1x1x8x1x64xi1>, tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t67 = "stablehlo.dynamic_update_slice"(%t60, %t66, %t61, %t62, %slot, %start, %t6, %t6) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x8x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t68 = "stablehlo.dynamic_slice"(%t67, %t61, %t62, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t69 = "stablehlo.reshape"(%t68) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t70 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t71 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t72 = "stablehlo.dynamic_slice"(%t67, %t70, %t71, %slot, %start, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 8, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x8x1x64xf32>
    %t73 = "stablehlo.reshape"(%t31) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t74 = "stablehlo.broadcast_in_dim"(%t4) {broadcast_dimensions = array<i64: 3>} : (tensor<8xi1>) -> tensor<1x1x1x8x1x64xi1>
    %t75 = "stablehlo.select"(%t74, %t73, %t72) : (tensor<1x1x1x8x1x64xi1>, tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t76 = "stablehlo.dynamic_update_slice"(%t67, %t75, %t70, %t71, %slot, %start, %t6, %t6) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x8x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t77 = "stablehlo.dynamic_slice"(%t76, %t70, %t71, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t78 = "stablehlo.reshape"(%t77) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t79 = "stablehlo.reshape"(%t48) : (tensor<8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t80 = "stablehlo.dot_general"(%t79, %t69) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<8x1x2x64xf32>, tensor<32x1x64xf32>) -> tensor<1x8x2x32xf32>
    %t81 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<1x8x2x32xf32>} : () -> tensor<1x8x2x32xf32>
    %t82 = "stablehlo.multiply"(%t80, %t81) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t83 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<8x32xi32>
    %t84 = "stablehlo.broadcast_in_dim"(%t2) {broadcast_dimensions = array<i64: 0>} : (tensor<8xi32>) -> tensor<8x32xi32>
    %t85 = "stablehlo.compare"(%t83, %t84) {comparison_direction = #stablehlo<comparison_direction LE>} : (tensor<8x32xi32>, tensor<8x32xi32>) -> tensor<8x32xi1>
    %t86 = "stablehlo.broadcast_in_dim"(%t85) {broadcast_dimensions = array<i64: 1, 3>} : (tensor<8x32xi1>) -> tensor<1x8x2x32xi1>
    %t87 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<1x8x2x32xf32>} : () -> tensor<1x8x2x32xf32>
    %t88 = "stablehlo.select"(%t86, %t82, %t87) : (tensor<1x8x2x32xi1>, tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t89 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t90 = "stablehlo.reduce"(%t88, %t89) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x32xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t91 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t92 = "stablehlo.maximum"(%t90, %t91) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t93 = "stablehlo.broadcast_in_dim"(%t92) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x32xf32>
    %t94 = "stablehlo.subtract"(%t88, %t93) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t95 = "stablehlo.exponential"(%t94) : (tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t96 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t97 = "stablehlo.reduce"(%t95, %t96) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x32xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t98 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t99 = "stablehlo.maximum"(%t97, %t98) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t100 = "stablehlo.broadcast_in_dim"(%t99) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x32xf32>
    %t101 = "stablehlo.divide"(%t95, %t100) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t102 = "stablehlo.dot_general"(%t101, %t78) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]>} : (tensor<1x8x2x32xf32>, tensor<32x1x64xf32>) -> tensor<1x8x2x64xf32>
    %t103 = "stablehlo.transpose"(%t102) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<1x8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t104 = "stablehlo.reshape"(%t103) : (tensor<8x1x2x64xf32>) -> tensor<8x128xf32>
    %t105 = util.global.load @"model.layers.0.self_attn.o_proj.weight" : tensor<128x128xf32>
    %t106 = "stablehlo.dot_general"(%t104, %t105) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t107 = "stablehlo.add"(%t9, %t106) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t108 = util.global.load @"model.layers.0.post_attention_layernorm.weight" : tensor<128xf32>
    %t109 = "stablehlo.multiply"(%t107, %t107) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t110 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t111 = "stablehlo.reduce"(%t109, %t110) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t112 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t113 = "stablehlo.divide"(%t111, %t112) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t114 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t115 = "stablehlo.add"(%t113, %t114) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t116 = "stablehlo.rsqrt"(%t115) : (tensor<8xf32>) -> tensor<8xf32>
    %t117 = "stablehlo.broadcast_in_dim"(%t116) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t118 = "stablehlo.multiply"(%t107, %t117) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t119 = "stablehlo.broadcast_in_dim"(%t108) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t120 = "stablehlo.multiply"(%t119, %t118) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t121 = util.global.load @"model.layers.0.mlp.gate_proj.weight" : tensor<256x128xf32>
    %t122 = "stablehlo.dot_general"(%t120, %t121) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<256x128xf32>) -> tensor<8x256xf32>
    %t123 = util.global.load @"model.layers.0.mlp.up_proj.weight" : tensor<256x128xf32>
    %t124 = "stablehlo.dot_general"(%t120, %t123) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<256x128xf32>) -> tensor<8x256xf32>
    %t125 = "stablehlo.negate"(%t122) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t126 = "stablehlo.exponential"(%t125) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t127 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<8x256xf32>} : () -> tensor<8x256xf32>
    %t128 = "stablehlo.add"(%t126, %t127) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t129 = "stablehlo.divide"(%t122, %t128) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t130 = "stablehlo.multiply"(%t129, %t124) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t131 = util.global.load @"model.layers.0.mlp.down_proj.weight" : tensor<128x256xf32>
    %t132 = "stablehlo.dot_general"(%t130, %t131) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x256xf32>, tensor<128x256xf32>) -> tensor<8x128xf32>
    %t133 = "stablehlo.add"(%t107, %t132) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t134 = util.global.load @"model.layers.1.input_layernorm.weight" : tensor<128xf32>
    %t135 = "stablehlo.multiply"(%t133, %t133) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t136 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t137 = "stablehlo.reduce"(%t135, %t136) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t138 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t139 = "stablehlo.divide"(%t137, %t138) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t140 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t141 = "stablehlo.add"(%t139, %t140) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t142 = "stablehlo.rsqrt"(%t141) : (tensor<8xf32>) -> tensor<8xf32>
    %t143 = "stablehlo.broadcast_in_dim"(%t142) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t144 = "stablehlo.multiply"(%t133, %t143) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t145 = "stablehlo.broadcast_in_dim"(%t134) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t146 = "stablehlo.multiply"(%t145, %t144) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t147 = util.global.load @"model.layers.1.self_attn.q_proj.weight" : tensor<128x128xf32>
    %t148 = "stablehlo.dot_general"(%t146, %t147) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t149 = util.global.load @"model.layers.1.self_attn.k_proj.weight" : tensor<64x128xf32>
    %t150 = "stablehlo.dot_general"(%t146, %t149) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<64x128xf32>) -> tensor<8x64xf32>
    %t151 = util.global.load @"model.layers.1.self_attn.v_proj.weight" : tensor<64x128xf32>
    %t152 = "stablehlo.dot_general"(%t146, %t151) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<64x128xf32>) -> tensor<8x64xf32>
    %t153 = "stablehlo.reshape"(%t148) : (tensor<8x128xf32>) -> tensor<8x2x64xf32>
    %t154 = "stablehlo.reshape"(%t150) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t155 = "stablehlo.reshape"(%t152) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t156 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t157 = "stablehlo.broadcast_in_dim"(%t37) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t158 = "stablehlo.slice"(%t153) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t159 = "stablehlo.slice"(%t153) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t160 = "stablehlo.multiply"(%t158, %t156) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t161 = "stablehlo.multiply"(%t159, %t157) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t162 = "stablehlo.subtract"(%t160, %t161) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t163 = "stablehlo.multiply"(%t159, %t156) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t164 = "stablehlo.multiply"(%t158, %t157) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t165 = "stablehlo.add"(%t163, %t164) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t166 = "stablehlo.concatenate"(%t162, %t165) {dimension = 2 : i64} : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x64xf32>
    %t167 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t168 = "stablehlo.broadcast_in_dim"(%t37) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t169 = "stablehlo.slice"(%t154) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t170 = "stablehlo.slice"(%t154) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t171 = "stablehlo.multiply"(%t169, %t167) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t172 = "stablehlo.multiply"(%t170, %t168) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t173 = "stablehlo.subtract"(%t171, %t172) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t174 = "stablehlo.multiply"(%t170, %t167) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t175 = "stablehlo.multiply"(%t169, %t168) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t176 = "stablehlo.add"(%t174, %t175) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t177 = "stablehlo.concatenate"(%t173, %t176) {dimension = 2 : i64} : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x64xf32>
    %t178 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t179 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t180 = "stablehlo.dynamic_slice"(%t76, %t178, %t179, %slot, %start, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 8, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x8x1x64xf32>
    %t181 = "stablehlo.reshape"(%t177) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t182 = "stablehlo.broadcast_in_dim"(%t4) {broadcast_dimensions = array<i64: 3>} : (tensor<8xi1>) -> tensor<1x1x1x8x1x64xi1>
    %t183 = "stablehlo.select"(%t182, %t181, %t180) : (tensor<1x1x1x8x1x64xi1>, tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t184 = "stablehlo.dynamic_update_slice"(%t76, %t183, %t178, %t179, %slot, %start, %t6, %t6) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x8x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t185 = "stablehlo.dynamic_slice"(%t184, %t178, %t179, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t186 = "stablehlo.reshape"(%t185) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t187 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t188 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t189 = "stablehlo.dynamic_slice"(%t184, %t187, %t188, %slot, %start, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 8, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x8x1x64xf32>
    %t190 = "stablehlo.reshape"(%t155) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t191 = "stablehlo.broadcast_in_dim"(%t4) {broadcast_dimensions = array<i64: 3>} : (tensor<8xi1>) -> tensor<1x1x1x8x1x64xi1>
    %t192 = "stablehlo.select"(%t191, %t190, %t189) : (tensor<1x1x1x8x1x64xi1>, tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t193 = "stablehlo.dynamic_update_slice"(%t184, %t192, %t187, %t188, %slot, %start, %t6, %t6) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x8x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t194 = "stablehlo.dynamic_slice"(%t193, %t187, %t188, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t195 = "stablehlo.reshape"(%t194) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t196 = "stablehlo.reshape"(%t166) : (tensor<8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t197 = "stablehlo.dot_general"(%t196, %t186) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<8x1x2x64xf32>, tensor<32x1x64xf32>) -> tensor<1x8x2x32xf32>
    %t198 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<1x8x2x32xf32>} : () -> tensor<1x8x2x32xf32>
    %t199 = "stablehlo.multiply"(%t197, %t198) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t200 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<8x32xi32>
    %t201 = "stablehlo.broadcast_in_dim"(%t2) {broadcast_dimensions = array<i64: 0>} : (tensor<8xi32>) -> tensor<8x32xi32>
    %t202 = "stablehlo.compare"(%t200, %t201) {comparison_direction = #stablehlo<comparison_direction LE>} : (tensor<8x32xi32>, tensor<8x32xi32>) -> tensor<8x32xi1>
    %t203 = "stablehlo.broadcast_in_dim"(%t202) {broadcast_dimensions = array<i64: 1, 3>} : (tensor<8x32xi1>) -> tensor<1x8x2x32xi1>
    %t204 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<1x8x2x32xf32>} : () -> tensor<1x8x2x32xf32>
    %t205 = "stablehlo.select"(%t203, %t199, %t204) : (tensor<1x8x2x32xi1>, tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t206 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t207 = "stablehlo.reduce"(%t205, %t206) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x32xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t208 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t209 = "stablehlo.maximum"(%t207, %t208) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t210 = "stablehlo.broadcast_in_dim"(%t209) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x32xf32>
    %t211 = "stablehlo.subtract"(%t205, %t210) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t212 = "stablehlo.exponential"(%t211) : (tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t213 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t214 = "stablehlo.reduce"(%t212, %t213) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x32xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t215 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t216 = "stablehlo.maximum"(%t214, %t215) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t217 = "stablehlo.broadcast_in_dim"(%t216) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x32xf32>
    %t218 = "stablehlo.divide"(%t212, %t217) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t219 = "stablehlo.dot_general"(%t218, %t195) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]>} : (tensor<1x8x2x32xf32>, tensor<32x1x64xf32>) -> tensor<1x8x2x64xf32>
    %t220 = "stablehlo.transpose"(%t219) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<1x8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t221 = "stablehlo.reshape"(%t220) : (tensor<8x1x2x64xf32>) -> tensor<8x128xf32>
    %t222 = util.global.load @"model.layers.1.self_attn.o_proj.weight" : tensor<128x128xf32>
    %t223 = "stablehlo.dot_general"(%t221, %t222) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t224 = "stablehlo.add"(%t133, %t223) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t225 = util.global.load @"model.layers.1.post_attention_layernorm.weight" : tensor<128xf32>
    %t226 = "stablehlo.multiply"(%t224, %t224) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t227 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t228 = "stablehlo.reduce"(%t226, %t227) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t229 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t230 = "stablehlo.divide"(%t228, %t229) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t231 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t232 = "stablehlo.add"(%t230, %t231) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t233 = "stablehlo.rsqrt"(%t232) : (tensor<8xf32>) -> tensor<8xf32>
    %t234 = "stablehlo.broadcast_in_dim"(%t233) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t235 = "stablehlo.multiply"(%t224, %t234) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t236 = "stablehlo.broadcast_in_dim"(%t225) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t237 = "stablehlo.multiply"(%t236, %t235) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t238 = util.global.load @"model.layers.1.mlp.gate_proj.weight" : tensor<256x128xf32>
    %t239 = "stablehlo.dot_general"(%t237, %t238) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<256x128xf32>) -> tensor<8x256xf32>
    %t240 = util.global.load @"model.layers.1.mlp.up_proj.weight" : tensor<256x128xf32>
    %t241 = "stablehlo.dot_general"(%t237, %t240) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<256x128xf32>) -> tensor<8x256xf32>
    %t242 = "stablehlo.negate"(%t239) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t243 = "stablehlo.exponential"(%t242) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t244 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<8x256xf32>} : () -> tensor<8x256xf32>
    %t245 = "stablehlo.add"(%t243, %t244) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t246 = "stablehlo.divide"(%t239, %t245) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t247 = "stablehlo.multiply"(%t246, %t241) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t248 = util.global.load @"model.layers.1.mlp.down_proj.weight" : tensor<128x256xf32>
    %t249 = "stablehlo.dot_general"(%t247, %t248) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x256xf32>, tensor<128x256xf32>) -> tensor<8x128xf32>
    %t250 = "stablehlo.add"(%t224, %t249) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t251 = util.global.load @"model.norm.weight" : tensor<128xf32>
    %t252 = "stablehlo.multiply"(%t250, %t250) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t253 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t254 = "stablehlo.reduce"(%t252, %t253) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t255 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t256 = "stablehlo.divide"(%t254, %t255) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t257 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t258 = "stablehlo.add"(%t256, %t257) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t259 = "stablehlo.rsqrt"(%t258) : (tensor<8xf32>) -> tensor<8xf32>
    %t260 = "stablehlo.broadcast_in_dim"(%t259) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t261 = "stablehlo.multiply"(%t250, %t260) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t262 = "stablehlo.broadcast_in_dim"(%t251) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t263 = "stablehlo.multiply"(%t262, %t261) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t264 = util.global.load @"lm_head.weight" : tensor<512x128xf32>
    %t265 = "stablehlo.dot_general"(%t263, %t264) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<512x128xf32>) -> tensor<8x512xf32>
    util.global.store %t193, @kv_cache : tensor<2x2x2x40x1x64xf32>
    return %t265 : tensor<8x512xf32>
  }

  func.func @embeddings_prefill(%embeddings: tensor<8x128xf32>, %positions: tensor<8xi32>, %bias: tensor<8x32xf32>, %valid_rows: tensor<i32>, %slot: tensor<i32>, %start: tensor<i32>) -> tensor<8x512xf32> {
    %t0 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<8xi32>
    %t1 = "stablehlo.broadcast_in_dim"(%start) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<8xi32>
    %t2 = "stablehlo.add"(%t0, %t1) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
    %t3 = "stablehlo.broadcast_in_dim"(%valid_rows) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<8xi32>
    %t4 = "stablehlo.compare"(%t0, %t3) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %t5 = "stablehlo.convert"(%positions) : (tensor<8xi32>) -> tensor<8xf32>
    %t6 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t7 = util.global.load @"model.layers.0.input_layernorm.weight" : tensor<128xf32>
    %t8 = "stablehlo.multiply"(%embeddings, %embeddings) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t9 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t10 = "stablehlo.reduce"(%t8, %t9) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t11 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t12 = "stablehlo.divide"(%t10, %t11) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t13 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t14 = "stablehlo.add"(%t12, %t13) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t15 = "stablehlo.rsqrt"(%t14) : (tensor<8xf32>) -> tensor<8xf32>
    %t16 = "stablehlo.broadcast_in_dim"(%t15) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t17 = "stablehlo.multiply"(%embeddings, %t16) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t18 = "stablehlo.broadcast_in_dim"(%t7) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t19 = "stablehlo.multiply"(%t18, %t17) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t20 = util.global.load @"model.layers.0.self_attn.q_proj.weight" : tensor<128x128xf32>
    %t21 = "stablehlo.dot_general"(%t19, %t20) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t22 = util.global.load @"model.layers.0.self_attn.k_proj.weight" : tensor<64x128xf32>
    %t23 = "stablehlo.dot_general"(%t19, %t22) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<64x128xf32>) -> tensor<8x64xf32>
    %t24 = util.global.load @"model.layers.0.self_attn.v_proj.weight" : tensor<64x128xf32>
    %t25 = "stablehlo.dot_general"(%t19, %t24) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<64x128xf32>) -> tensor<8x64xf32>
    %t26 = "stablehlo.reshape"(%t21) : (tensor<8x128xf32>) -> tensor<8x2x64xf32>
    %t27 = "stablehlo.reshape"(%t23) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t28 = "stablehlo.reshape"(%t25) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t29 = "stablehlo.constant"() {value = dense<[1.000000000e+00, 7.498942018e-01, 5.623413324e-01, 4.216965139e-01, 3.162277639e-01, 2.371373624e-01, 1.778279394e-01, 1.333521456e-01, 1.000000015e-01, 7.498941571e-02, 5.623412877e-02, 4.216964915e-02, 3.162277862e-02, 2.371373586e-02, 1.778279431e-02, 1.333521493e-02, 9.999999776e-03, 7.498942316e-03, 5.623413250e-03, 4.216964822e-03, 3.162277862e-03, 2.371373819e-03, 1.778279431e-03, 1.333521446e-03, 1.000000047e-03, 7.498941850e-04, 5.623413017e-04, 4.216964880e-04, 3.162277862e-04, 2.371373848e-04, 1.778279402e-04, 1.333521504e-04]> : tensor<32xf32>} : () -> tensor<32xf32>
    %t30 = "stablehlo.broadcast_in_dim"(%t5) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x32xf32>
    %t31 = "stablehlo.broadcast_in_dim"(%t29) {broadcast_dimensions = array<i64: 1>} : (tensor<32xf32>) -> tensor<8x32xf32>
    %t32 = "stablehlo.multiply"(%t30, %t31) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %t33 = "stablehlo.cosine"(%t32) : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %t34 = "stablehlo.sine"(%t32) : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %t35 = "stablehlo.broadcast_in_dim"(%t33) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t36 = "stablehlo.broadcast_in_dim"(%t34) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t37 = "stablehlo.slice"(%t26) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t38 = "stablehlo.slice"(%t26) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t39 = "stablehlo.multiply"(%t37, %t35) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t40 = "stablehlo.multiply"(%t38, %t36) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t41 = "stablehlo.subtract"(%t39, %t40) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t42 = "stablehlo.multiply"(%t38, %t35) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t43 = "stablehlo.multiply"(%t37, %t36) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t44 = "stablehlo.add"(%t42, %t43) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t45 = "stablehlo.concatenate"(%t41, %t44) {dimension = 2 : i64} : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x64xf32>
    %t46 = "stablehlo.broadcast_in_dim"(%t33) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t47 = "stablehlo.broadcast_in_dim"(%t34) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t48 = "stablehlo.slice"(%t27) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t49 = "stablehlo.slice"(%t27) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t50 = "stablehlo.multiply"(%t48, %t46) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t51 = "stablehlo.multiply"(%t49, %t47) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t52 = "stablehlo.subtract"(%t50, %t51) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t53 = "stablehlo.multiply"(%t49, %t46) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t54 = "stablehlo.multiply"(%t48, %t47) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t55 = "stablehlo.add"(%t53, %t54) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t56 = "stablehlo.concatenate"(%t52, %t55) {dimension = 2 : i64} : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x64xf32>
    %t57 = util.global.load @kv_cache : tensor<2x2x2x40x1x64xf32>
    %t58 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t59 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t60 = "stablehlo.dynamic_slice"(%t57, %t58, %t59, %slot, %start, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 8, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x8x1x64xf32>
    %t61 = "stablehlo.reshape"(%t56) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t62 = "stablehlo.broadcast_in_dim"(%t4) {broadcast_dimensions = array<i64: 3>} : (tensor<8xi1>) -> tensor<1x1x1x8x1x64xi1>
    %t63 = "stablehlo.select"(%t62, %t61, %t60) : (tensor<1x1x1x8x1x64xi1>, tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t64 = "stablehlo.dynamic_update_slice"(%t57, %t63, %t58, %t59, %slot, %start, %t6, %t6) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x8x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t65 = "stablehlo.dynamic_slice"(%t64, %t58, %t59, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t66 = "stablehlo.reshape"(%t65) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t67 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t68 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t69 = "stablehlo.dynamic_slice"(%t64, %t67, %t68, %slot, %start, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 8, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x8x1x64xf32>
    %t70 = "stablehlo.reshape"(%t28) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t71 = "stablehlo.broadcast_in_dim"(%t4) {broadcast_dimensions = array<i64: 3>} : (tensor<8xi1>) -> tensor<1x1x1x8x1x64xi1>
    %t72 = "stablehlo.select"(%t71, %t70, %t69) : (tensor<1x1x1x8x1x64xi1>, tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t73 = "stablehlo.dynamic_update_slice"(%t64, %t72, %t67, %t68, %slot, %start, %t6, %t6) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x8x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t74 = "stablehlo.dynamic_slice"(%t73, %t67, %t68, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t75 = "stablehlo.reshape"(%t74) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t76 = "stablehlo.reshape"(%t45) : (tensor<8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t77 = "stablehlo.dot_general"(%t76, %t66) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<8x1x2x64xf32>, tensor<32x1x64xf32>) -> tensor<1x8x2x32xf32>
    %t78 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<1x8x2x32xf32>} : () -> tensor<1x8x2x32xf32>
    %t79 = "stablehlo.multiply"(%t77, %t78) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t80 = "stablehlo.broadcast_in_dim"(%bias) {broadcast_dimensions = array<i64: 1, 3>} : (tensor<8x32xf32>) -> tensor<1x8x2x32xf32>
    %t81 = "stablehlo.add"(%t79, %t80) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t82 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t83 = "stablehlo.reduce"(%t81, %t82) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x32xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t84 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t85 = "stablehlo.maximum"(%t83, %t84) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t86 = "stablehlo.broadcast_in_dim"(%t85) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x32xf32>
    %t87 = "stablehlo.subtract"(%t81, %t86) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t88 = "stablehlo.exponential"(%t87) : (tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t89 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t90 = "stablehlo.reduce"(%t88, %t89) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x32xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t91 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t92 = "stablehlo.maximum"(%t90, %t91) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t93 = "stablehlo.broadcast_in_dim"(%t92) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x32xf32>
    %t94 = "stablehlo.divide"(%t88, %t93) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t95 = "stablehlo.dot_general"(%t94, %t75) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]>} : (tensor<1x8x2x32xf32>, tensor<32x1x64xf32>) -> tensor<1x8x2x64xf32>
    %t96 = "stablehlo.transpose"(%t95) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<1x8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t97 = "stablehlo.reshape"(%t96) : (tensor<8x1x2x64xf32>) -> tensor<8x128xf32>
    %t98 = util.global.load @"model.layers.0.self_attn.o_proj.weight" : tensor<128x128xf32>
    %t99 = "stablehlo.dot_general"(%t97, %t98) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t100 = "stablehlo.add"(%embeddings, %t99) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t101 = util.global.load @"model.layers.0.post_attention_layernorm.weight" : tensor<128xf32>
    %t102 = "stablehlo.multiply"(%t100, %t100) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t103 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t104 = "stablehlo.reduce"(%t102, %t103) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t105 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t106 = "stablehlo.divide"(%t104, %t105) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t107 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t108 = "stablehlo.add"(%t106, %t107) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t109 = "stablehlo.rsqrt"(%t108) : (tensor<8xf32>) -> tensor<8xf32>
    %t110 = "stablehlo.broadcast_in_dim"(%t109) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t111 = "stablehlo.multiply"(%t100, %t110) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t112 = "stablehlo.broadcast_in_dim"(%t101) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t113 = "stablehlo.multiply"(%t112, %t111) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t114 = util.global.load @"model.layers.0.mlp.gate_proj.weight" : tensor<256x128xf32>
    %t115 = "stablehlo.dot_general"(%t113, %t114) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<256x128xf32>) -> tensor<8x256xf32>
    %t116 = util.global.load @"model.layers.0.mlp.up_proj.weight" : tensor<256x128xf32>
    %t117 = "stablehlo.dot_general"(%t113, %t116) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<256x128xf32>) -> tensor<8x256xf32>
    %t118 = "stablehlo.negate"(%t115) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t119 = "stablehlo.exponential"(%t118) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t120 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<8x256xf32>} : () -> tensor<8x256xf32>
    %t121 = "stablehlo.add"(%t119, %t120) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t122 = "stablehlo.divide"(%t115, %t121) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t123 = "stablehlo.multiply"(%t122, %t117) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t124 = util.global.load @"model.layers.0.mlp.down_proj.weight" : tensor<128x256xf32>
    %t125 = "stablehlo.dot_general"(%t123, %t124) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x256xf32>, tensor<128x256xf32>) -> tensor<8x128xf32>
    %t126 = "stablehlo.add"(%t100, %t125) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t127 = util.global.load @"model.layers.1.input_layernorm.weight" : tensor<128xf32>
    %t128 = "stablehlo.multiply"(%t126, %t126) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t129 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t130 = "stablehlo.reduce"(%t128, %t129) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t131 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t132 = "stablehlo.divide"(%t130, %t131) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t133 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t134 = "stablehlo.add"(%t132, %t133) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t135 = "stablehlo.rsqrt"(%t134) : (tensor<8xf32>) -> tensor<8xf32>
    %t136 = "stablehlo.broadcast_in_dim"(%t135) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t137 = "stablehlo.multiply"(%t126, %t136) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t138 = "stablehlo.broadcast_in_dim"(%t127) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t139 = "stablehlo.multiply"(%t138, %t137) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t140 = util.global.load @"model.layers.1.self_attn.q_proj.weight" : tensor<128x128xf32>
    %t141 = "stablehlo.dot_general"(%t139, %t140) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t142 = util.global.load @"model.layers.1.self_attn.k_proj.weight" : tensor<64x128xf32>
    %t143 = "stablehlo.dot_general"(%t139, %t142) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<64x128xf32>) -> tensor<8x64xf32>
    %t144 = util.global.load @"model.layers.1.self_attn.v_proj.weight" : tensor<64x128xf32>
    %t145 = "stablehlo.dot_general"(%t139, %t144) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<64x128xf32>) -> tensor<8x64xf32>
    %t146 = "stablehlo.reshape"(%t141) : (tensor<8x128xf32>) -> tensor<8x2x64xf32>
    %t147 = "stablehlo.reshape"(%t143) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t148 = "stablehlo.reshape"(%t145) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t149 = "stablehlo.broadcast_in_dim"(%t33) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t150 = "stablehlo.broadcast_in_dim"(%t34) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t151 = "stablehlo.slice"(%t146) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t152 = "stablehlo.slice"(%t146) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t153 = "stablehlo.multiply"(%t151, %t149) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t154 = "stablehlo.multiply"(%t152, %t150) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t155 = "stablehlo.subtract"(%t153, %t154) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t156 = "stablehlo.multiply"(%t152, %t149) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t157 = "stablehlo.multiply"(%t151, %t150) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t158 = "stablehlo.add"(%t156, %t157) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t159 = "stablehlo.concatenate"(%t155, %t158) {dimension = 2 : i64} : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x64xf32>
    %t160 = "stablehlo.broadcast_in_dim"(%t33) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t161 = "stablehlo.broadcast_in_dim"(%t34) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t162 = "stablehlo.slice"(%t147) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t163 = "stablehlo.slice"(%t147) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t164 = "stablehlo.multiply"(%t162, %t160) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t165 = "stablehlo.multiply"(%t163, %t161) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t166 = "stablehlo.subtract"(%t164, %t165) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t167 = "stablehlo.multiply"(%t163, %t160) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t168 = "stablehlo.multiply"(%t162, %t161) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t169 = "stablehlo.add"(%t167, %t168) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t170 = "stablehlo.concatenate"(%t166, %t169) {dimension = 2 : i64} : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x64xf32>
    %t171 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t172 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t173 = "stablehlo.dynamic_slice"(%t73, %t171, %t172, %slot, %start, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 8, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x8x1x64xf32>
    %t174 = "stablehlo.reshape"(%t170) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t175 = "stablehlo.broadcast_in_dim"(%t4) {broadcast_dimensions = array<i64: 3>} : (tensor<8xi1>) -> tensor<1x1x1x8x1x64xi1>
    %t176 = "stablehlo.select"(%t175, %t174, %t173) : (tensor<1x1x1x8x1x64xi1>, tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t177 = "stablehlo.dynamic_update_slice"(%t73, %t176, %t171, %t172, %slot, %start, %t6, %t6) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x8x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t178 = "stablehlo.dynamic_slice"(%t177, %t171, %t172, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t179 = "stablehlo.reshape"(%t178) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t180 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t181 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t182 = "stablehlo.dynamic_slice"(%t177, %t180, %t181, %slot, %start, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 8, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x8x1x64xf32>
    %t183 = "stablehlo.reshape"(%t148) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t184 = "stablehlo.broadcast_in_dim"(%t4) {broadcast_dimensions = array<i64: 3>} : (tensor<8xi1>) -> tensor<1x1x1x8x1x64xi1>
    %t185 = "stablehlo.select"(%t184, %t183, %t182) : (tensor<1x1x1x8x1x64xi1>, tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t186 = "stablehlo.dynamic_update_slice"(%t177, %t185, %t180, %t181, %slot, %start, %t6, %t6) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x8x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t187 = "stablehlo.dynamic_slice"(%t186, %t180, %t181, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t188 = "stablehlo.reshape"(%t187) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t189 = "stablehlo.reshape"(%t159) : (tensor<8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t190 = "stablehlo.dot_general"(%t189, %t179) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<8x1x2x64xf32>, tensor<32x1x64xf32>) -> tensor<1x8x2x32xf32>
    %t191 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<1x8x2x32xf32>} : () -> tensor<1x8x2x32xf32>
    %t192 = "stablehlo.multiply"(%t190, %t191) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t193 = "stablehlo.broadcast_in_dim"(%bias) {broadcast_dimensions = array<i64: 1, 3>} : (tensor<8x32xf32>) -> tensor<1x8x2x32xf32>
    %t194 = "stablehlo.add"(%t192, %t193) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t195 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t196 = "stablehlo.reduce"(%t194, %t195) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x32xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t197 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t198 = "stablehlo.maximum"(%t196, %t197) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t199 = "stablehlo.broadcast_in_dim"(%t198) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x32xf32>
    %t200 = "stablehlo.subtract"(%t194, %t199) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t201 = "stablehlo.exponential"(%t200) : (tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t202 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t203 = "stablehlo.reduce"(%t201, %t202) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x32xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t204 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t205 = "stablehlo.maximum"(%t203, %t204) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t206 = "stablehlo.broadcast_in_dim"(%t205) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x32xf32>
    %t207 = "stablehlo.divide"(%t201, %t206) : (tensor<1x8x2x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x2x32xf32>
    %t208 = "stablehlo.dot_general"(%t207, %t188) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]>} : (tensor<1x8x2x32xf32>, tensor<32x1x64xf32>) -> tensor<1x8x2x64xf32>
    %t209 = "stablehlo.transpose"(%t208) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<1x8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t210 = "stablehlo.reshape"(%t209) : (tensor<8x1x2x64xf32>) -> tensor<8x128xf32>
    %t211 = util.global.load @"model.layers.1.self_attn.o_proj.weight" : tensor<128x128xf32>
    %t212 = "stablehlo.dot_general"(%t210, %t211) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t213 = "stablehlo.add"(%t126, %t212) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t214 = util.global.load @"model.layers.1.post_attention_layernorm.weight" : tensor<128xf32>
    %t215 = "stablehlo.multiply"(%t213, %t213) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t216 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t217 = "stablehlo.reduce"(%t215, %t216) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t218 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t219 = "stablehlo.divide"(%t217, %t218) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t220 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t221 = "stablehlo.add"(%t219, %t220) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t222 = "stablehlo.rsqrt"(%t221) : (tensor<8xf32>) -> tensor<8xf32>
    %t223 = "stablehlo.broadcast_in_dim"(%t222) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t224 = "stablehlo.multiply"(%t213, %t223) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t225 = "stablehlo.broadcast_in_dim"(%t214) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t226 = "stablehlo.multiply"(%t225, %t224) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t227 = util.global.load @"model.layers.1.mlp.gate_proj.weight" : tensor<256x128xf32>
    %t228 = "stablehlo.dot_general"(%t226, %t227) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<256x128xf32>) -> tensor<8x256xf32>
    %t229 = util.global.load @"model.layers.1.mlp.up_proj.weight" : tensor<256x128xf32>
    %t230 = "stablehlo.dot_general"(%t226, %t229) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<256x128xf32>) -> tensor<8x256xf32>
    %t231 = "stablehlo.negate"(%t228) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t232 = "stablehlo.exponential"(%t231) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t233 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<8x256xf32>} : () -> tensor<8x256xf32>
    %t234 = "stablehlo.add"(%t232, %t233) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t235 = "stablehlo.divide"(%t228, %t234) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t236 = "stablehlo.multiply"(%t235, %t230) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t237 = util.global.load @"model.layers.1.mlp.down_proj.weight" : tensor<128x256xf32>
    %t238 = "stablehlo.dot_general"(%t236, %t237) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x256xf32>, tensor<128x256xf32>) -> tensor<8x128xf32>
    %t239 = "stablehlo.add"(%t213, %t238) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t240 = util.global.load @"model.norm.weight" : tensor<128xf32>
    %t241 = "stablehlo.multiply"(%t239, %t239) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t242 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t243 = "stablehlo.reduce"(%t241, %t242) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t244 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t245 = "stablehlo.divide"(%t243, %t244) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t246 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t247 = "stablehlo.add"(%t245, %t246) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t248 = "stablehlo.rsqrt"(%t247) : (tensor<8xf32>) -> tensor<8xf32>
    %t249 = "stablehlo.broadcast_in_dim"(%t248) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t250 = "stablehlo.multiply"(%t239, %t249) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t251 = "stablehlo.broadcast_in_dim"(%t240) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t252 = "stablehlo.multiply"(%t251, %t250) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t253 = util.global.load @"lm_head.weight" : tensor<512x128xf32>
    %t254 = "stablehlo.dot_general"(%t252, %t253) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<8x128xf32>, tensor<512x128xf32>) -> tensor<8x512xf32>
    util.global.store %t186, @kv_cache : tensor<2x2x2x40x1x64xf32>
    return %t254 : tensor<8x512xf32>
  }

  func.func @decode(%tokens: tensor<2xi32>, %positions: tensor<2xi32>, %active: tensor<2xi32>) -> tensor<2x512xf32> {
    %t0 = "stablehlo.convert"(%positions) : (tensor<2xi32>) -> tensor<2xf32>
    %t1 = "stablehlo.constant"() {value = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
    %t2 = "stablehlo.compare"(%active, %t1) {comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %t3 = "stablehlo.constant"() {value = dense<32> : tensor<2xi32>} : () -> tensor<2xi32>
    %t4 = "stablehlo.select"(%t2, %positions, %t3) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %t5 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t6 = util.global.load @"model.embed_tokens.weight" : tensor<512x128xf32>
    %t7 = "stablehlo.reshape"(%tokens) : (tensor<2xi32>) -> tensor<2x1xi32>
    %t8 = "stablehlo.gather"(%t6, %t7) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 128>} : (tensor<512x128xf32>, tensor<2x1xi32>) -> tensor<2x128xf32>
    %t9 = util.global.load @"model.layers.0.input_layernorm.weight" : tensor<128xf32>
    %t10 = "stablehlo.multiply"(%t8, %t8) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t11 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t12 = "stablehlo.reduce"(%t10, %t11) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t13 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t14 = "stablehlo.divide"(%t12, %t13) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t15 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t16 = "stablehlo.add"(%t14, %t15) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t17 = "stablehlo.rsqrt"(%t16) : (tensor<2xf32>) -> tensor<2xf32>
    %t18 = "stablehlo.broadcast_in_dim"(%t17) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t19 = "stablehlo.multiply"(%t8, %t18) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t20 = "stablehlo.broadcast_in_dim"(%t9) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t21 = "stablehlo.multiply"(%t20, %t19) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t22 = util.global.load @"model.layers.0.self_attn.q_proj.weight" : tensor<128x128xf32>
    %t23 = "stablehlo.dot_general"(%t21, %t22) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t24 = util.global.load @"model.layers.0.self_attn.k_proj.weight" : tensor<64x128xf32>
    %t25 = "stablehlo.dot_general"(%t21, %t24) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<64x128xf32>) -> tensor<2x64xf32>
    %t26 = util.global.load @"model.layers.0.self_attn.v_proj.weight" : tensor<64x128xf32>
    %t27 = "stablehlo.dot_general"(%t21, %t26) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<64x128xf32>) -> tensor<2x64xf32>
    %t28 = "stablehlo.reshape"(%t23) : (tensor<2x128xf32>) -> tensor<2x2x64xf32>
    %t29 = "stablehlo.reshape"(%t25) : (tensor<2x64xf32>) -> tensor<2x1x64xf32>
    %t30 = "stablehlo.reshape"(%t27) : (tensor<2x64xf32>) -> tensor<2x1x64xf32>
    %t31 = "stablehlo.constant"() {value = dense<[1.000000000e+00, 7.498942018e-01, 5.623413324e-01, 4.216965139e-01, 3.162277639e-01, 2.371373624e-01, 1.778279394e-01, 1.333521456e-01, 1.000000015e-01, 7.498941571e-02, 5.623412877e-02, 4.216964915e-02, 3.162277862e-02, 2.371373586e-02, 1.778279431e-02, 1.333521493e-02, 9.999999776e-03, 7.498942316e-03, 5.623413250e-03, 4.216964822e-03, 3.162277862e-03, 2.371373819e-03, 1.778279431e-03, 1.333521446e-03, 1.000000047e-03, 7.498941850e-04, 5.623413017e-04, 4.216964880e-04, 3.162277862e-04, 2.371373848e-04, 1.778279402e-04, 1.333521504e-04]> : tensor<32xf32>} : () -> tensor<32xf32>
    %t32 = "stablehlo.broadcast_in_dim"(%t0) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x32xf32>
    %t33 = "stablehlo.broadcast_in_dim"(%t31) {broadcast_dimensions = array<i64: 1>} : (tensor<32xf32>) -> tensor<2x32xf32>
    %t34 = "stablehlo.multiply"(%t32, %t33) : (tensor<2x32xf32>, tensor<2x32xf32>) -> tensor<2x32xf32>
    %t35 = "stablehlo.cosine"(%t34) : (tensor<2x32xf32>) -> tensor<2x32xf32>
    %t36 = "stablehlo.sine"(%t34) : (tensor<2x32xf32>) -> tensor<2x32xf32>
    %t37 = "stablehlo.broadcast_in_dim"(%t35) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x2x32xf32>
    %t38 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x2x32xf32>
    %t39 = "stablehlo.slice"(%t28) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<2x2x64xf32>) -> tensor<2x2x32xf32>
    %t40 = "stablehlo.slice"(%t28) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 2, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x2x64xf32>) -> tensor<2x2x32xf32>
    %t41 = "stablehlo.multiply"(%t39, %t37) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t42 = "stablehlo.multiply"(%t40, %t38) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t43 = "stablehlo.subtract"(%t41, %t42) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t44 = "stablehlo.multiply"(%t40, %t37) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t45 = "stablehlo.multiply"(%t39, %t38) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t46 = "stablehlo.add"(%t44, %t45) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t47 = "stablehlo.concatenate"(%t43, %t46) {dimension = 2 : i64} : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x64xf32>
    %t48 = "stablehlo.broadcast_in_dim"(%t35) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x1x32xf32>
    %t49 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x1x32xf32>
    %t50 = "stablehlo.slice"(%t29) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<2x1x32xf32>
    %t51 = "stablehlo.slice"(%t29) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 2, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<2x1x32xf32>
    %t52 = "stablehlo.multiply"(%t50, %t48) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t53 = "stablehlo.multiply"(%t51, %t49) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t54 = "stablehlo.subtract"(%t52, %t53) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t55 = "stablehlo.multiply"(%t51, %t48) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t56 = "stablehlo.multiply"(%t50, %t49) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t57 = "stablehlo.add"(%t55, %t56) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t58 = "stablehlo.concatenate"(%t54, %t57) {dimension = 2 : i64} : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x64xf32>
    %t59 = util.global.load @kv_cache : tensor<2x2x2x40x1x64xf32>
    %t60 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t61 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t62 = "stablehlo.slice"(%t58) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<1x1x64xf32>
    %t63 = "stablehlo.reshape"(%t62) : (tensor<1x1x64xf32>) -> tensor<1x1x1x1x1x64xf32>
    %t64 = "stablehlo.slice"(%t4) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t65 = "stablehlo.reshape"(%t64) : (tensor<1xi32>) -> tensor<i32>
    %t66 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t67 = "stablehlo.dynamic_update_slice"(%t59, %t63, %t60, %t61, %t66, %t65, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t68 = "stablehlo.slice"(%t58) {start_indices = array<i64: 1, 0, 0>, limit_indices = array<i64: 2, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<1x1x64xf32>
    %t69 = "stablehlo.reshape"(%t68) : (tensor<1x1x64xf32>) -> tensor<1x1x1x1x1x64xf32>
    %t70 = "stablehlo.slice"(%t4) {start_indices = array<i64: 1>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t71 = "stablehlo.reshape"(%t70) : (tensor<1xi32>) -> tensor<i32>
    %t72 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t73 = "stablehlo.dynamic_update_slice"(%t67, %t69, %t60, %t61, %t72, %t71, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t74 = "stablehlo.slice"(%t73) {start_indices = array<i64: 0, 0, 0, 0, 0, 0>, limit_indices = array<i64: 1, 1, 2, 32, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x32x1x64xf32>
    %t75 = "stablehlo.reshape"(%t74) : (tensor<1x1x2x32x1x64xf32>) -> tensor<2x32x1x64xf32>
    %t76 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t77 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t78 = "stablehlo.slice"(%t30) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<1x1x64xf32>
    %t79 = "stablehlo.reshape"(%t78) : (tensor<1x1x64xf32>) -> tensor<1x1x1x1x1x64xf32>
    %t80 = "stablehlo.slice"(%t4) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t81 = "stablehlo.reshape"(%t80) : (tensor<1xi32>) -> tensor<i32>
    %t82 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t83 = "stablehlo.dynamic_update_slice"(%t73, %t79, %t76, %t77, %t82, %t81, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t84 = "stablehlo.slice"(%t30) {start_indices = array<i64: 1, 0, 0>, limit_indices = array<i64: 2, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<1x1x64xf32>
    %t85 = "stablehlo.reshape"(%t84) : (tensor<1x1x64xf32>) -> tensor<1x1x1x1x1x64xf32>
    %t86 = "stablehlo.slice"(%t4) {start_indices = array<i64: 1>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t87 = "stablehlo.reshape"(%t86) : (tensor<1xi32>) -> tensor<i32>
    %t88 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t89 = "stablehlo.dynamic_update_slice"(%t83, %t85, %t76, %t77, %t88, %t87, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t90 = "stablehlo.slice"(%t89) {start_indices = array<i64: 0, 1, 0, 0, 0, 0>, limit_indices = array<i64: 1, 2, 2, 32, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x32x1x64xf32>
    %t91 = "stablehlo.reshape"(%t90) : (tensor<1x1x2x32x1x64xf32>) -> tensor<2x32x1x64xf32>
    %t92 = "stablehlo.reshape"(%t47) : (tensor<2x2x64xf32>) -> tensor<2x1x2x64xf32>
    %t93 = "stablehlo.dot_general"(%t92, %t75) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x1x2x64xf32>, tensor<2x32x1x64xf32>) -> tensor<2x1x2x32xf32>
    %t94 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<2x1x2x32xf32>} : () -> tensor<2x1x2x32xf32>
    %t95 = "stablehlo.multiply"(%t93, %t94) : (tensor<2x1x2x32xf32>, tensor<2x1x2x32xf32>) -> tensor<2x1x2x32xf32>
    %t96 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x32xi32>
    %t97 = "stablehlo.broadcast_in_dim"(%positions) {broadcast_dimensions = array<i64: 0>} : (tensor<2xi32>) -> tensor<2x32xi32>
    %t98 = "stablehlo.compare"(%t96, %t97) {comparison_direction = #stablehlo<comparison_direction LE>} : (tensor<2x32xi32>, tensor<2x32xi32>) -> tensor<2x32xi1>
    %t99 = "stablehlo.broadcast_in_dim"(%t98) {broadcast_dimensions = array<i64: 0, 3>} : (tensor<2x32xi1>) -> tensor<2x1x2x32xi1>
    %t100 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<2x1x2x32xf32>} : () -> tensor<2x1x2x32xf32>
    %t101 = "stablehlo.select"(%t99, %t95, %t100) : (tensor<2x1x2x32xi1>, tensor<2x1x2x32xf32>, tensor<2x1x2x32xf32>) -> tensor<2x1x2x32xf32>
    %t102 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t103 = "stablehlo.reduce"(%t101, %t102) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x32xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t104 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t105 = "stablehlo.maximum"(%t103, %t104) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t106 = "stablehlo.broadcast_in_dim"(%t105) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x32xf32>
    %t107 = "stablehlo.subtract"(%t101, %t106) : (tensor<2x1x2x32xf32>, tensor<2x1x2x32xf32>) -> tensor<2x1x2x32xf32>
    %t108 = "stablehlo.exponential"(%t107) : (tensor<2x1x2x32xf32>) -> tensor<2x1x2x32xf32>
    %t109 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t110 = "stablehlo.reduce"(%t108, %t109) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x32xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t111 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t112 = "stablehlo.maximum"(%t110, %t111) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t113 = "stablehlo.broadcast_in_dim"(%t112) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x32xf32>
    %t114 = "stablehlo.divide"(%t108, %t113) : (tensor<2x1x2x32xf32>, tensor<2x1x2x32xf32>) -> tensor<2x1x2x32xf32>
    %t115 = "stablehlo.dot_general"(%t114, %t91) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>} : (tensor<2x1x2x32xf32>, tensor<2x32x1x64xf32>) -> tensor<2x1x2x64xf32>
    %t116 = "stablehlo.reshape"(%t115) : (tensor<2x1x2x64xf32>) -> tensor<2x128xf32>
    %t117 = util.global.load @"model.layers.0.self_attn.o_proj.weight" : tensor<128x128xf32>
    %t118 = "stablehlo.dot_general"(%t116, %t117) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t119 = "stablehlo.add"(%t8, %t118) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t120 = util.global.load @"model.layers.0.post_attention_layernorm.weight" : tensor<128xf32>
    %t121 = "stablehlo.multiply"(%t119, %t119) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t122 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t123 = "stablehlo.reduce"(%t121, %t122) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t124 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t125 = "stablehlo.divide"(%t123, %t124) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t126 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t127 = "stablehlo.add"(%t125, %t126) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t128 = "stablehlo.rsqrt"(%t127) : (tensor<2xf32>) -> tensor<2xf32>
    %t129 = "stablehlo.broadcast_in_dim"(%t128) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t130 = "stablehlo.multiply"(%t119, %t129) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t131 = "stablehlo.broadcast_in_dim"(%t120) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t132 = "stablehlo.multiply"(%t131, %t130) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t133 = util.global.load @"model.layers.0.mlp.gate_proj.weight" : tensor<256x128xf32>
    %t134 = "stablehlo.dot_general"(%t132, %t133) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<256x128xf32>) -> tensor<2x256xf32>
    %t135 = util.global.load @"model.layers.0.mlp.up_proj.weight" : tensor<256x128xf32>
    %t136 = "stablehlo.dot_general"(%t132, %t135) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<256x128xf32>) -> tensor<2x256xf32>
    %t137 = "stablehlo.negate"(%t134) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t138 = "stablehlo.exponential"(%t137) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t139 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<2x256xf32>} : () -> tensor<2x256xf32>
    %t140 = "stablehlo.add"(%t138, %t139) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t141 = "stablehlo.divide"(%t134, %t140) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t142 = "stablehlo.multiply"(%t141, %t136) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t143 = util.global.load @"model.layers.0.mlp.down_proj.weight" : tensor<128x256xf32>
    %t144 = "stablehlo.dot_general"(%t142, %t143) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x256xf32>, tensor<128x256xf32>) -> tensor<2x128xf32>
    %t145 = "stablehlo.add"(%t119, %t144) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t146 = util.global.load @"model.layers.1.input_layernorm.weight" : tensor<128xf32>
    %t147 = "stablehlo.multiply"(%t145, %t145) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t148 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t149 = "stablehlo.reduce"(%t147, %t148) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t150 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t151 = "stablehlo.divide"(%t149, %t150) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t152 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t153 = "stablehlo.add"(%t151, %t152) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t154 = "stablehlo.rsqrt"(%t153) : (tensor<2xf32>) -> tensor<2xf32>
    %t155 = "stablehlo.broadcast_in_dim"(%t154) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t156 = "stablehlo.multiply"(%t145, %t155) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t157 = "stablehlo.broadcast_in_dim"(%t146) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t158 = "stablehlo.multiply"(%t157, %t156) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t159 = util.global.load @"model.layers.1.self_attn.q_proj.weight" : tensor<128x128xf32>
    %t160 = "stablehlo.dot_general"(%t158, %t159) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t161 = util.global.load @"model.layers.1.self_attn.k_proj.weight" : tensor<64x128xf32>
    %t162 = "stablehlo.dot_general"(%t158, %t161) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<64x128xf32>) -> tensor<2x64xf32>
    %t163 = util.global.load @"model.layers.1.self_attn.v_proj.weight" : tensor<64x128xf32>
    %t164 = "stablehlo.dot_general"(%t158, %t163) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<64x128xf32>) -> tensor<2x64xf32>
    %t165 = "stablehlo.reshape"(%t160) : (tensor<2x128xf32>) -> tensor<2x2x64xf32>
    %t166 = "stablehlo.reshape"(%t162) : (tensor<2x64xf32>) -> tensor<2x1x64xf32>
    %t167 = "stablehlo.reshape"(%t164) : (tensor<2x64xf32>) -> tensor<2x1x64xf32>
    %t168 = "stablehlo.broadcast_in_dim"(%t35) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x2x32xf32>
    %t169 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x2x32xf32>
    %t170 = "stablehlo.slice"(%t165) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<2x2x64xf32>) -> tensor<2x2x32xf32>
    %t171 = "stablehlo.slice"(%t165) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 2, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x2x64xf32>) -> tensor<2x2x32xf32>
    %t172 = "stablehlo.multiply"(%t170, %t168) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t173 = "stablehlo.multiply"(%t171, %t169) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t174 = "stablehlo.subtract"(%t172, %t173) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t175 = "stablehlo.multiply"(%t171, %t168) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t176 = "stablehlo.multiply"(%t170, %t169) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t177 = "stablehlo.add"(%t175, %t176) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t178 = "stablehlo.concatenate"(%t174, %t177) {dimension = 2 : i64} : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x64xf32>
    %t179 = "stablehlo.broadcast_in_dim"(%t35) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x1x32xf32>
    %t180 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x1x32xf32>
    %t181 = "stablehlo.slice"(%t166) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<2x1x32xf32>
    %t182 = "stablehlo.slice"(%t166) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 2, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<2x1x32xf32>
    %t183 = "stablehlo.multiply"(%t181, %t179) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t184 = "stablehlo.multiply"(%t182, %t180) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t185 = "stablehlo.subtract"(%t183, %t184) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t186 = "stablehlo.multiply"(%t182, %t179) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t187 = "stablehlo.multiply"(%t181, %t180) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t188 = "stablehlo.add"(%t186, %t187) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t189 = "stablehlo.concatenate"(%t185, %t188) {dimension = 2 : i64} : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x64xf32>
    %t190 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t191 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t192 = "stablehlo.slice"(%t189) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<1x1x64xf32>
    %t193 = "stablehlo.reshape"(%t192) : (tensor<1x1x64xf32>) -> tensor<1x1x1x1x1x64xf32>
    %t194 = "stablehlo.slice"(%t4) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t195 = "stablehlo.reshape"(%t194) : (tensor<1xi32>) -> tensor<i32>
    %t196 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t197 = "stablehlo.dynamic_update_slice"(%t89, %t193, %t190, %t191, %t196, %t195, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t198 = "stablehlo.slice"(%t189) {start_indices = array<i64: 1, 0, 0>, limit_indices = array<i64: 2, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<1x1x64xf32>
    %t199 = "stablehlo.reshape"(%t198) : (tensor<1x1x64xf32>) -> tensor<1x1x1x1x1x64xf32>
    %t200 = "stablehlo.slice"(%t4) {start_indices = array<i64: 1>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t201 = "stablehlo.reshape"(%t200) : (tensor<1xi32>) -> tensor<i32>
    %t202 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t203 = "stablehlo.dynamic_update_slice"(%t197, %t199, %t190, %t191, %t202, %t201, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t204 = "stablehlo.slice"(%t203) {start_indices = array<i64: 1, 0, 0, 0, 0, 0>, limit_indices = array<i64: 2, 1, 2, 32, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x32x1x64xf32>
    %t205 = "stablehlo.reshape"(%t204) : (tensor<1x1x2x32x1x64xf32>) -> tensor<2x32x1x64xf32>
    %t206 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t207 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t208 = "stablehlo.slice"(%t167) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<1x1x64xf32>
    %t209 = "stablehlo.reshape"(%t208) : (tensor<1x1x64xf32>) -> tensor<1x1x1x1x1x64xf32>
    %t210 = "stablehlo.slice"(%t4) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t211 = "stablehlo.reshape"(%t210) : (tensor<1xi32>) -> tensor<i32>
    %t212 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t213 = "stablehlo.dynamic_update_slice"(%t203, %t209, %t206, %t207, %t212, %t211, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t214 = "stablehlo.slice"(%t167) {start_indices = array<i64: 1, 0, 0>, limit_indices = array<i64: 2, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<1x1x64xf32>
    %t215 = "stablehlo.reshape"(%t214) : (tensor<1x1x64xf32>) -> tensor<1x1x1x1x1x64xf32>
    %t216 = "stablehlo.slice"(%t4) {start_indices = array<i64: 1>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t217 = "stablehlo.reshape"(%t216) : (tensor<1xi32>) -> tensor<i32>
    %t218 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t219 = "stablehlo.dynamic_update_slice"(%t213, %t215, %t206, %t207, %t218, %t217, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<1x1x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t220 = "stablehlo.slice"(%t219) {start_indices = array<i64: 1, 1, 0, 0, 0, 0>, limit_indices = array<i64: 2, 2, 2, 32, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x32x1x64xf32>
    %t221 = "stablehlo.reshape"(%t220) : (tensor<1x1x2x32x1x64xf32>) -> tensor<2x32x1x64xf32>
    %t222 = "stablehlo.reshape"(%t178) : (tensor<2x2x64xf32>) -> tensor<2x1x2x64xf32>
    %t223 = "stablehlo.dot_general"(%t222, %t205) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x1x2x64xf32>, tensor<2x32x1x64xf32>) -> tensor<2x1x2x32xf32>
    %t224 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<2x1x2x32xf32>} : () -> tensor<2x1x2x32xf32>
    %t225 = "stablehlo.multiply"(%t223, %t224) : (tensor<2x1x2x32xf32>, tensor<2x1x2x32xf32>) -> tensor<2x1x2x32xf32>
    %t226 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x32xi32>
    %t227 = "stablehlo.broadcast_in_dim"(%positions) {broadcast_dimensions = array<i64: 0>} : (tensor<2xi32>) -> tensor<2x32xi32>
    %t228 = "stablehlo.compare"(%t226, %t227) {comparison_direction = #stablehlo<comparison_direction LE>} : (tensor<2x32xi32>, tensor<2x32xi32>) -> tensor<2x32xi1>
    %t229 = "stablehlo.broadcast_in_dim"(%t228) {broadcast_dimensions = array<i64: 0, 3>} : (tensor<2x32xi1>) -> tensor<2x1x2x32xi1>
    %t230 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<2x1x2x32xf32>} : () -> tensor<2x1x2x32xf32>
    %t231 = "stablehlo.select"(%t229, %t225, %t230) : (tensor<2x1x2x32xi1>, tensor<2x1x2x32xf32>, tensor<2x1x2x32xf32>) -> tensor<2x1x2x32xf32>
    %t232 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t233 = "stablehlo.reduce"(%t231, %t232) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x32xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t234 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t235 = "stablehlo.maximum"(%t233, %t234) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t236 = "stablehlo.broadcast_in_dim"(%t235) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x32xf32>
    %t237 = "stablehlo.subtract"(%t231, %t236) : (tensor<2x1x2x32xf32>, tensor<2x1x2x32xf32>) -> tensor<2x1x2x32xf32>
    %t238 = "stablehlo.exponential"(%t237) : (tensor<2x1x2x32xf32>) -> tensor<2x1x2x32xf32>
    %t239 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t240 = "stablehlo.reduce"(%t238, %t239) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x32xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t241 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t242 = "stablehlo.maximum"(%t240, %t241) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t243 = "stablehlo.broadcast_in_dim"(%t242) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x32xf32>
    %t244 = "stablehlo.divide"(%t238, %t243) : (tensor<2x1x2x32xf32>, tensor<2x1x2x32xf32>) -> tensor<2x1x2x32xf32>
    %t245 = "stablehlo.dot_general"(%t244, %t221) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>} : (tensor<2x1x2x32xf32>, tensor<2x32x1x64xf32>) -> tensor<2x1x2x64xf32>
    %t246 = "stablehlo.reshape"(%t245) : (tensor<2x1x2x64xf32>) -> tensor<2x128xf32>
    %t247 = util.global.load @"model.layers.1.self_attn.o_proj.weight" : tensor<128x128xf32>
    %t248 = "stablehlo.dot_general"(%t246, %t247) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t249 = "stablehlo.add"(%t145, %t248) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t250 = util.global.load @"model.layers.1.post_attention_layernorm.weight" : tensor<128xf32>
    %t251 = "stablehlo.multiply"(%t249, %t249) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t252 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t253 = "stablehlo.reduce"(%t251, %t252) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t254 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t255 = "stablehlo.divide"(%t253, %t254) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t256 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t257 = "stablehlo.add"(%t255, %t256) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t258 = "stablehlo.rsqrt"(%t257) : (tensor<2xf32>) -> tensor<2xf32>
    %t259 = "stablehlo.broadcast_in_dim"(%t258) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t260 = "stablehlo.multiply"(%t249, %t259) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t261 = "stablehlo.broadcast_in_dim"(%t250) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t262 = "stablehlo.multiply"(%t261, %t260) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t263 = util.global.load @"model.layers.1.mlp.gate_proj.weight" : tensor<256x128xf32>
    %t264 = "stablehlo.dot_general"(%t262, %t263) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<256x128xf32>) -> tensor<2x256xf32>
    %t265 = util.global.load @"model.layers.1.mlp.up_proj.weight" : tensor<256x128xf32>
    %t266 = "stablehlo.dot_general"(%t262, %t265) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<256x128xf32>) -> tensor<2x256xf32>
    %t267 = "stablehlo.negate"(%t264) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t268 = "stablehlo.exponential"(%t267) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t269 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<2x256xf32>} : () -> tensor<2x256xf32>
    %t270 = "stablehlo.add"(%t268, %t269) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t271 = "stablehlo.divide"(%t264, %t270) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t272 = "stablehlo.multiply"(%t271, %t266) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t273 = util.global.load @"model.layers.1.mlp.down_proj.weight" : tensor<128x256xf32>
    %t274 = "stablehlo.dot_general"(%t272, %t273) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x256xf32>, tensor<128x256xf32>) -> tensor<2x128xf32>
    %t275 = "stablehlo.add"(%t249, %t274) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t276 = util.global.load @"model.norm.weight" : tensor<128xf32>
    %t277 = "stablehlo.multiply"(%t275, %t275) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t278 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t279 = "stablehlo.reduce"(%t277, %t278) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t280 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t281 = "stablehlo.divide"(%t279, %t280) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t282 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t283 = "stablehlo.add"(%t281, %t282) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t284 = "stablehlo.rsqrt"(%t283) : (tensor<2xf32>) -> tensor<2xf32>
    %t285 = "stablehlo.broadcast_in_dim"(%t284) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t286 = "stablehlo.multiply"(%t275, %t285) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t287 = "stablehlo.broadcast_in_dim"(%t276) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t288 = "stablehlo.multiply"(%t287, %t286) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t289 = util.global.load @"lm_head.weight" : tensor<512x128xf32>
    %t290 = "stablehlo.dot_general"(%t288, %t289) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : (tensor<2x128xf32>, tensor<512x128xf32>) -> tensor<2x512xf32>
    util.global.store %t219, @kv_cache : tensor<2x2x2x40x1x64xf32>
    return %t290 : tensor<2x512xf32>
  }

  func.func @read_kv(%slot: tensor<i32>) -> tensor<2x2x32x1x64xf32> {
    %t0 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t1 = util.global.load @kv_cache : tensor<2x2x2x40x1x64xf32>
    %t2 = "stablehlo.dynamic_slice"(%t1, %t0, %t0, %slot, %t0, %t0, %t0) {slice_sizes = array<i64: 2, 2, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x1x32x1x64xf32>
    %t3 = "stablehlo.reshape"(%t2) : (tensor<2x2x1x32x1x64xf32>) -> tensor<2x2x32x1x64xf32>
    return %t3 : tensor<2x2x32x1x64xf32>
  }

  func.func @clear_slot(%slot: tensor<i32>) {
    %t0 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t1 = util.global.load @kv_cache : tensor<2x2x2x40x1x64xf32>
    %t2 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<2x2x1x40x1x64xf32>} : () -> tensor<2x2x1x40x1x64xf32>
    %t3 = "stablehlo.dynamic_update_slice"(%t1, %t2, %t0, %t0, %slot, %t0, %t0, %t0) : (tensor<2x2x2x40x1x64xf32>, tensor<2x2x1x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    util.global.store %t3, @kv_cache : tensor<2x2x2x40x1x64xf32>
    return
  }

  func.func @compatibility() -> tensor<4xi32> {
    %key = "stablehlo.constant"() {value = dense<[1, 2, 296186349, 1553981402]> : tensor<4xi32>} : () -> tensor<4xi32>
    return %key : tensor<4xi32>
  }
}
