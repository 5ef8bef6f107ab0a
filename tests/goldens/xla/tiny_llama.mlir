// vlm text decoder: StableHLO emitted from the shared decoder graph
// (src/backends/xla/stablehlo_emitter.h describes the functions and layout).
module @vlm_text_decoder attributes {vlm.contract_version = 1 : i32, vlm.emitter_version = 5 : i32, vlm.compatibility_key_hash = "52c27f55472bb69a", vlm.compatibility_key = {contract_version = "1", emitter_version = "5", module = "text_decoder", model_type = "llama", weights_signature = "a385df67b9db5877", dtype = "compute=f32,weights=f32", capacity = "32", slots = "2", prefill_chunk = "8", decode_windows = "8,16,32", prefill_buckets = "4,8", position_mode = "rope-1d", mask_mode = "token_prefill=causal,embeddings_prefill=additive-bias", kv_layout = "global:f32[layers,2,slots,capacity+chunk,kv_heads,head_dim]", graphs = "b2a9459df30ff19e", encoder_buckets = "none", side_inputs = "none"}} {
  util.global private @"model.embed_tokens.weight" = #stream.parameter.named<"vlm.layout"::"model.embed_tokens.weight"> : tensor<512x128xf32>
  util.global private @"model.layers.0.input_layernorm.weight" = #stream.parameter.named<"vlm.layout"::"model.layers.0.input_layernorm.weight"> : tensor<128xf32>
  util.global private @"model.layers.0.self_attn.q_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.0.self_attn.q_proj.weight#t"> : tensor<128x128xf32>
  util.global private @"model.layers.0.self_attn.k_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.0.self_attn.k_proj.weight#t"> : tensor<128x64xf32>
  util.global private @"model.layers.0.self_attn.v_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.0.self_attn.v_proj.weight#t"> : tensor<128x64xf32>
  util.global private @"model.layers.0.self_attn.o_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.0.self_attn.o_proj.weight#t"> : tensor<128x128xf32>
  util.global private @"model.layers.0.post_attention_layernorm.weight" = #stream.parameter.named<"vlm.layout"::"model.layers.0.post_attention_layernorm.weight"> : tensor<128xf32>
  util.global private @"model.layers.0.mlp.gate_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.0.mlp.gate_proj.weight#t"> : tensor<128x256xf32>
  util.global private @"model.layers.0.mlp.up_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.0.mlp.up_proj.weight#t"> : tensor<128x256xf32>
  util.global private @"model.layers.0.mlp.down_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.0.mlp.down_proj.weight#t"> : tensor<256x128xf32>
  util.global private @"model.layers.1.input_layernorm.weight" = #stream.parameter.named<"vlm.layout"::"model.layers.1.input_layernorm.weight"> : tensor<128xf32>
  util.global private @"model.layers.1.self_attn.q_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.1.self_attn.q_proj.weight#t"> : tensor<128x128xf32>
  util.global private @"model.layers.1.self_attn.k_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.1.self_attn.k_proj.weight#t"> : tensor<128x64xf32>
  util.global private @"model.layers.1.self_attn.v_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.1.self_attn.v_proj.weight#t"> : tensor<128x64xf32>
  util.global private @"model.layers.1.self_attn.o_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.1.self_attn.o_proj.weight#t"> : tensor<128x128xf32>
  util.global private @"model.layers.1.post_attention_layernorm.weight" = #stream.parameter.named<"vlm.layout"::"model.layers.1.post_attention_layernorm.weight"> : tensor<128xf32>
  util.global private @"model.layers.1.mlp.gate_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.1.mlp.gate_proj.weight#t"> : tensor<128x256xf32>
  util.global private @"model.layers.1.mlp.up_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.1.mlp.up_proj.weight#t"> : tensor<128x256xf32>
  util.global private @"model.layers.1.mlp.down_proj.weight#t" = #stream.parameter.named<"vlm.layout"::"model.layers.1.mlp.down_proj.weight#t"> : tensor<256x128xf32>
  util.global private @"model.norm.weight" = #stream.parameter.named<"vlm.layout"::"model.norm.weight"> : tensor<128xf32>
  util.global private @"lm_head.weight#t" = #stream.parameter.named<"vlm.layout"::"lm_head.weight#t"> : tensor<128x512xf32>
  util.global private mutable @kv_cache = dense<0.0> : tensor<2x2x2x40x1x64xf32>

  func.func @token_prefill_4(%tokens: tensor<4xi32>, %valid_rows: tensor<i32>, %slot: tensor<i32>, %start: tensor<i32>) -> tensor<1x512xf32> {
    %t0 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4xi32>
    %t1 = "stablehlo.broadcast_in_dim"(%start) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<4xi32>
    %t2 = "stablehlo.add"(%t0, %t1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %t3 = "stablehlo.broadcast_in_dim"(%valid_rows) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<4xi32>
    %t4 = "stablehlo.compare"(%t0, %t3) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %t5 = "stablehlo.convert"(%t2) : (tensor<4xi32>) -> tensor<4xf32>
    %t6 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t7 = util.global.load @"model.embed_tokens.weight" : tensor<512x128xf32>
    %t8 = "stablehlo.reshape"(%tokens) : (tensor<4xi32>) -> tensor<4x1xi32>
    %t9 = "stablehlo.gather"(%t7, %t8) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 128>} : (tensor<512x128xf32>, tensor<4x1xi32>) -> tensor<4x128xf32>
    %t10 = util.global.load @"model.layers.0.input_layernorm.weight" : tensor<128xf32>
    %t11 = "stablehlo.multiply"(%t9, %t9) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t12 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t13 = "stablehlo.reduce"(%t11, %t12) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<4x128xf32>, tensor<f32>) -> tensor<4xf32>
    %t14 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<4xf32>} : () -> tensor<4xf32>
    %t15 = "stablehlo.divide"(%t13, %t14) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t16 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<4xf32>} : () -> tensor<4xf32>
    %t17 = "stablehlo.add"(%t15, %t16) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t18 = "stablehlo.rsqrt"(%t17) : (tensor<4xf32>) -> tensor<4xf32>
    %t19 = "stablehlo.broadcast_in_dim"(%t18) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x128xf32>
    %t20 = "stablehlo.multiply"(%t9, %t19) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t21 = "stablehlo.broadcast_in_dim"(%t10) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<4x128xf32>
    %t22 = "stablehlo.multiply"(%t21, %t20) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t23 = util.global.load @"model.layers.0.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t24 = "stablehlo.dot_general"(%t22, %t23) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
    %t25 = util.global.load @"model.layers.0.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t26 = "stablehlo.dot_general"(%t22, %t25) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x64xf32>) -> tensor<4x64xf32>
    %t27 = util.global.load @"model.layers.0.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t28 = "stablehlo.dot_general"(%t22, %t27) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x64xf32>) -> tensor<4x64xf32>
    %t29 = "stablehlo.reshape"(%t24) : (tensor<4x128xf32>) -> tensor<4x2x64xf32>
    %t30 = "stablehlo.reshape"(%t26) : (tensor<4x64xf32>) -> tensor<4x1x64xf32>
    %t31 = "stablehlo.reshape"(%t28) : (tensor<4x64xf32>) -> tensor<4x1x64xf32>
    %t32 = "stablehlo.constant"() {value = dense<[1.000000000e+00, 7.498942018e-01, 5.623413324e-01, 4.216965139e-01, 3.162277639e-01, 2.371373624e-01, 1.778279394e-01, 1.333521456e-01, 1.000000015e-01, 7.498941571e-02, 5.623412877e-02, 4.216964915e-02, 3.162277862e-02, 2.371373586e-02, 1.778279431e-02, 1.333521493e-02, 9.999999776e-03, 7.498942316e-03, 5.623413250e-03, 4.216964822e-03, 3.162277862e-03, 2.371373819e-03, 1.778279431e-03, 1.333521446e-03, 1.000000047e-03, 7.498941850e-04, 5.623413017e-04, 4.216964880e-04, 3.162277862e-04, 2.371373848e-04, 1.778279402e-04, 1.333521504e-04]> : tensor<32xf32>} : () -> tensor<32xf32>
    %t33 = "stablehlo.broadcast_in_dim"(%t5) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x32xf32>
    %t34 = "stablehlo.broadcast_in_dim"(%t32) {broadcast_dimensions = array<i64: 1>} : (tensor<32xf32>) -> tensor<4x32xf32>
    %t35 = "stablehlo.multiply"(%t33, %t34) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
    %t36 = "stablehlo.cosine"(%t35) : (tensor<4x32xf32>) -> tensor<4x32xf32>
    %t37 = "stablehlo.sine"(%t35) : (tensor<4x32xf32>) -> tensor<4x32xf32>
    %t38 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x2x32xf32>
    %t39 = "stablehlo.broadcast_in_dim"(%t37) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x2x32xf32>
    %t40 = "stablehlo.slice"(%t29) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 4, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<4x2x64xf32>) -> tensor<4x2x32xf32>
    %t41 = "stablehlo.slice"(%t29) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 4, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<4x2x64xf32>) -> tensor<4x2x32xf32>
    %t42 = "stablehlo.multiply"(%t40, %t38) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t43 = "stablehlo.multiply"(%t41, %t39) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t44 = "stablehlo.subtract"(%t42, %t43) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t45 = "stablehlo.multiply"(%t41, %t38) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t46 = "stablehlo.multiply"(%t40, %t39) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t47 = "stablehlo.add"(%t45, %t46) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t48 = "stablehlo.concatenate"(%t44, %t47) {dimension = 2 : i64} : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x64xf32>
    %t49 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x1x32xf32>
    %t50 = "stablehlo.broadcast_in_dim"(%t37) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x1x32xf32>
    %t51 = "stablehlo.slice"(%t30) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 4, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<4x1x64xf32>) -> tensor<4x1x32xf32>
    %t52 = "stablehlo.slice"(%t30) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 4, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<4x1x64xf32>) -> tensor<4x1x32xf32>
    %t53 = "stablehlo.multiply"(%t51, %t49) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t54 = "stablehlo.multiply"(%t52, %t50) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t55 = "stablehlo.subtract"(%t53, %t54) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t56 = "stablehlo.multiply"(%t52, %t49) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t57 = "stablehlo.multiply"(%t51, %t50) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t58 = "stablehlo.add"(%t56, %t57) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t59 = "stablehlo.concatenate"(%t55, %t58) {dimension = 2 : i64} : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x64xf32>
    %t60 = util.global.load @kv_cache : tensor<2x2x2x40x1x64xf32>
    %t61 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t62 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t63 = "stablehlo.dynamic_slice"(%t60, %t61, %t62, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t64 = "stablehlo.reshape"(%t63) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t65 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t66 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t67 = "stablehlo.dynamic_slice"(%t60, %t65, %t66, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t68 = "stablehlo.reshape"(%t67) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t69 = "stablehlo.concatenate"(%t64, %t59) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<4x1x64xf32>) -> tensor<36x1x64xf32>
    %t70 = "stablehlo.concatenate"(%t68, %t31) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<4x1x64xf32>) -> tensor<36x1x64xf32>
    %t71 = "stablehlo.reshape"(%t48) : (tensor<4x2x64xf32>) -> tensor<4x1x2x64xf32>
    %t72 = "stablehlo.dot_general"(%t71, %t69) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<4x1x2x64xf32>, tensor<36x1x64xf32>) -> tensor<1x4x2x36xf32>
    %t73 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<1x4x2x36xf32>} : () -> tensor<1x4x2x36xf32>
    %t74 = "stablehlo.multiply"(%t72, %t73) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t75 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<4x36xi32>
    %t76 = "stablehlo.broadcast_in_dim"(%start) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<4x36xi32>
    %t77 = "stablehlo.compare"(%t75, %t76) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<4x36xi32>, tensor<4x36xi32>) -> tensor<4x36xi1>
    %t78 = "stablehlo.constant"() {value = dense<32> : tensor<4x36xi32>} : () -> tensor<4x36xi32>
    %t79 = "stablehlo.compare"(%t75, %t78) {comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<4x36xi32>, tensor<4x36xi32>) -> tensor<4x36xi1>
    %t80 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4x36xi32>
    %t81 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<4x36xf32>} : () -> tensor<4x36xf32>
    %t82 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<4x36xf32>} : () -> tensor<4x36xf32>
    %t83 = "stablehlo.add"(%t80, %t78) : (tensor<4x36xi32>, tensor<4x36xi32>) -> tensor<4x36xi32>
    %t84 = "stablehlo.compare"(%t75, %t83) {comparison_direction = #stablehlo<comparison_direction LE>} : (tensor<4x36xi32>, tensor<4x36xi32>) -> tensor<4x36xi1>
    %t85 = "stablehlo.and"(%t79, %t84) : (tensor<4x36xi1>, tensor<4x36xi1>) -> tensor<4x36xi1>
    %t86 = "stablehlo.or"(%t77, %t85) : (tensor<4x36xi1>, tensor<4x36xi1>) -> tensor<4x36xi1>
    %t87 = "stablehlo.select"(%t86, %t82, %t81) : (tensor<4x36xi1>, tensor<4x36xf32>, tensor<4x36xf32>) -> tensor<4x36xf32>
    %t88 = "stablehlo.broadcast_in_dim"(%t87) {broadcast_dimensions = array<i64: 1, 3>} : (tensor<4x36xf32>) -> tensor<1x4x2x36xf32>
    %t89 = "stablehlo.add"(%t74, %t88) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t90 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t91 = "stablehlo.reduce"(%t89, %t90) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x4x2x36xf32>, tensor<f32>) -> tensor<1x4x2xf32>
    %t92 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<1x4x2xf32>} : () -> tensor<1x4x2xf32>
    %t93 = "stablehlo.maximum"(%t91, %t92) : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %t94 = "stablehlo.broadcast_in_dim"(%t93) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x4x2xf32>) -> tensor<1x4x2x36xf32>
    %t95 = "stablehlo.subtract"(%t89, %t94) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t96 = "stablehlo.exponential"(%t95) : (tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t97 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t98 = "stablehlo.reduce"(%t96, %t97) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x4x2x36xf32>, tensor<f32>) -> tensor<1x4x2xf32>
    %t99 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<1x4x2xf32>} : () -> tensor<1x4x2xf32>
    %t100 = "stablehlo.maximum"(%t98, %t99) : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %t101 = "stablehlo.broadcast_in_dim"(%t100) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x4x2xf32>) -> tensor<1x4x2x36xf32>
    %t102 = "stablehlo.divide"(%t96, %t101) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t103 = "stablehlo.dot_general"(%t102, %t70) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]>} : (tensor<1x4x2x36xf32>, tensor<36x1x64xf32>) -> tensor<1x4x2x64xf32>
    %t104 = "stablehlo.transpose"(%t103) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<1x4x2x64xf32>) -> tensor<4x1x2x64xf32>
    %t105 = "stablehlo.reshape"(%t104) : (tensor<4x1x2x64xf32>) -> tensor<4x128xf32>
    %t106 = util.global.load @"model.layers.0.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t107 = "stablehlo.dot_general"(%t105, %t106) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
    %t108 = "stablehlo.add"(%t9, %t107) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t109 = util.global.load @"model.layers.0.post_attention_layernorm.weight" : tensor<128xf32>
    %t110 = "stablehlo.multiply"(%t108, %t108) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t111 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t112 = "stablehlo.reduce"(%t110, %t111) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<4x128xf32>, tensor<f32>) -> tensor<4xf32>
    %t113 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<4xf32>} : () -> tensor<4xf32>
    %t114 = "stablehlo.divide"(%t112, %t113) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t115 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<4xf32>} : () -> tensor<4xf32>
    %t116 = "stablehlo.add"(%t114, %t115) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t117 = "stablehlo.rsqrt"(%t116) : (tensor<4xf32>) -> tensor<4xf32>
    %t118 = "stablehlo.broadcast_in_dim"(%t117) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x128xf32>
    %t119 = "stablehlo.multiply"(%t108, %t118) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t120 = "stablehlo.broadcast_in_dim"(%t109) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<4x128xf32>
    %t121 = "stablehlo.multiply"(%t120, %t119) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t122 = util.global.load @"model.layers.0.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t123 = "stablehlo.dot_general"(%t121, %t122) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x256xf32>) -> tensor<4x256xf32>
    %t124 = util.global.load @"model.layers.0.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t125 = "stablehlo.dot_general"(%t121, %t124) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x256xf32>) -> tensor<4x256xf32>
    %t126 = "stablehlo.negate"(%t123) : (tensor<4x256xf32>) -> tensor<4x256xf32>
    %t127 = "stablehlo.exponential"(%t126) : (tensor<4x256xf32>) -> tensor<4x256xf32>
    %t128 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<4x256xf32>} : () -> tensor<4x256xf32>
    %t129 = "stablehlo.add"(%t127, %t128) : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %t130 = "stablehlo.divide"(%t123, %t129) : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %t131 = "stablehlo.multiply"(%t130, %t125) : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %t132 = util.global.load @"model.layers.0.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t133 = "stablehlo.dot_general"(%t131, %t132) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x256xf32>, tensor<256x128xf32>) -> tensor<4x128xf32>
    %t134 = "stablehlo.add"(%t108, %t133) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t135 = util.global.load @"model.layers.1.input_layernorm.weight" : tensor<128xf32>
    %t136 = "stablehlo.multiply"(%t134, %t134) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t137 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t138 = "stablehlo.reduce"(%t136, %t137) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<4x128xf32>, tensor<f32>) -> tensor<4xf32>
    %t139 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<4xf32>} : () -> tensor<4xf32>
    %t140 = "stablehlo.divide"(%t138, %t139) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t141 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<4xf32>} : () -> tensor<4xf32>
    %t142 = "stablehlo.add"(%t140, %t141) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t143 = "stablehlo.rsqrt"(%t142) : (tensor<4xf32>) -> tensor<4xf32>
    %t144 = "stablehlo.broadcast_in_dim"(%t143) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x128xf32>
    %t145 = "stablehlo.multiply"(%t134, %t144) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t146 = "stablehlo.broadcast_in_dim"(%t135) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<4x128xf32>
    %t147 = "stablehlo.multiply"(%t146, %t145) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t148 = util.global.load @"model.layers.1.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t149 = "stablehlo.dot_general"(%t147, %t148) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
    %t150 = util.global.load @"model.layers.1.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t151 = "stablehlo.dot_general"(%t147, %t150) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x64xf32>) -> tensor<4x64xf32>
    %t152 = util.global.load @"model.layers.1.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t153 = "stablehlo.dot_general"(%t147, %t152) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x64xf32>) -> tensor<4x64xf32>
    %t154 = "stablehlo.reshape"(%t149) : (tensor<4x128xf32>) -> tensor<4x2x64xf32>
    %t155 = "stablehlo.reshape"(%t151) : (tensor<4x64xf32>) -> tensor<4x1x64xf32>
    %t156 = "stablehlo.reshape"(%t153) : (tensor<4x64xf32>) -> tensor<4x1x64xf32>
    %t157 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x2x32xf32>
    %t158 = "stablehlo.broadcast_in_dim"(%t37) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x2x32xf32>
    %t159 = "stablehlo.slice"(%t154) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 4, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<4x2x64xf32>) -> tensor<4x2x32xf32>
    %t160 = "stablehlo.slice"(%t154) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 4, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<4x2x64xf32>) -> tensor<4x2x32xf32>
    %t161 = "stablehlo.multiply"(%t159, %t157) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t162 = "stablehlo.multiply"(%t160, %t158) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t163 = "stablehlo.subtract"(%t161, %t162) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t164 = "stablehlo.multiply"(%t160, %t157) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t165 = "stablehlo.multiply"(%t159, %t158) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t166 = "stablehlo.add"(%t164, %t165) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t167 = "stablehlo.concatenate"(%t163, %t166) {dimension = 2 : i64} : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x64xf32>
    %t168 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x1x32xf32>
    %t169 = "stablehlo.broadcast_in_dim"(%t37) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x1x32xf32>
    %t170 = "stablehlo.slice"(%t155) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 4, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<4x1x64xf32>) -> tensor<4x1x32xf32>
    %t171 = "stablehlo.slice"(%t155) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 4, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<4x1x64xf32>) -> tensor<4x1x32xf32>
    %t172 = "stablehlo.multiply"(%t170, %t168) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t173 = "stablehlo.multiply"(%t171, %t169) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t174 = "stablehlo.subtract"(%t172, %t173) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t175 = "stablehlo.multiply"(%t171, %t168) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t176 = "stablehlo.multiply"(%t170, %t169) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t177 = "stablehlo.add"(%t175, %t176) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t178 = "stablehlo.concatenate"(%t174, %t177) {dimension = 2 : i64} : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x64xf32>
    %t179 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t180 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t181 = "stablehlo.dynamic_slice"(%t60, %t179, %t180, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t182 = "stablehlo.reshape"(%t181) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t183 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t184 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t185 = "stablehlo.dynamic_slice"(%t60, %t183, %t184, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t186 = "stablehlo.reshape"(%t185) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t187 = "stablehlo.concatenate"(%t182, %t178) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<4x1x64xf32>) -> tensor<36x1x64xf32>
    %t188 = "stablehlo.concatenate"(%t186, %t156) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<4x1x64xf32>) -> tensor<36x1x64xf32>
    %t189 = "stablehlo.reshape"(%t167) : (tensor<4x2x64xf32>) -> tensor<4x1x2x64xf32>
    %t190 = "stablehlo.dot_general"(%t189, %t187) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<4x1x2x64xf32>, tensor<36x1x64xf32>) -> tensor<1x4x2x36xf32>
    %t191 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<1x4x2x36xf32>} : () -> tensor<1x4x2x36xf32>
    %t192 = "stablehlo.multiply"(%t190, %t191) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t193 = "stablehlo.broadcast_in_dim"(%t87) {broadcast_dimensions = array<i64: 1, 3>} : (tensor<4x36xf32>) -> tensor<1x4x2x36xf32>
    %t194 = "stablehlo.add"(%t192, %t193) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t195 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t196 = "stablehlo.reduce"(%t194, %t195) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x4x2x36xf32>, tensor<f32>) -> tensor<1x4x2xf32>
    %t197 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<1x4x2xf32>} : () -> tensor<1x4x2xf32>
    %t198 = "stablehlo.maximum"(%t196, %t197) : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %t199 = "stablehlo.broadcast_in_dim"(%t198) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x4x2xf32>) -> tensor<1x4x2x36xf32>
    %t200 = "stablehlo.subtract"(%t194, %t199) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t201 = "stablehlo.exponential"(%t200) : (tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t202 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t203 = "stablehlo.reduce"(%t201, %t202) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x4x2x36xf32>, tensor<f32>) -> tensor<1x4x2xf32>
    %t204 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<1x4x2xf32>} : () -> tensor<1x4x2xf32>
    %t205 = "stablehlo.maximum"(%t203, %t204) : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %t206 = "stablehlo.broadcast_in_dim"(%t205) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x4x2xf32>) -> tensor<1x4x2x36xf32>
    %t207 = "stablehlo.divide"(%t201, %t206) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t208 = "stablehlo.dot_general"(%t207, %t188) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]>} : (tensor<1x4x2x36xf32>, tensor<36x1x64xf32>) -> tensor<1x4x2x64xf32>
    %t209 = "stablehlo.transpose"(%t208) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<1x4x2x64xf32>) -> tensor<4x1x2x64xf32>
    %t210 = "stablehlo.reshape"(%t209) : (tensor<4x1x2x64xf32>) -> tensor<4x128xf32>
    %t211 = util.global.load @"model.layers.1.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t212 = "stablehlo.dot_general"(%t210, %t211) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
    %t213 = "stablehlo.add"(%t134, %t212) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t214 = util.global.load @"model.layers.1.post_attention_layernorm.weight" : tensor<128xf32>
    %t215 = "stablehlo.multiply"(%t213, %t213) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t216 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t217 = "stablehlo.reduce"(%t215, %t216) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<4x128xf32>, tensor<f32>) -> tensor<4xf32>
    %t218 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<4xf32>} : () -> tensor<4xf32>
    %t219 = "stablehlo.divide"(%t217, %t218) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t220 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<4xf32>} : () -> tensor<4xf32>
    %t221 = "stablehlo.add"(%t219, %t220) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t222 = "stablehlo.rsqrt"(%t221) : (tensor<4xf32>) -> tensor<4xf32>
    %t223 = "stablehlo.broadcast_in_dim"(%t222) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x128xf32>
    %t224 = "stablehlo.multiply"(%t213, %t223) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t225 = "stablehlo.broadcast_in_dim"(%t214) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<4x128xf32>
    %t226 = "stablehlo.multiply"(%t225, %t224) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t227 = util.global.load @"model.layers.1.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t228 = "stablehlo.dot_general"(%t226, %t227) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x256xf32>) -> tensor<4x256xf32>
    %t229 = util.global.load @"model.layers.1.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t230 = "stablehlo.dot_general"(%t226, %t229) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x256xf32>) -> tensor<4x256xf32>
    %t231 = "stablehlo.negate"(%t228) : (tensor<4x256xf32>) -> tensor<4x256xf32>
    %t232 = "stablehlo.exponential"(%t231) : (tensor<4x256xf32>) -> tensor<4x256xf32>
    %t233 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<4x256xf32>} : () -> tensor<4x256xf32>
    %t234 = "stablehlo.add"(%t232, %t233) : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %t235 = "stablehlo.divide"(%t228, %t234) : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %t236 = "stablehlo.multiply"(%t235, %t230) : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %t237 = util.global.load @"model.layers.1.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t238 = "stablehlo.dot_general"(%t236, %t237) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x256xf32>, tensor<256x128xf32>) -> tensor<4x128xf32>
    %t239 = "stablehlo.add"(%t213, %t238) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t240 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t241 = "stablehlo.subtract"(%valid_rows, %t240) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %t242 = "stablehlo.dynamic_slice"(%t239, %t241, %t6) {slice_sizes = array<i64: 1, 128>} : (tensor<4x128xf32>, tensor<i32>, tensor<i32>) -> tensor<1x128xf32>
    %t243 = util.global.load @"model.norm.weight" : tensor<128xf32>
    %t244 = "stablehlo.multiply"(%t242, %t242) : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
    %t245 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t246 = "stablehlo.reduce"(%t244, %t245) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<1x128xf32>, tensor<f32>) -> tensor<1xf32>
    %t247 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<1xf32>} : () -> tensor<1xf32>
    %t248 = "stablehlo.divide"(%t246, %t247) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t249 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<1xf32>} : () -> tensor<1xf32>
    %t250 = "stablehlo.add"(%t248, %t249) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t251 = "stablehlo.rsqrt"(%t250) : (tensor<1xf32>) -> tensor<1xf32>
    %t252 = "stablehlo.broadcast_in_dim"(%t251) {broadcast_dimensions = array<i64: 0>} : (tensor<1xf32>) -> tensor<1x128xf32>
    %t253 = "stablehlo.multiply"(%t242, %t252) : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
    %t254 = "stablehlo.broadcast_in_dim"(%t243) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<1x128xf32>
    %t255 = "stablehlo.multiply"(%t254, %t253) : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
    %t256 = util.global.load @"lm_head.weight#t" : tensor<128x512xf32>
    %t257 = "stablehlo.dot_general"(%t255, %t256) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<1x128xf32>, tensor<128x512xf32>) -> tensor<1x512xf32>
    %t258 = "stablehlo.reshape"(%t59) : (tensor<4x1x64xf32>) -> tensor<1x1x1x4x1x64xf32>
    %t259 = "stablehlo.reshape"(%t31) : (tensor<4x1x64xf32>) -> tensor<1x1x1x4x1x64xf32>
    %t260 = "stablehlo.reshape"(%t178) : (tensor<4x1x64xf32>) -> tensor<1x1x1x4x1x64xf32>
    %t261 = "stablehlo.reshape"(%t156) : (tensor<4x1x64xf32>) -> tensor<1x1x1x4x1x64xf32>
    %t262 = "stablehlo.concatenate"(%t258, %t259, %t260, %t261) {dimension = 1 : i64} : (tensor<1x1x1x4x1x64xf32>, tensor<1x1x1x4x1x64xf32>, tensor<1x1x1x4x1x64xf32>, tensor<1x1x1x4x1x64xf32>) -> tensor<1x4x1x4x1x64xf32>
    %t263 = "stablehlo.reshape"(%t262) : (tensor<1x4x1x4x1x64xf32>) -> tensor<2x2x1x4x1x64xf32>
    %t264 = "stablehlo.dynamic_slice"(%t60, %t6, %t6, %slot, %start, %t6, %t6) {slice_sizes = array<i64: 2, 2, 1, 4, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x1x4x1x64xf32>
    %t265 = "stablehlo.broadcast_in_dim"(%t4) {broadcast_dimensions = array<i64: 3>} : (tensor<4xi1>) -> tensor<2x2x1x4x1x64xi1>
    %t266 = "stablehlo.select"(%t265, %t263, %t264) : (tensor<2x2x1x4x1x64xi1>, tensor<2x2x1x4x1x64xf32>, tensor<2x2x1x4x1x64xf32>) -> tensor<2x2x1x4x1x64xf32>
    %t267 = "stablehlo.dynamic_update_slice"(%t60, %t266, %t6, %t6, %slot, %start, %t6, %t6) : (tensor<2x2x2x40x1x64xf32>, tensor<2x2x1x4x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    util.global.store %t267, @kv_cache : tensor<2x2x2x40x1x64xf32>
    return %t257 : tensor<1x512xf32>
  }

  func.func @token_prefill(%tokens: tensor<8xi32>, %valid_rows: tensor<i32>, %slot: tensor<i32>, %start: tensor<i32>) -> tensor<1x512xf32> {
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
    %t23 = util.global.load @"model.layers.0.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t24 = "stablehlo.dot_general"(%t22, %t23) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t25 = util.global.load @"model.layers.0.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t26 = "stablehlo.dot_general"(%t22, %t25) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x64xf32>
    %t27 = util.global.load @"model.layers.0.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t28 = "stablehlo.dot_general"(%t22, %t27) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x64xf32>
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
    %t63 = "stablehlo.dynamic_slice"(%t60, %t61, %t62, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t64 = "stablehlo.reshape"(%t63) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t65 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t66 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t67 = "stablehlo.dynamic_slice"(%t60, %t65, %t66, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t68 = "stablehlo.reshape"(%t67) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t69 = "stablehlo.concatenate"(%t64, %t59) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<8x1x64xf32>) -> tensor<40x1x64xf32>
    %t70 = "stablehlo.concatenate"(%t68, %t31) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<8x1x64xf32>) -> tensor<40x1x64xf32>
    %t71 = "stablehlo.reshape"(%t48) : (tensor<8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t72 = "stablehlo.dot_general"(%t71, %t69) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<8x1x2x64xf32>, tensor<40x1x64xf32>) -> tensor<1x8x2x40xf32>
    %t73 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<1x8x2x40xf32>} : () -> tensor<1x8x2x40xf32>
    %t74 = "stablehlo.multiply"(%t72, %t73) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t75 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<8x40xi32>
    %t76 = "stablehlo.broadcast_in_dim"(%start) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<8x40xi32>
    %t77 = "stablehlo.compare"(%t75, %t76) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<8x40xi32>, tensor<8x40xi32>) -> tensor<8x40xi1>
    %t78 = "stablehlo.constant"() {value = dense<32> : tensor<8x40xi32>} : () -> tensor<8x40xi32>
    %t79 = "stablehlo.compare"(%t75, %t78) {comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<8x40xi32>, tensor<8x40xi32>) -> tensor<8x40xi1>
    %t80 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<8x40xi32>
    %t81 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<8x40xf32>} : () -> tensor<8x40xf32>
    %t82 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<8x40xf32>} : () -> tensor<8x40xf32>
    %t83 = "stablehlo.add"(%t80, %t78) : (tensor<8x40xi32>, tensor<8x40xi32>) -> tensor<8x40xi32>
    %t84 = "stablehlo.compare"(%t75, %t83) {comparison_direction = #stablehlo<comparison_direction LE>} : (tensor<8x40xi32>, tensor<8x40xi32>) -> tensor<8x40xi1>
    %t85 = "stablehlo.and"(%t79, %t84) : (tensor<8x40xi1>, tensor<8x40xi1>) -> tensor<8x40xi1>
    %t86 = "stablehlo.or"(%t77, %t85) : (tensor<8x40xi1>, tensor<8x40xi1>) -> tensor<8x40xi1>
    %t87 = "stablehlo.select"(%t86, %t82, %t81) : (tensor<8x40xi1>, tensor<8x40xf32>, tensor<8x40xf32>) -> tensor<8x40xf32>
    %t88 = "stablehlo.broadcast_in_dim"(%t87) {broadcast_dimensions = array<i64: 1, 3>} : (tensor<8x40xf32>) -> tensor<1x8x2x40xf32>
    %t89 = "stablehlo.add"(%t74, %t88) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t90 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t91 = "stablehlo.reduce"(%t89, %t90) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x40xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t92 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t93 = "stablehlo.maximum"(%t91, %t92) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t94 = "stablehlo.broadcast_in_dim"(%t93) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x40xf32>
    %t95 = "stablehlo.subtract"(%t89, %t94) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t96 = "stablehlo.exponential"(%t95) : (tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t97 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t98 = "stablehlo.reduce"(%t96, %t97) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x40xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t99 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t100 = "stablehlo.maximum"(%t98, %t99) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t101 = "stablehlo.broadcast_in_dim"(%t100) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x40xf32>
    %t102 = "stablehlo.divide"(%t96, %t101) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t103 = "stablehlo.dot_general"(%t102, %t70) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]>} : (tensor<1x8x2x40xf32>, tensor<40x1x64xf32>) -> tensor<1x8x2x64xf32>
    %t104 = "stablehlo.transpose"(%t103) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<1x8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t105 = "stablehlo.reshape"(%t104) : (tensor<8x1x2x64xf32>) -> tensor<8x128xf32>
    %t106 = util.global.load @"model.layers.0.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t107 = "stablehlo.dot_general"(%t105, %t106) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t108 = "stablehlo.add"(%t9, %t107) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t109 = util.global.load @"model.layers.0.post_attention_layernorm.weight" : tensor<128xf32>
    %t110 = "stablehlo.multiply"(%t108, %t108) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t111 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t112 = "stablehlo.reduce"(%t110, %t111) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t113 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t114 = "stablehlo.divide"(%t112, %t113) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t115 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t116 = "stablehlo.add"(%t114, %t115) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t117 = "stablehlo.rsqrt"(%t116) : (tensor<8xf32>) -> tensor<8xf32>
    %t118 = "stablehlo.broadcast_in_dim"(%t117) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t119 = "stablehlo.multiply"(%t108, %t118) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t120 = "stablehlo.broadcast_in_dim"(%t109) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t121 = "stablehlo.multiply"(%t120, %t119) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t122 = util.global.load @"model.layers.0.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t123 = "stablehlo.dot_general"(%t121, %t122) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x256xf32>) -> tensor<8x256xf32>
    %t124 = util.global.load @"model.layers.0.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t125 = "stablehlo.dot_general"(%t121, %t124) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x256xf32>) -> tensor<8x256xf32>
    %t126 = "stablehlo.negate"(%t123) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t127 = "stablehlo.exponential"(%t126) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t128 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<8x256xf32>} : () -> tensor<8x256xf32>
    %t129 = "stablehlo.add"(%t127, %t128) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t130 = "stablehlo.divide"(%t123, %t129) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t131 = "stablehlo.multiply"(%t130, %t125) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t132 = util.global.load @"model.layers.0.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t133 = "stablehlo.dot_general"(%t131, %t132) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x256xf32>, tensor<256x128xf32>) -> tensor<8x128xf32>
    %t134 = "stablehlo.add"(%t108, %t133) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t135 = util.global.load @"model.layers.1.input_layernorm.weight" : tensor<128xf32>
    %t136 = "stablehlo.multiply"(%t134, %t134) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t137 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t138 = "stablehlo.reduce"(%t136, %t137) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t139 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t140 = "stablehlo.divide"(%t138, %t139) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t141 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t142 = "stablehlo.add"(%t140, %t141) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t143 = "stablehlo.rsqrt"(%t142) : (tensor<8xf32>) -> tensor<8xf32>
    %t144 = "stablehlo.broadcast_in_dim"(%t143) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t145 = "stablehlo.multiply"(%t134, %t144) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t146 = "stablehlo.broadcast_in_dim"(%t135) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t147 = "stablehlo.multiply"(%t146, %t145) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t148 = util.global.load @"model.layers.1.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t149 = "stablehlo.dot_general"(%t147, %t148) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t150 = util.global.load @"model.layers.1.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t151 = "stablehlo.dot_general"(%t147, %t150) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x64xf32>
    %t152 = util.global.load @"model.layers.1.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t153 = "stablehlo.dot_general"(%t147, %t152) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x64xf32>
    %t154 = "stablehlo.reshape"(%t149) : (tensor<8x128xf32>) -> tensor<8x2x64xf32>
    %t155 = "stablehlo.reshape"(%t151) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t156 = "stablehlo.reshape"(%t153) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t157 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t158 = "stablehlo.broadcast_in_dim"(%t37) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t159 = "stablehlo.slice"(%t154) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t160 = "stablehlo.slice"(%t154) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t161 = "stablehlo.multiply"(%t159, %t157) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t162 = "stablehlo.multiply"(%t160, %t158) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t163 = "stablehlo.subtract"(%t161, %t162) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t164 = "stablehlo.multiply"(%t160, %t157) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t165 = "stablehlo.multiply"(%t159, %t158) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t166 = "stablehlo.add"(%t164, %t165) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t167 = "stablehlo.concatenate"(%t163, %t166) {dimension = 2 : i64} : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x64xf32>
    %t168 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t169 = "stablehlo.broadcast_in_dim"(%t37) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t170 = "stablehlo.slice"(%t155) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t171 = "stablehlo.slice"(%t155) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t172 = "stablehlo.multiply"(%t170, %t168) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t173 = "stablehlo.multiply"(%t171, %t169) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t174 = "stablehlo.subtract"(%t172, %t173) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t175 = "stablehlo.multiply"(%t171, %t168) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t176 = "stablehlo.multiply"(%t170, %t169) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t177 = "stablehlo.add"(%t175, %t176) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t178 = "stablehlo.concatenate"(%t174, %t177) {dimension = 2 : i64} : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x64xf32>
    %t179 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t180 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t181 = "stablehlo.dynamic_slice"(%t60, %t179, %t180, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t182 = "stablehlo.reshape"(%t181) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t183 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t184 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t185 = "stablehlo.dynamic_slice"(%t60, %t183, %t184, %slot, %t6, %t6, %t6) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t186 = "stablehlo.reshape"(%t185) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t187 = "stablehlo.concatenate"(%t182, %t178) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<8x1x64xf32>) -> tensor<40x1x64xf32>
    %t188 = "stablehlo.concatenate"(%t186, %t156) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<8x1x64xf32>) -> tensor<40x1x64xf32>
    %t189 = "stablehlo.reshape"(%t167) : (tensor<8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t190 = "stablehlo.dot_general"(%t189, %t187) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<8x1x2x64xf32>, tensor<40x1x64xf32>) -> tensor<1x8x2x40xf32>
    %t191 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<1x8x2x40xf32>} : () -> tensor<1x8x2x40xf32>
    %t192 = "stablehlo.multiply"(%t190, %t191) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t193 = "stablehlo.broadcast_in_dim"(%t87) {broadcast_dimensions = array<i64: 1, 3>} : (tensor<8x40xf32>) -> tensor<1x8x2x40xf32>
    %t194 = "stablehlo.add"(%t192, %t193) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t195 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t196 = "stablehlo.reduce"(%t194, %t195) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x40xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t197 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t198 = "stablehlo.maximum"(%t196, %t197) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t199 = "stablehlo.broadcast_in_dim"(%t198) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x40xf32>
    %t200 = "stablehlo.subtract"(%t194, %t199) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t201 = "stablehlo.exponential"(%t200) : (tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t202 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t203 = "stablehlo.reduce"(%t201, %t202) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x40xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t204 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t205 = "stablehlo.maximum"(%t203, %t204) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t206 = "stablehlo.broadcast_in_dim"(%t205) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x40xf32>
    %t207 = "stablehlo.divide"(%t201, %t206) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t208 = "stablehlo.dot_general"(%t207, %t188) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]>} : (tensor<1x8x2x40xf32>, tensor<40x1x64xf32>) -> tensor<1x8x2x64xf32>
    %t209 = "stablehlo.transpose"(%t208) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<1x8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t210 = "stablehlo.reshape"(%t209) : (tensor<8x1x2x64xf32>) -> tensor<8x128xf32>
    %t211 = util.global.load @"model.layers.1.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t212 = "stablehlo.dot_general"(%t210, %t211) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t213 = "stablehlo.add"(%t134, %t212) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
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
    %t227 = util.global.load @"model.layers.1.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t228 = "stablehlo.dot_general"(%t226, %t227) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x256xf32>) -> tensor<8x256xf32>
    %t229 = util.global.load @"model.layers.1.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t230 = "stablehlo.dot_general"(%t226, %t229) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x256xf32>) -> tensor<8x256xf32>
    %t231 = "stablehlo.negate"(%t228) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t232 = "stablehlo.exponential"(%t231) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t233 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<8x256xf32>} : () -> tensor<8x256xf32>
    %t234 = "stablehlo.add"(%t232, %t233) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t235 = "stablehlo.divide"(%t228, %t234) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t236 = "stablehlo.multiply"(%t235, %t230) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t237 = util.global.load @"model.layers.1.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t238 = "stablehlo.dot_general"(%t236, %t237) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x256xf32>, tensor<256x128xf32>) -> tensor<8x128xf32>
    %t239 = "stablehlo.add"(%t213, %t238) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t240 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t241 = "stablehlo.subtract"(%valid_rows, %t240) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %t242 = "stablehlo.dynamic_slice"(%t239, %t241, %t6) {slice_sizes = array<i64: 1, 128>} : (tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<1x128xf32>
    %t243 = util.global.load @"model.norm.weight" : tensor<128xf32>
    %t244 = "stablehlo.multiply"(%t242, %t242) : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
    %t245 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t246 = "stablehlo.reduce"(%t244, %t245) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<1x128xf32>, tensor<f32>) -> tensor<1xf32>
    %t247 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<1xf32>} : () -> tensor<1xf32>
    %t248 = "stablehlo.divide"(%t246, %t247) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t249 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<1xf32>} : () -> tensor<1xf32>
    %t250 = "stablehlo.add"(%t248, %t249) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t251 = "stablehlo.rsqrt"(%t250) : (tensor<1xf32>) -> tensor<1xf32>
    %t252 = "stablehlo.broadcast_in_dim"(%t251) {broadcast_dimensions = array<i64: 0>} : (tensor<1xf32>) -> tensor<1x128xf32>
    %t253 = "stablehlo.multiply"(%t242, %t252) : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
    %t254 = "stablehlo.broadcast_in_dim"(%t243) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<1x128xf32>
    %t255 = "stablehlo.multiply"(%t254, %t253) : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
    %t256 = util.global.load @"lm_head.weight#t" : tensor<128x512xf32>
    %t257 = "stablehlo.dot_general"(%t255, %t256) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<1x128xf32>, tensor<128x512xf32>) -> tensor<1x512xf32>
    %t258 = "stablehlo.reshape"(%t59) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t259 = "stablehlo.reshape"(%t31) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t260 = "stablehlo.reshape"(%t178) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t261 = "stablehlo.reshape"(%t156) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t262 = "stablehlo.concatenate"(%t258, %t259, %t260, %t261) {dimension = 1 : i64} : (tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>) -> tensor<1x4x1x8x1x64xf32>
    %t263 = "stablehlo.reshape"(%t262) : (tensor<1x4x1x8x1x64xf32>) -> tensor<2x2x1x8x1x64xf32>
    %t264 = "stablehlo.dynamic_slice"(%t60, %t6, %t6, %slot, %start, %t6, %t6) {slice_sizes = array<i64: 2, 2, 1, 8, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x1x8x1x64xf32>
    %t265 = "stablehlo.broadcast_in_dim"(%t4) {broadcast_dimensions = array<i64: 3>} : (tensor<8xi1>) -> tensor<2x2x1x8x1x64xi1>
    %t266 = "stablehlo.select"(%t265, %t263, %t264) : (tensor<2x2x1x8x1x64xi1>, tensor<2x2x1x8x1x64xf32>, tensor<2x2x1x8x1x64xf32>) -> tensor<2x2x1x8x1x64xf32>
    %t267 = "stablehlo.dynamic_update_slice"(%t60, %t266, %t6, %t6, %slot, %start, %t6, %t6) : (tensor<2x2x2x40x1x64xf32>, tensor<2x2x1x8x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    util.global.store %t267, @kv_cache : tensor<2x2x2x40x1x64xf32>
    return %t257 : tensor<1x512xf32>
  }

  func.func @embeddings_prefill_4(%tokens: tensor<4xi32>, %features: tensor<4x128xf32>, %feature_mask: tensor<4xi32>, %positions: tensor<1x4xi32>, %bias: tensor<4x32xf32>, %valid_rows: tensor<i32>, %slot: tensor<i32>, %start: tensor<i32>) -> tensor<1x512xf32> {
    %t0 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4xi32>
    %t1 = "stablehlo.broadcast_in_dim"(%start) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<4xi32>
    %t2 = "stablehlo.add"(%t0, %t1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %t3 = "stablehlo.broadcast_in_dim"(%valid_rows) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<4xi32>
    %t4 = "stablehlo.compare"(%t0, %t3) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %t5 = "stablehlo.reshape"(%positions) : (tensor<1x4xi32>) -> tensor<4xi32>
    %t6 = "stablehlo.convert"(%t5) : (tensor<4xi32>) -> tensor<4xf32>
    %t7 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t8 = util.global.load @"model.embed_tokens.weight" : tensor<512x128xf32>
    %t9 = "stablehlo.reshape"(%tokens) : (tensor<4xi32>) -> tensor<4x1xi32>
    %t10 = "stablehlo.gather"(%t8, %t9) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 128>} : (tensor<512x128xf32>, tensor<4x1xi32>) -> tensor<4x128xf32>
    %t11 = "stablehlo.constant"() {value = dense<0> : tensor<4xi32>} : () -> tensor<4xi32>
    %t12 = "stablehlo.compare"(%feature_mask, %t11) {comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %t13 = "stablehlo.broadcast_in_dim"(%t12) {broadcast_dimensions = array<i64: 0>} : (tensor<4xi1>) -> tensor<4x128xi1>
    %t14 = "stablehlo.select"(%t13, %features, %t10) : (tensor<4x128xi1>, tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t15 = util.global.load @"model.layers.0.input_layernorm.weight" : tensor<128xf32>
    %t16 = "stablehlo.multiply"(%t14, %t14) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t17 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t18 = "stablehlo.reduce"(%t16, %t17) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<4x128xf32>, tensor<f32>) -> tensor<4xf32>
    %t19 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<4xf32>} : () -> tensor<4xf32>
    %t20 = "stablehlo.divide"(%t18, %t19) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t21 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<4xf32>} : () -> tensor<4xf32>
    %t22 = "stablehlo.add"(%t20, %t21) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t23 = "stablehlo.rsqrt"(%t22) : (tensor<4xf32>) -> tensor<4xf32>
    %t24 = "stablehlo.broadcast_in_dim"(%t23) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x128xf32>
    %t25 = "stablehlo.multiply"(%t14, %t24) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t26 = "stablehlo.broadcast_in_dim"(%t15) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<4x128xf32>
    %t27 = "stablehlo.multiply"(%t26, %t25) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t28 = util.global.load @"model.layers.0.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t29 = "stablehlo.dot_general"(%t27, %t28) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
    %t30 = util.global.load @"model.layers.0.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t31 = "stablehlo.dot_general"(%t27, %t30) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x64xf32>) -> tensor<4x64xf32>
    %t32 = util.global.load @"model.layers.0.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t33 = "stablehlo.dot_general"(%t27, %t32) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x64xf32>) -> tensor<4x64xf32>
    %t34 = "stablehlo.reshape"(%t29) : (tensor<4x128xf32>) -> tensor<4x2x64xf32>
    %t35 = "stablehlo.reshape"(%t31) : (tensor<4x64xf32>) -> tensor<4x1x64xf32>
    %t36 = "stablehlo.reshape"(%t33) : (tensor<4x64xf32>) -> tensor<4x1x64xf32>
    %t37 = "stablehlo.constant"() {value = dense<[1.000000000e+00, 7.498942018e-01, 5.623413324e-01, 4.216965139e-01, 3.162277639e-01, 2.371373624e-01, 1.778279394e-01, 1.333521456e-01, 1.000000015e-01, 7.498941571e-02, 5.623412877e-02, 4.216964915e-02, 3.162277862e-02, 2.371373586e-02, 1.778279431e-02, 1.333521493e-02, 9.999999776e-03, 7.498942316e-03, 5.623413250e-03, 4.216964822e-03, 3.162277862e-03, 2.371373819e-03, 1.778279431e-03, 1.333521446e-03, 1.000000047e-03, 7.498941850e-04, 5.623413017e-04, 4.216964880e-04, 3.162277862e-04, 2.371373848e-04, 1.778279402e-04, 1.333521504e-04]> : tensor<32xf32>} : () -> tensor<32xf32>
    %t38 = "stablehlo.broadcast_in_dim"(%t6) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x32xf32>
    %t39 = "stablehlo.broadcast_in_dim"(%t37) {broadcast_dimensions = array<i64: 1>} : (tensor<32xf32>) -> tensor<4x32xf32>
    %t40 = "stablehlo.multiply"(%t38, %t39) : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
    %t41 = "stablehlo.cosine"(%t40) : (tensor<4x32xf32>) -> tensor<4x32xf32>
    %t42 = "stablehlo.sine"(%t40) : (tensor<4x32xf32>) -> tensor<4x32xf32>
    %t43 = "stablehlo.broadcast_in_dim"(%t41) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x2x32xf32>
    %t44 = "stablehlo.broadcast_in_dim"(%t42) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x2x32xf32>
    %t45 = "stablehlo.slice"(%t34) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 4, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<4x2x64xf32>) -> tensor<4x2x32xf32>
    %t46 = "stablehlo.slice"(%t34) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 4, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<4x2x64xf32>) -> tensor<4x2x32xf32>
    %t47 = "stablehlo.multiply"(%t45, %t43) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t48 = "stablehlo.multiply"(%t46, %t44) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t49 = "stablehlo.subtract"(%t47, %t48) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t50 = "stablehlo.multiply"(%t46, %t43) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t51 = "stablehlo.multiply"(%t45, %t44) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t52 = "stablehlo.add"(%t50, %t51) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t53 = "stablehlo.concatenate"(%t49, %t52) {dimension = 2 : i64} : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x64xf32>
    %t54 = "stablehlo.broadcast_in_dim"(%t41) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x1x32xf32>
    %t55 = "stablehlo.broadcast_in_dim"(%t42) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x1x32xf32>
    %t56 = "stablehlo.slice"(%t35) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 4, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<4x1x64xf32>) -> tensor<4x1x32xf32>
    %t57 = "stablehlo.slice"(%t35) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 4, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<4x1x64xf32>) -> tensor<4x1x32xf32>
    %t58 = "stablehlo.multiply"(%t56, %t54) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t59 = "stablehlo.multiply"(%t57, %t55) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t60 = "stablehlo.subtract"(%t58, %t59) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t61 = "stablehlo.multiply"(%t57, %t54) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t62 = "stablehlo.multiply"(%t56, %t55) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t63 = "stablehlo.add"(%t61, %t62) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t64 = "stablehlo.concatenate"(%t60, %t63) {dimension = 2 : i64} : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x64xf32>
    %t65 = util.global.load @kv_cache : tensor<2x2x2x40x1x64xf32>
    %t66 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t67 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t68 = "stablehlo.dynamic_slice"(%t65, %t66, %t67, %slot, %t7, %t7, %t7) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t69 = "stablehlo.reshape"(%t68) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t70 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t71 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t72 = "stablehlo.dynamic_slice"(%t65, %t70, %t71, %slot, %t7, %t7, %t7) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t73 = "stablehlo.reshape"(%t72) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t74 = "stablehlo.concatenate"(%t69, %t64) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<4x1x64xf32>) -> tensor<36x1x64xf32>
    %t75 = "stablehlo.concatenate"(%t73, %t36) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<4x1x64xf32>) -> tensor<36x1x64xf32>
    %t76 = "stablehlo.reshape"(%t53) : (tensor<4x2x64xf32>) -> tensor<4x1x2x64xf32>
    %t77 = "stablehlo.dot_general"(%t76, %t74) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<4x1x2x64xf32>, tensor<36x1x64xf32>) -> tensor<1x4x2x36xf32>
    %t78 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<1x4x2x36xf32>} : () -> tensor<1x4x2x36xf32>
    %t79 = "stablehlo.multiply"(%t77, %t78) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t80 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<4x36xi32>
    %t81 = "stablehlo.broadcast_in_dim"(%start) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<4x36xi32>
    %t82 = "stablehlo.compare"(%t80, %t81) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<4x36xi32>, tensor<4x36xi32>) -> tensor<4x36xi1>
    %t83 = "stablehlo.constant"() {value = dense<32> : tensor<4x36xi32>} : () -> tensor<4x36xi32>
    %t84 = "stablehlo.compare"(%t80, %t83) {comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<4x36xi32>, tensor<4x36xi32>) -> tensor<4x36xi1>
    %t85 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4x36xi32>
    %t86 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<4x36xf32>} : () -> tensor<4x36xf32>
    %t87 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<4x36xf32>} : () -> tensor<4x36xf32>
    %t88 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<4x4xf32>} : () -> tensor<4x4xf32>
    %t89 = "stablehlo.concatenate"(%bias, %t88) {dimension = 1 : i64} : (tensor<4x32xf32>, tensor<4x4xf32>) -> tensor<4x36xf32>
    %t90 = "stablehlo.dynamic_slice"(%t89, %t7, %start) {slice_sizes = array<i64: 4, 4>} : (tensor<4x36xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4xf32>
    %t91 = "stablehlo.concatenate"(%bias, %t90) {dimension = 1 : i64} : (tensor<4x32xf32>, tensor<4x4xf32>) -> tensor<4x36xf32>
    %t92 = "stablehlo.or"(%t82, %t84) : (tensor<4x36xi1>, tensor<4x36xi1>) -> tensor<4x36xi1>
    %t93 = "stablehlo.select"(%t92, %t91, %t86) : (tensor<4x36xi1>, tensor<4x36xf32>, tensor<4x36xf32>) -> tensor<4x36xf32>
    %t94 = "stablehlo.broadcast_in_dim"(%t93) {broadcast_dimensions = array<i64: 1, 3>} : (tensor<4x36xf32>) -> tensor<1x4x2x36xf32>
    %t95 = "stablehlo.add"(%t79, %t94) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t96 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t97 = "stablehlo.reduce"(%t95, %t96) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x4x2x36xf32>, tensor<f32>) -> tensor<1x4x2xf32>
    %t98 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<1x4x2xf32>} : () -> tensor<1x4x2xf32>
    %t99 = "stablehlo.maximum"(%t97, %t98) : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %t100 = "stablehlo.broadcast_in_dim"(%t99) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x4x2xf32>) -> tensor<1x4x2x36xf32>
    %t101 = "stablehlo.subtract"(%t95, %t100) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t102 = "stablehlo.exponential"(%t101) : (tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t103 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t104 = "stablehlo.reduce"(%t102, %t103) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x4x2x36xf32>, tensor<f32>) -> tensor<1x4x2xf32>
    %t105 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<1x4x2xf32>} : () -> tensor<1x4x2xf32>
    %t106 = "stablehlo.maximum"(%t104, %t105) : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %t107 = "stablehlo.broadcast_in_dim"(%t106) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x4x2xf32>) -> tensor<1x4x2x36xf32>
    %t108 = "stablehlo.divide"(%t102, %t107) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t109 = "stablehlo.dot_general"(%t108, %t75) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]>} : (tensor<1x4x2x36xf32>, tensor<36x1x64xf32>) -> tensor<1x4x2x64xf32>
    %t110 = "stablehlo.transpose"(%t109) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<1x4x2x64xf32>) -> tensor<4x1x2x64xf32>
    %t111 = "stablehlo.reshape"(%t110) : (tensor<4x1x2x64xf32>) -> tensor<4x128xf32>
    %t112 = util.global.load @"model.layers.0.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t113 = "stablehlo.dot_general"(%t111, %t112) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
    %t114 = "stablehlo.add"(%t14, %t113) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t115 = util.global.load @"model.layers.0.post_attention_layernorm.weight" : tensor<128xf32>
    %t116 = "stablehlo.multiply"(%t114, %t114) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t117 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t118 = "stablehlo.reduce"(%t116, %t117) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<4x128xf32>, tensor<f32>) -> tensor<4xf32>
    %t119 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<4xf32>} : () -> tensor<4xf32>
    %t120 = "stablehlo.divide"(%t118, %t119) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t121 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<4xf32>} : () -> tensor<4xf32>
    %t122 = "stablehlo.add"(%t120, %t121) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t123 = "stablehlo.rsqrt"(%t122) : (tensor<4xf32>) -> tensor<4xf32>
    %t124 = "stablehlo.broadcast_in_dim"(%t123) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x128xf32>
    %t125 = "stablehlo.multiply"(%t114, %t124) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t126 = "stablehlo.broadcast_in_dim"(%t115) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<4x128xf32>
    %t127 = "stablehlo.multiply"(%t126, %t125) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t128 = util.global.load @"model.layers.0.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t129 = "stablehlo.dot_general"(%t127, %t128) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x256xf32>) -> tensor<4x256xf32>
    %t130 = util.global.load @"model.layers.0.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t131 = "stablehlo.dot_general"(%t127, %t130) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x256xf32>) -> tensor<4x256xf32>
    %t132 = "stablehlo.negate"(%t129) : (tensor<4x256xf32>) -> tensor<4x256xf32>
    %t133 = "stablehlo.exponential"(%t132) : (tensor<4x256xf32>) -> tensor<4x256xf32>
    %t134 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<4x256xf32>} : () -> tensor<4x256xf32>
    %t135 = "stablehlo.add"(%t133, %t134) : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %t136 = "stablehlo.divide"(%t129, %t135) : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %t137 = "stablehlo.multiply"(%t136, %t131) : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %t138 = util.global.load @"model.layers.0.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t139 = "stablehlo.dot_general"(%t137, %t138) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x256xf32>, tensor<256x128xf32>) -> tensor<4x128xf32>
    %t140 = "stablehlo.add"(%t114, %t139) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t141 = util.global.load @"model.layers.1.input_layernorm.weight" : tensor<128xf32>
    %t142 = "stablehlo.multiply"(%t140, %t140) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t143 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t144 = "stablehlo.reduce"(%t142, %t143) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<4x128xf32>, tensor<f32>) -> tensor<4xf32>
    %t145 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<4xf32>} : () -> tensor<4xf32>
    %t146 = "stablehlo.divide"(%t144, %t145) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t147 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<4xf32>} : () -> tensor<4xf32>
    %t148 = "stablehlo.add"(%t146, %t147) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t149 = "stablehlo.rsqrt"(%t148) : (tensor<4xf32>) -> tensor<4xf32>
    %t150 = "stablehlo.broadcast_in_dim"(%t149) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x128xf32>
    %t151 = "stablehlo.multiply"(%t140, %t150) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t152 = "stablehlo.broadcast_in_dim"(%t141) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<4x128xf32>
    %t153 = "stablehlo.multiply"(%t152, %t151) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t154 = util.global.load @"model.layers.1.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t155 = "stablehlo.dot_general"(%t153, %t154) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
    %t156 = util.global.load @"model.layers.1.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t157 = "stablehlo.dot_general"(%t153, %t156) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x64xf32>) -> tensor<4x64xf32>
    %t158 = util.global.load @"model.layers.1.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t159 = "stablehlo.dot_general"(%t153, %t158) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x64xf32>) -> tensor<4x64xf32>
    %t160 = "stablehlo.reshape"(%t155) : (tensor<4x128xf32>) -> tensor<4x2x64xf32>
    %t161 = "stablehlo.reshape"(%t157) : (tensor<4x64xf32>) -> tensor<4x1x64xf32>
    %t162 = "stablehlo.reshape"(%t159) : (tensor<4x64xf32>) -> tensor<4x1x64xf32>
    %t163 = "stablehlo.broadcast_in_dim"(%t41) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x2x32xf32>
    %t164 = "stablehlo.broadcast_in_dim"(%t42) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x2x32xf32>
    %t165 = "stablehlo.slice"(%t160) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 4, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<4x2x64xf32>) -> tensor<4x2x32xf32>
    %t166 = "stablehlo.slice"(%t160) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 4, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<4x2x64xf32>) -> tensor<4x2x32xf32>
    %t167 = "stablehlo.multiply"(%t165, %t163) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t168 = "stablehlo.multiply"(%t166, %t164) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t169 = "stablehlo.subtract"(%t167, %t168) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t170 = "stablehlo.multiply"(%t166, %t163) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t171 = "stablehlo.multiply"(%t165, %t164) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t172 = "stablehlo.add"(%t170, %t171) : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x32xf32>
    %t173 = "stablehlo.concatenate"(%t169, %t172) {dimension = 2 : i64} : (tensor<4x2x32xf32>, tensor<4x2x32xf32>) -> tensor<4x2x64xf32>
    %t174 = "stablehlo.broadcast_in_dim"(%t41) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x1x32xf32>
    %t175 = "stablehlo.broadcast_in_dim"(%t42) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<4x32xf32>) -> tensor<4x1x32xf32>
    %t176 = "stablehlo.slice"(%t161) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 4, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<4x1x64xf32>) -> tensor<4x1x32xf32>
    %t177 = "stablehlo.slice"(%t161) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 4, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<4x1x64xf32>) -> tensor<4x1x32xf32>
    %t178 = "stablehlo.multiply"(%t176, %t174) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t179 = "stablehlo.multiply"(%t177, %t175) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t180 = "stablehlo.subtract"(%t178, %t179) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t181 = "stablehlo.multiply"(%t177, %t174) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t182 = "stablehlo.multiply"(%t176, %t175) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t183 = "stablehlo.add"(%t181, %t182) : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
    %t184 = "stablehlo.concatenate"(%t180, %t183) {dimension = 2 : i64} : (tensor<4x1x32xf32>, tensor<4x1x32xf32>) -> tensor<4x1x64xf32>
    %t185 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t186 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t187 = "stablehlo.dynamic_slice"(%t65, %t185, %t186, %slot, %t7, %t7, %t7) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t188 = "stablehlo.reshape"(%t187) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t189 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t190 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t191 = "stablehlo.dynamic_slice"(%t65, %t189, %t190, %slot, %t7, %t7, %t7) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t192 = "stablehlo.reshape"(%t191) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t193 = "stablehlo.concatenate"(%t188, %t184) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<4x1x64xf32>) -> tensor<36x1x64xf32>
    %t194 = "stablehlo.concatenate"(%t192, %t162) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<4x1x64xf32>) -> tensor<36x1x64xf32>
    %t195 = "stablehlo.reshape"(%t173) : (tensor<4x2x64xf32>) -> tensor<4x1x2x64xf32>
    %t196 = "stablehlo.dot_general"(%t195, %t193) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<4x1x2x64xf32>, tensor<36x1x64xf32>) -> tensor<1x4x2x36xf32>
    %t197 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<1x4x2x36xf32>} : () -> tensor<1x4x2x36xf32>
    %t198 = "stablehlo.multiply"(%t196, %t197) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t199 = "stablehlo.broadcast_in_dim"(%t93) {broadcast_dimensions = array<i64: 1, 3>} : (tensor<4x36xf32>) -> tensor<1x4x2x36xf32>
    %t200 = "stablehlo.add"(%t198, %t199) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t201 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t202 = "stablehlo.reduce"(%t200, %t201) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x4x2x36xf32>, tensor<f32>) -> tensor<1x4x2xf32>
    %t203 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<1x4x2xf32>} : () -> tensor<1x4x2xf32>
    %t204 = "stablehlo.maximum"(%t202, %t203) : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %t205 = "stablehlo.broadcast_in_dim"(%t204) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x4x2xf32>) -> tensor<1x4x2x36xf32>
    %t206 = "stablehlo.subtract"(%t200, %t205) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t207 = "stablehlo.exponential"(%t206) : (tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t208 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t209 = "stablehlo.reduce"(%t207, %t208) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x4x2x36xf32>, tensor<f32>) -> tensor<1x4x2xf32>
    %t210 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<1x4x2xf32>} : () -> tensor<1x4x2xf32>
    %t211 = "stablehlo.maximum"(%t209, %t210) : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
    %t212 = "stablehlo.broadcast_in_dim"(%t211) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x4x2xf32>) -> tensor<1x4x2x36xf32>
    %t213 = "stablehlo.divide"(%t207, %t212) : (tensor<1x4x2x36xf32>, tensor<1x4x2x36xf32>) -> tensor<1x4x2x36xf32>
    %t214 = "stablehlo.dot_general"(%t213, %t194) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]>} : (tensor<1x4x2x36xf32>, tensor<36x1x64xf32>) -> tensor<1x4x2x64xf32>
    %t215 = "stablehlo.transpose"(%t214) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<1x4x2x64xf32>) -> tensor<4x1x2x64xf32>
    %t216 = "stablehlo.reshape"(%t215) : (tensor<4x1x2x64xf32>) -> tensor<4x128xf32>
    %t217 = util.global.load @"model.layers.1.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t218 = "stablehlo.dot_general"(%t216, %t217) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32>
    %t219 = "stablehlo.add"(%t140, %t218) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t220 = util.global.load @"model.layers.1.post_attention_layernorm.weight" : tensor<128xf32>
    %t221 = "stablehlo.multiply"(%t219, %t219) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t222 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t223 = "stablehlo.reduce"(%t221, %t222) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<4x128xf32>, tensor<f32>) -> tensor<4xf32>
    %t224 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<4xf32>} : () -> tensor<4xf32>
    %t225 = "stablehlo.divide"(%t223, %t224) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t226 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<4xf32>} : () -> tensor<4xf32>
    %t227 = "stablehlo.add"(%t225, %t226) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t228 = "stablehlo.rsqrt"(%t227) : (tensor<4xf32>) -> tensor<4xf32>
    %t229 = "stablehlo.broadcast_in_dim"(%t228) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x128xf32>
    %t230 = "stablehlo.multiply"(%t219, %t229) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t231 = "stablehlo.broadcast_in_dim"(%t220) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<4x128xf32>
    %t232 = "stablehlo.multiply"(%t231, %t230) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t233 = util.global.load @"model.layers.1.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t234 = "stablehlo.dot_general"(%t232, %t233) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x256xf32>) -> tensor<4x256xf32>
    %t235 = util.global.load @"model.layers.1.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t236 = "stablehlo.dot_general"(%t232, %t235) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x128xf32>, tensor<128x256xf32>) -> tensor<4x256xf32>
    %t237 = "stablehlo.negate"(%t234) : (tensor<4x256xf32>) -> tensor<4x256xf32>
    %t238 = "stablehlo.exponential"(%t237) : (tensor<4x256xf32>) -> tensor<4x256xf32>
    %t239 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<4x256xf32>} : () -> tensor<4x256xf32>
    %t240 = "stablehlo.add"(%t238, %t239) : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %t241 = "stablehlo.divide"(%t234, %t240) : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %t242 = "stablehlo.multiply"(%t241, %t236) : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
    %t243 = util.global.load @"model.layers.1.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t244 = "stablehlo.dot_general"(%t242, %t243) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x256xf32>, tensor<256x128xf32>) -> tensor<4x128xf32>
    %t245 = "stablehlo.add"(%t219, %t244) : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
    %t246 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t247 = "stablehlo.subtract"(%valid_rows, %t246) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %t248 = "stablehlo.dynamic_slice"(%t245, %t247, %t7) {slice_sizes = array<i64: 1, 128>} : (tensor<4x128xf32>, tensor<i32>, tensor<i32>) -> tensor<1x128xf32>
    %t249 = util.global.load @"model.norm.weight" : tensor<128xf32>
    %t250 = "stablehlo.multiply"(%t248, %t248) : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
    %t251 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t252 = "stablehlo.reduce"(%t250, %t251) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<1x128xf32>, tensor<f32>) -> tensor<1xf32>
    %t253 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<1xf32>} : () -> tensor<1xf32>
    %t254 = "stablehlo.divide"(%t252, %t253) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t255 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<1xf32>} : () -> tensor<1xf32>
    %t256 = "stablehlo.add"(%t254, %t255) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t257 = "stablehlo.rsqrt"(%t256) : (tensor<1xf32>) -> tensor<1xf32>
    %t258 = "stablehlo.broadcast_in_dim"(%t257) {broadcast_dimensions = array<i64: 0>} : (tensor<1xf32>) -> tensor<1x128xf32>
    %t259 = "stablehlo.multiply"(%t248, %t258) : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
    %t260 = "stablehlo.broadcast_in_dim"(%t249) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<1x128xf32>
    %t261 = "stablehlo.multiply"(%t260, %t259) : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
    %t262 = util.global.load @"lm_head.weight#t" : tensor<128x512xf32>
    %t263 = "stablehlo.dot_general"(%t261, %t262) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<1x128xf32>, tensor<128x512xf32>) -> tensor<1x512xf32>
    %t264 = "stablehlo.reshape"(%t64) : (tensor<4x1x64xf32>) -> tensor<1x1x1x4x1x64xf32>
    %t265 = "stablehlo.reshape"(%t36) : (tensor<4x1x64xf32>) -> tensor<1x1x1x4x1x64xf32>
    %t266 = "stablehlo.reshape"(%t184) : (tensor<4x1x64xf32>) -> tensor<1x1x1x4x1x64xf32>
    %t267 = "stablehlo.reshape"(%t162) : (tensor<4x1x64xf32>) -> tensor<1x1x1x4x1x64xf32>
    %t268 = "stablehlo.concatenate"(%t264, %t265, %t266, %t267) {dimension = 1 : i64} : (tensor<1x1x1x4x1x64xf32>, tensor<1x1x1x4x1x64xf32>, tensor<1x1x1x4x1x64xf32>, tensor<1x1x1x4x1x64xf32>) -> tensor<1x4x1x4x1x64xf32>
    %t269 = "stablehlo.reshape"(%t268) : (tensor<1x4x1x4x1x64xf32>) -> tensor<2x2x1x4x1x64xf32>
    %t270 = "stablehlo.dynamic_slice"(%t65, %t7, %t7, %slot, %start, %t7, %t7) {slice_sizes = array<i64: 2, 2, 1, 4, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x1x4x1x64xf32>
    %t271 = "stablehlo.broadcast_in_dim"(%t4) {broadcast_dimensions = array<i64: 3>} : (tensor<4xi1>) -> tensor<2x2x1x4x1x64xi1>
    %t272 = "stablehlo.select"(%t271, %t269, %t270) : (tensor<2x2x1x4x1x64xi1>, tensor<2x2x1x4x1x64xf32>, tensor<2x2x1x4x1x64xf32>) -> tensor<2x2x1x4x1x64xf32>
    %t273 = "stablehlo.dynamic_update_slice"(%t65, %t272, %t7, %t7, %slot, %start, %t7, %t7) : (tensor<2x2x2x40x1x64xf32>, tensor<2x2x1x4x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    util.global.store %t273, @kv_cache : tensor<2x2x2x40x1x64xf32>
    return %t263 : tensor<1x512xf32>
  }

  func.func @embeddings_prefill(%tokens: tensor<8xi32>, %features: tensor<8x128xf32>, %feature_mask: tensor<8xi32>, %positions: tensor<1x8xi32>, %bias: tensor<8x32xf32>, %valid_rows: tensor<i32>, %slot: tensor<i32>, %start: tensor<i32>) -> tensor<1x512xf32> {
    %t0 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<8xi32>
    %t1 = "stablehlo.broadcast_in_dim"(%start) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<8xi32>
    %t2 = "stablehlo.add"(%t0, %t1) : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
    %t3 = "stablehlo.broadcast_in_dim"(%valid_rows) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<8xi32>
    %t4 = "stablehlo.compare"(%t0, %t3) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %t5 = "stablehlo.reshape"(%positions) : (tensor<1x8xi32>) -> tensor<8xi32>
    %t6 = "stablehlo.convert"(%t5) : (tensor<8xi32>) -> tensor<8xf32>
    %t7 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t8 = util.global.load @"model.embed_tokens.weight" : tensor<512x128xf32>
    %t9 = "stablehlo.reshape"(%tokens) : (tensor<8xi32>) -> tensor<8x1xi32>
    %t10 = "stablehlo.gather"(%t8, %t9) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 128>} : (tensor<512x128xf32>, tensor<8x1xi32>) -> tensor<8x128xf32>
    %t11 = "stablehlo.constant"() {value = dense<0> : tensor<8xi32>} : () -> tensor<8xi32>
    %t12 = "stablehlo.compare"(%feature_mask, %t11) {comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %t13 = "stablehlo.broadcast_in_dim"(%t12) {broadcast_dimensions = array<i64: 0>} : (tensor<8xi1>) -> tensor<8x128xi1>
    %t14 = "stablehlo.select"(%t13, %features, %t10) : (tensor<8x128xi1>, tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t15 = util.global.load @"model.layers.0.input_layernorm.weight" : tensor<128xf32>
    %t16 = "stablehlo.multiply"(%t14, %t14) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t17 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t18 = "stablehlo.reduce"(%t16, %t17) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t19 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t20 = "stablehlo.divide"(%t18, %t19) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t21 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t22 = "stablehlo.add"(%t20, %t21) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t23 = "stablehlo.rsqrt"(%t22) : (tensor<8xf32>) -> tensor<8xf32>
    %t24 = "stablehlo.broadcast_in_dim"(%t23) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t25 = "stablehlo.multiply"(%t14, %t24) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t26 = "stablehlo.broadcast_in_dim"(%t15) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t27 = "stablehlo.multiply"(%t26, %t25) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t28 = util.global.load @"model.layers.0.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t29 = "stablehlo.dot_general"(%t27, %t28) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t30 = util.global.load @"model.layers.0.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t31 = "stablehlo.dot_general"(%t27, %t30) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x64xf32>
    %t32 = util.global.load @"model.layers.0.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t33 = "stablehlo.dot_general"(%t27, %t32) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x64xf32>
    %t34 = "stablehlo.reshape"(%t29) : (tensor<8x128xf32>) -> tensor<8x2x64xf32>
    %t35 = "stablehlo.reshape"(%t31) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t36 = "stablehlo.reshape"(%t33) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t37 = "stablehlo.constant"() {value = dense<[1.000000000e+00, 7.498942018e-01, 5.623413324e-01, 4.216965139e-01, 3.162277639e-01, 2.371373624e-01, 1.778279394e-01, 1.333521456e-01, 1.000000015e-01, 7.498941571e-02, 5.623412877e-02, 4.216964915e-02, 3.162277862e-02, 2.371373586e-02, 1.778279431e-02, 1.333521493e-02, 9.999999776e-03, 7.498942316e-03, 5.623413250e-03, 4.216964822e-03, 3.162277862e-03, 2.371373819e-03, 1.778279431e-03, 1.333521446e-03, 1.000000047e-03, 7.498941850e-04, 5.623413017e-04, 4.216964880e-04, 3.162277862e-04, 2.371373848e-04, 1.778279402e-04, 1.333521504e-04]> : tensor<32xf32>} : () -> tensor<32xf32>
    %t38 = "stablehlo.broadcast_in_dim"(%t6) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x32xf32>
    %t39 = "stablehlo.broadcast_in_dim"(%t37) {broadcast_dimensions = array<i64: 1>} : (tensor<32xf32>) -> tensor<8x32xf32>
    %t40 = "stablehlo.multiply"(%t38, %t39) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %t41 = "stablehlo.cosine"(%t40) : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %t42 = "stablehlo.sine"(%t40) : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %t43 = "stablehlo.broadcast_in_dim"(%t41) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t44 = "stablehlo.broadcast_in_dim"(%t42) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t45 = "stablehlo.slice"(%t34) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t46 = "stablehlo.slice"(%t34) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t47 = "stablehlo.multiply"(%t45, %t43) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t48 = "stablehlo.multiply"(%t46, %t44) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t49 = "stablehlo.subtract"(%t47, %t48) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t50 = "stablehlo.multiply"(%t46, %t43) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t51 = "stablehlo.multiply"(%t45, %t44) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t52 = "stablehlo.add"(%t50, %t51) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t53 = "stablehlo.concatenate"(%t49, %t52) {dimension = 2 : i64} : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x64xf32>
    %t54 = "stablehlo.broadcast_in_dim"(%t41) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t55 = "stablehlo.broadcast_in_dim"(%t42) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t56 = "stablehlo.slice"(%t35) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t57 = "stablehlo.slice"(%t35) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t58 = "stablehlo.multiply"(%t56, %t54) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t59 = "stablehlo.multiply"(%t57, %t55) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t60 = "stablehlo.subtract"(%t58, %t59) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t61 = "stablehlo.multiply"(%t57, %t54) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t62 = "stablehlo.multiply"(%t56, %t55) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t63 = "stablehlo.add"(%t61, %t62) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t64 = "stablehlo.concatenate"(%t60, %t63) {dimension = 2 : i64} : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x64xf32>
    %t65 = util.global.load @kv_cache : tensor<2x2x2x40x1x64xf32>
    %t66 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t67 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t68 = "stablehlo.dynamic_slice"(%t65, %t66, %t67, %slot, %t7, %t7, %t7) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t69 = "stablehlo.reshape"(%t68) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t70 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t71 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t72 = "stablehlo.dynamic_slice"(%t65, %t70, %t71, %slot, %t7, %t7, %t7) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t73 = "stablehlo.reshape"(%t72) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t74 = "stablehlo.concatenate"(%t69, %t64) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<8x1x64xf32>) -> tensor<40x1x64xf32>
    %t75 = "stablehlo.concatenate"(%t73, %t36) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<8x1x64xf32>) -> tensor<40x1x64xf32>
    %t76 = "stablehlo.reshape"(%t53) : (tensor<8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t77 = "stablehlo.dot_general"(%t76, %t74) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<8x1x2x64xf32>, tensor<40x1x64xf32>) -> tensor<1x8x2x40xf32>
    %t78 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<1x8x2x40xf32>} : () -> tensor<1x8x2x40xf32>
    %t79 = "stablehlo.multiply"(%t77, %t78) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t80 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<8x40xi32>
    %t81 = "stablehlo.broadcast_in_dim"(%start) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<8x40xi32>
    %t82 = "stablehlo.compare"(%t80, %t81) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<8x40xi32>, tensor<8x40xi32>) -> tensor<8x40xi1>
    %t83 = "stablehlo.constant"() {value = dense<32> : tensor<8x40xi32>} : () -> tensor<8x40xi32>
    %t84 = "stablehlo.compare"(%t80, %t83) {comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<8x40xi32>, tensor<8x40xi32>) -> tensor<8x40xi1>
    %t85 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<8x40xi32>
    %t86 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<8x40xf32>} : () -> tensor<8x40xf32>
    %t87 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<8x40xf32>} : () -> tensor<8x40xf32>
    %t88 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<8x8xf32>} : () -> tensor<8x8xf32>
    %t89 = "stablehlo.concatenate"(%bias, %t88) {dimension = 1 : i64} : (tensor<8x32xf32>, tensor<8x8xf32>) -> tensor<8x40xf32>
    %t90 = "stablehlo.dynamic_slice"(%t89, %t7, %start) {slice_sizes = array<i64: 8, 8>} : (tensor<8x40xf32>, tensor<i32>, tensor<i32>) -> tensor<8x8xf32>
    %t91 = "stablehlo.concatenate"(%bias, %t90) {dimension = 1 : i64} : (tensor<8x32xf32>, tensor<8x8xf32>) -> tensor<8x40xf32>
    %t92 = "stablehlo.or"(%t82, %t84) : (tensor<8x40xi1>, tensor<8x40xi1>) -> tensor<8x40xi1>
    %t93 = "stablehlo.select"(%t92, %t91, %t86) : (tensor<8x40xi1>, tensor<8x40xf32>, tensor<8x40xf32>) -> tensor<8x40xf32>
    %t94 = "stablehlo.broadcast_in_dim"(%t93) {broadcast_dimensions = array<i64: 1, 3>} : (tensor<8x40xf32>) -> tensor<1x8x2x40xf32>
    %t95 = "stablehlo.add"(%t79, %t94) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t96 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t97 = "stablehlo.reduce"(%t95, %t96) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x40xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t98 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t99 = "stablehlo.maximum"(%t97, %t98) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t100 = "stablehlo.broadcast_in_dim"(%t99) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x40xf32>
    %t101 = "stablehlo.subtract"(%t95, %t100) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t102 = "stablehlo.exponential"(%t101) : (tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t103 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t104 = "stablehlo.reduce"(%t102, %t103) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x40xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t105 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t106 = "stablehlo.maximum"(%t104, %t105) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t107 = "stablehlo.broadcast_in_dim"(%t106) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x40xf32>
    %t108 = "stablehlo.divide"(%t102, %t107) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t109 = "stablehlo.dot_general"(%t108, %t75) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]>} : (tensor<1x8x2x40xf32>, tensor<40x1x64xf32>) -> tensor<1x8x2x64xf32>
    %t110 = "stablehlo.transpose"(%t109) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<1x8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t111 = "stablehlo.reshape"(%t110) : (tensor<8x1x2x64xf32>) -> tensor<8x128xf32>
    %t112 = util.global.load @"model.layers.0.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t113 = "stablehlo.dot_general"(%t111, %t112) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t114 = "stablehlo.add"(%t14, %t113) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t115 = util.global.load @"model.layers.0.post_attention_layernorm.weight" : tensor<128xf32>
    %t116 = "stablehlo.multiply"(%t114, %t114) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t117 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t118 = "stablehlo.reduce"(%t116, %t117) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t119 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t120 = "stablehlo.divide"(%t118, %t119) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t121 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t122 = "stablehlo.add"(%t120, %t121) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t123 = "stablehlo.rsqrt"(%t122) : (tensor<8xf32>) -> tensor<8xf32>
    %t124 = "stablehlo.broadcast_in_dim"(%t123) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t125 = "stablehlo.multiply"(%t114, %t124) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t126 = "stablehlo.broadcast_in_dim"(%t115) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t127 = "stablehlo.multiply"(%t126, %t125) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t128 = util.global.load @"model.layers.0.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t129 = "stablehlo.dot_general"(%t127, %t128) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x256xf32>) -> tensor<8x256xf32>
    %t130 = util.global.load @"model.layers.0.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t131 = "stablehlo.dot_general"(%t127, %t130) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x256xf32>) -> tensor<8x256xf32>
    %t132 = "stablehlo.negate"(%t129) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t133 = "stablehlo.exponential"(%t132) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t134 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<8x256xf32>} : () -> tensor<8x256xf32>
    %t135 = "stablehlo.add"(%t133, %t134) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t136 = "stablehlo.divide"(%t129, %t135) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t137 = "stablehlo.multiply"(%t136, %t131) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t138 = util.global.load @"model.layers.0.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t139 = "stablehlo.dot_general"(%t137, %t138) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x256xf32>, tensor<256x128xf32>) -> tensor<8x128xf32>
    %t140 = "stablehlo.add"(%t114, %t139) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t141 = util.global.load @"model.layers.1.input_layernorm.weight" : tensor<128xf32>
    %t142 = "stablehlo.multiply"(%t140, %t140) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t143 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t144 = "stablehlo.reduce"(%t142, %t143) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t145 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t146 = "stablehlo.divide"(%t144, %t145) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t147 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t148 = "stablehlo.add"(%t146, %t147) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t149 = "stablehlo.rsqrt"(%t148) : (tensor<8xf32>) -> tensor<8xf32>
    %t150 = "stablehlo.broadcast_in_dim"(%t149) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t151 = "stablehlo.multiply"(%t140, %t150) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t152 = "stablehlo.broadcast_in_dim"(%t141) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t153 = "stablehlo.multiply"(%t152, %t151) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t154 = util.global.load @"model.layers.1.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t155 = "stablehlo.dot_general"(%t153, %t154) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t156 = util.global.load @"model.layers.1.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t157 = "stablehlo.dot_general"(%t153, %t156) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x64xf32>
    %t158 = util.global.load @"model.layers.1.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t159 = "stablehlo.dot_general"(%t153, %t158) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x64xf32>
    %t160 = "stablehlo.reshape"(%t155) : (tensor<8x128xf32>) -> tensor<8x2x64xf32>
    %t161 = "stablehlo.reshape"(%t157) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t162 = "stablehlo.reshape"(%t159) : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
    %t163 = "stablehlo.broadcast_in_dim"(%t41) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t164 = "stablehlo.broadcast_in_dim"(%t42) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x2x32xf32>
    %t165 = "stablehlo.slice"(%t160) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t166 = "stablehlo.slice"(%t160) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x2x64xf32>) -> tensor<8x2x32xf32>
    %t167 = "stablehlo.multiply"(%t165, %t163) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t168 = "stablehlo.multiply"(%t166, %t164) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t169 = "stablehlo.subtract"(%t167, %t168) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t170 = "stablehlo.multiply"(%t166, %t163) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t171 = "stablehlo.multiply"(%t165, %t164) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t172 = "stablehlo.add"(%t170, %t171) : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x32xf32>
    %t173 = "stablehlo.concatenate"(%t169, %t172) {dimension = 2 : i64} : (tensor<8x2x32xf32>, tensor<8x2x32xf32>) -> tensor<8x2x64xf32>
    %t174 = "stablehlo.broadcast_in_dim"(%t41) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t175 = "stablehlo.broadcast_in_dim"(%t42) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
    %t176 = "stablehlo.slice"(%t161) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 8, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t177 = "stablehlo.slice"(%t161) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 8, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<8x1x64xf32>) -> tensor<8x1x32xf32>
    %t178 = "stablehlo.multiply"(%t176, %t174) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t179 = "stablehlo.multiply"(%t177, %t175) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t180 = "stablehlo.subtract"(%t178, %t179) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t181 = "stablehlo.multiply"(%t177, %t174) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t182 = "stablehlo.multiply"(%t176, %t175) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t183 = "stablehlo.add"(%t181, %t182) : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x32xf32>
    %t184 = "stablehlo.concatenate"(%t180, %t183) {dimension = 2 : i64} : (tensor<8x1x32xf32>, tensor<8x1x32xf32>) -> tensor<8x1x64xf32>
    %t185 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t186 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t187 = "stablehlo.dynamic_slice"(%t65, %t185, %t186, %slot, %t7, %t7, %t7) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t188 = "stablehlo.reshape"(%t187) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t189 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t190 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t191 = "stablehlo.dynamic_slice"(%t65, %t189, %t190, %slot, %t7, %t7, %t7) {slice_sizes = array<i64: 1, 1, 1, 32, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x1x32x1x64xf32>
    %t192 = "stablehlo.reshape"(%t191) : (tensor<1x1x1x32x1x64xf32>) -> tensor<32x1x64xf32>
    %t193 = "stablehlo.concatenate"(%t188, %t184) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<8x1x64xf32>) -> tensor<40x1x64xf32>
    %t194 = "stablehlo.concatenate"(%t192, %t162) {dimension = 0 : i64} : (tensor<32x1x64xf32>, tensor<8x1x64xf32>) -> tensor<40x1x64xf32>
    %t195 = "stablehlo.reshape"(%t173) : (tensor<8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t196 = "stablehlo.dot_general"(%t195, %t193) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [1], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<8x1x2x64xf32>, tensor<40x1x64xf32>) -> tensor<1x8x2x40xf32>
    %t197 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<1x8x2x40xf32>} : () -> tensor<1x8x2x40xf32>
    %t198 = "stablehlo.multiply"(%t196, %t197) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t199 = "stablehlo.broadcast_in_dim"(%t93) {broadcast_dimensions = array<i64: 1, 3>} : (tensor<8x40xf32>) -> tensor<1x8x2x40xf32>
    %t200 = "stablehlo.add"(%t198, %t199) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t201 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t202 = "stablehlo.reduce"(%t200, %t201) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x40xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t203 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t204 = "stablehlo.maximum"(%t202, %t203) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t205 = "stablehlo.broadcast_in_dim"(%t204) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x40xf32>
    %t206 = "stablehlo.subtract"(%t200, %t205) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t207 = "stablehlo.exponential"(%t206) : (tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t208 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t209 = "stablehlo.reduce"(%t207, %t208) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<1x8x2x40xf32>, tensor<f32>) -> tensor<1x8x2xf32>
    %t210 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<1x8x2xf32>} : () -> tensor<1x8x2xf32>
    %t211 = "stablehlo.maximum"(%t209, %t210) : (tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
    %t212 = "stablehlo.broadcast_in_dim"(%t211) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x8x2xf32>) -> tensor<1x8x2x40xf32>
    %t213 = "stablehlo.divide"(%t207, %t212) : (tensor<1x8x2x40xf32>, tensor<1x8x2x40xf32>) -> tensor<1x8x2x40xf32>
    %t214 = "stablehlo.dot_general"(%t213, %t194) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]>} : (tensor<1x8x2x40xf32>, tensor<40x1x64xf32>) -> tensor<1x8x2x64xf32>
    %t215 = "stablehlo.transpose"(%t214) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<1x8x2x64xf32>) -> tensor<8x1x2x64xf32>
    %t216 = "stablehlo.reshape"(%t215) : (tensor<8x1x2x64xf32>) -> tensor<8x128xf32>
    %t217 = util.global.load @"model.layers.1.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t218 = "stablehlo.dot_general"(%t216, %t217) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
    %t219 = "stablehlo.add"(%t140, %t218) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t220 = util.global.load @"model.layers.1.post_attention_layernorm.weight" : tensor<128xf32>
    %t221 = "stablehlo.multiply"(%t219, %t219) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t222 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t223 = "stablehlo.reduce"(%t221, %t222) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    %t224 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<8xf32>} : () -> tensor<8xf32>
    %t225 = "stablehlo.divide"(%t223, %t224) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t226 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<8xf32>} : () -> tensor<8xf32>
    %t227 = "stablehlo.add"(%t225, %t226) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %t228 = "stablehlo.rsqrt"(%t227) : (tensor<8xf32>) -> tensor<8xf32>
    %t229 = "stablehlo.broadcast_in_dim"(%t228) {broadcast_dimensions = array<i64: 0>} : (tensor<8xf32>) -> tensor<8x128xf32>
    %t230 = "stablehlo.multiply"(%t219, %t229) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t231 = "stablehlo.broadcast_in_dim"(%t220) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %t232 = "stablehlo.multiply"(%t231, %t230) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t233 = util.global.load @"model.layers.1.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t234 = "stablehlo.dot_general"(%t232, %t233) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x256xf32>) -> tensor<8x256xf32>
    %t235 = util.global.load @"model.layers.1.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t236 = "stablehlo.dot_general"(%t232, %t235) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x128xf32>, tensor<128x256xf32>) -> tensor<8x256xf32>
    %t237 = "stablehlo.negate"(%t234) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t238 = "stablehlo.exponential"(%t237) : (tensor<8x256xf32>) -> tensor<8x256xf32>
    %t239 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<8x256xf32>} : () -> tensor<8x256xf32>
    %t240 = "stablehlo.add"(%t238, %t239) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t241 = "stablehlo.divide"(%t234, %t240) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t242 = "stablehlo.multiply"(%t241, %t236) : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
    %t243 = util.global.load @"model.layers.1.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t244 = "stablehlo.dot_general"(%t242, %t243) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x256xf32>, tensor<256x128xf32>) -> tensor<8x128xf32>
    %t245 = "stablehlo.add"(%t219, %t244) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %t246 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t247 = "stablehlo.subtract"(%valid_rows, %t246) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %t248 = "stablehlo.dynamic_slice"(%t245, %t247, %t7) {slice_sizes = array<i64: 1, 128>} : (tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<1x128xf32>
    %t249 = util.global.load @"model.norm.weight" : tensor<128xf32>
    %t250 = "stablehlo.multiply"(%t248, %t248) : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
    %t251 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t252 = "stablehlo.reduce"(%t250, %t251) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<1x128xf32>, tensor<f32>) -> tensor<1xf32>
    %t253 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<1xf32>} : () -> tensor<1xf32>
    %t254 = "stablehlo.divide"(%t252, %t253) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t255 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<1xf32>} : () -> tensor<1xf32>
    %t256 = "stablehlo.add"(%t254, %t255) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %t257 = "stablehlo.rsqrt"(%t256) : (tensor<1xf32>) -> tensor<1xf32>
    %t258 = "stablehlo.broadcast_in_dim"(%t257) {broadcast_dimensions = array<i64: 0>} : (tensor<1xf32>) -> tensor<1x128xf32>
    %t259 = "stablehlo.multiply"(%t248, %t258) : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
    %t260 = "stablehlo.broadcast_in_dim"(%t249) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<1x128xf32>
    %t261 = "stablehlo.multiply"(%t260, %t259) : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
    %t262 = util.global.load @"lm_head.weight#t" : tensor<128x512xf32>
    %t263 = "stablehlo.dot_general"(%t261, %t262) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<1x128xf32>, tensor<128x512xf32>) -> tensor<1x512xf32>
    %t264 = "stablehlo.reshape"(%t64) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t265 = "stablehlo.reshape"(%t36) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t266 = "stablehlo.reshape"(%t184) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t267 = "stablehlo.reshape"(%t162) : (tensor<8x1x64xf32>) -> tensor<1x1x1x8x1x64xf32>
    %t268 = "stablehlo.concatenate"(%t264, %t265, %t266, %t267) {dimension = 1 : i64} : (tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>, tensor<1x1x1x8x1x64xf32>) -> tensor<1x4x1x8x1x64xf32>
    %t269 = "stablehlo.reshape"(%t268) : (tensor<1x4x1x8x1x64xf32>) -> tensor<2x2x1x8x1x64xf32>
    %t270 = "stablehlo.dynamic_slice"(%t65, %t7, %t7, %slot, %start, %t7, %t7) {slice_sizes = array<i64: 2, 2, 1, 8, 1, 64>} : (tensor<2x2x2x40x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x1x8x1x64xf32>
    %t271 = "stablehlo.broadcast_in_dim"(%t4) {broadcast_dimensions = array<i64: 3>} : (tensor<8xi1>) -> tensor<2x2x1x8x1x64xi1>
    %t272 = "stablehlo.select"(%t271, %t269, %t270) : (tensor<2x2x1x8x1x64xi1>, tensor<2x2x1x8x1x64xf32>, tensor<2x2x1x8x1x64xf32>) -> tensor<2x2x1x8x1x64xf32>
    %t273 = "stablehlo.dynamic_update_slice"(%t65, %t272, %t7, %t7, %slot, %start, %t7, %t7) : (tensor<2x2x2x40x1x64xf32>, tensor<2x2x1x8x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    util.global.store %t273, @kv_cache : tensor<2x2x2x40x1x64xf32>
    return %t263 : tensor<1x512xf32>
  }

  func.func @decode_8(%tokens: tensor<2xi32>, %cache_index: tensor<2xi32>, %positions: tensor<2xi32>, %active: tensor<2xi32>) -> tensor<2x512xf32> {
    %t0 = "stablehlo.convert"(%positions) : (tensor<2xi32>) -> tensor<2xf32>
    %t1 = "stablehlo.constant"() {value = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
    %t2 = "stablehlo.compare"(%active, %t1) {comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %t3 = "stablehlo.constant"() {value = dense<32> : tensor<2xi32>} : () -> tensor<2xi32>
    %t4 = "stablehlo.select"(%t2, %cache_index, %t3) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
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
    %t22 = util.global.load @"model.layers.0.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t23 = "stablehlo.dot_general"(%t21, %t22) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t24 = util.global.load @"model.layers.0.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t25 = "stablehlo.dot_general"(%t21, %t24) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
    %t26 = util.global.load @"model.layers.0.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t27 = "stablehlo.dot_general"(%t21, %t26) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
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
    %t60 = "stablehlo.slice"(%t59) {start_indices = array<i64: 0, 0, 0, 0, 0, 0>, limit_indices = array<i64: 1, 1, 2, 8, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x8x1x64xf32>
    %t61 = "stablehlo.reshape"(%t60) : (tensor<1x1x2x8x1x64xf32>) -> tensor<2x8x1x64xf32>
    %t62 = "stablehlo.slice"(%t59) {start_indices = array<i64: 0, 1, 0, 0, 0, 0>, limit_indices = array<i64: 1, 2, 2, 8, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x8x1x64xf32>
    %t63 = "stablehlo.reshape"(%t62) : (tensor<1x1x2x8x1x64xf32>) -> tensor<2x8x1x64xf32>
    %t64 = "stablehlo.reshape"(%t58) : (tensor<2x1x64xf32>) -> tensor<2x1x1x64xf32>
    %t65 = "stablehlo.concatenate"(%t61, %t64) {dimension = 1 : i64} : (tensor<2x8x1x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x9x1x64xf32>
    %t66 = "stablehlo.reshape"(%t30) : (tensor<2x1x64xf32>) -> tensor<2x1x1x64xf32>
    %t67 = "stablehlo.concatenate"(%t63, %t66) {dimension = 1 : i64} : (tensor<2x8x1x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x9x1x64xf32>
    %t68 = "stablehlo.reshape"(%t47) : (tensor<2x2x64xf32>) -> tensor<2x1x2x64xf32>
    %t69 = "stablehlo.dot_general"(%t68, %t65) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x1x2x64xf32>, tensor<2x9x1x64xf32>) -> tensor<2x1x2x9xf32>
    %t70 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<2x1x2x9xf32>} : () -> tensor<2x1x2x9xf32>
    %t71 = "stablehlo.multiply"(%t69, %t70) : (tensor<2x1x2x9xf32>, tensor<2x1x2x9xf32>) -> tensor<2x1x2x9xf32>
    %t72 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x9xi32>
    %t73 = "stablehlo.broadcast_in_dim"(%cache_index) {broadcast_dimensions = array<i64: 0>} : (tensor<2xi32>) -> tensor<2x9xi32>
    %t74 = "stablehlo.compare"(%t72, %t73) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<2x9xi32>, tensor<2x9xi32>) -> tensor<2x9xi1>
    %t75 = "stablehlo.constant"() {value = dense<8> : tensor<2x9xi32>} : () -> tensor<2x9xi32>
    %t76 = "stablehlo.compare"(%t72, %t75) {comparison_direction = #stablehlo<comparison_direction EQ>} : (tensor<2x9xi32>, tensor<2x9xi32>) -> tensor<2x9xi1>
    %t77 = "stablehlo.or"(%t74, %t76) : (tensor<2x9xi1>, tensor<2x9xi1>) -> tensor<2x9xi1>
    %t78 = "stablehlo.broadcast_in_dim"(%t77) {broadcast_dimensions = array<i64: 0, 3>} : (tensor<2x9xi1>) -> tensor<2x1x2x9xi1>
    %t79 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<2x1x2x9xf32>} : () -> tensor<2x1x2x9xf32>
    %t80 = "stablehlo.select"(%t78, %t71, %t79) : (tensor<2x1x2x9xi1>, tensor<2x1x2x9xf32>, tensor<2x1x2x9xf32>) -> tensor<2x1x2x9xf32>
    %t81 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t82 = "stablehlo.reduce"(%t80, %t81) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x9xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t83 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t84 = "stablehlo.maximum"(%t82, %t83) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t85 = "stablehlo.broadcast_in_dim"(%t84) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x9xf32>
    %t86 = "stablehlo.subtract"(%t80, %t85) : (tensor<2x1x2x9xf32>, tensor<2x1x2x9xf32>) -> tensor<2x1x2x9xf32>
    %t87 = "stablehlo.exponential"(%t86) : (tensor<2x1x2x9xf32>) -> tensor<2x1x2x9xf32>
    %t88 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t89 = "stablehlo.reduce"(%t87, %t88) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x9xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t90 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t91 = "stablehlo.maximum"(%t89, %t90) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t92 = "stablehlo.broadcast_in_dim"(%t91) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x9xf32>
    %t93 = "stablehlo.divide"(%t87, %t92) : (tensor<2x1x2x9xf32>, tensor<2x1x2x9xf32>) -> tensor<2x1x2x9xf32>
    %t94 = "stablehlo.dot_general"(%t93, %t67) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>} : (tensor<2x1x2x9xf32>, tensor<2x9x1x64xf32>) -> tensor<2x1x2x64xf32>
    %t95 = "stablehlo.reshape"(%t94) : (tensor<2x1x2x64xf32>) -> tensor<2x128xf32>
    %t96 = util.global.load @"model.layers.0.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t97 = "stablehlo.dot_general"(%t95, %t96) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t98 = "stablehlo.add"(%t8, %t97) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t99 = util.global.load @"model.layers.0.post_attention_layernorm.weight" : tensor<128xf32>
    %t100 = "stablehlo.multiply"(%t98, %t98) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t101 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t102 = "stablehlo.reduce"(%t100, %t101) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t103 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t104 = "stablehlo.divide"(%t102, %t103) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t105 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t106 = "stablehlo.add"(%t104, %t105) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t107 = "stablehlo.rsqrt"(%t106) : (tensor<2xf32>) -> tensor<2xf32>
    %t108 = "stablehlo.broadcast_in_dim"(%t107) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t109 = "stablehlo.multiply"(%t98, %t108) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t110 = "stablehlo.broadcast_in_dim"(%t99) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t111 = "stablehlo.multiply"(%t110, %t109) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t112 = util.global.load @"model.layers.0.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t113 = "stablehlo.dot_general"(%t111, %t112) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x256xf32>) -> tensor<2x256xf32>
    %t114 = util.global.load @"model.layers.0.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t115 = "stablehlo.dot_general"(%t111, %t114) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x256xf32>) -> tensor<2x256xf32>
    %t116 = "stablehlo.negate"(%t113) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t117 = "stablehlo.exponential"(%t116) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t118 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<2x256xf32>} : () -> tensor<2x256xf32>
    %t119 = "stablehlo.add"(%t117, %t118) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t120 = "stablehlo.divide"(%t113, %t119) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t121 = "stablehlo.multiply"(%t120, %t115) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t122 = util.global.load @"model.layers.0.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t123 = "stablehlo.dot_general"(%t121, %t122) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x256xf32>, tensor<256x128xf32>) -> tensor<2x128xf32>
    %t124 = "stablehlo.add"(%t98, %t123) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t125 = util.global.load @"model.layers.1.input_layernorm.weight" : tensor<128xf32>
    %t126 = "stablehlo.multiply"(%t124, %t124) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t127 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t128 = "stablehlo.reduce"(%t126, %t127) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t129 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t130 = "stablehlo.divide"(%t128, %t129) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t131 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t132 = "stablehlo.add"(%t130, %t131) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t133 = "stablehlo.rsqrt"(%t132) : (tensor<2xf32>) -> tensor<2xf32>
    %t134 = "stablehlo.broadcast_in_dim"(%t133) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t135 = "stablehlo.multiply"(%t124, %t134) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t136 = "stablehlo.broadcast_in_dim"(%t125) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t137 = "stablehlo.multiply"(%t136, %t135) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t138 = util.global.load @"model.layers.1.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t139 = "stablehlo.dot_general"(%t137, %t138) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t140 = util.global.load @"model.layers.1.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t141 = "stablehlo.dot_general"(%t137, %t140) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
    %t142 = util.global.load @"model.layers.1.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t143 = "stablehlo.dot_general"(%t137, %t142) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
    %t144 = "stablehlo.reshape"(%t139) : (tensor<2x128xf32>) -> tensor<2x2x64xf32>
    %t145 = "stablehlo.reshape"(%t141) : (tensor<2x64xf32>) -> tensor<2x1x64xf32>
    %t146 = "stablehlo.reshape"(%t143) : (tensor<2x64xf32>) -> tensor<2x1x64xf32>
    %t147 = "stablehlo.broadcast_in_dim"(%t35) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x2x32xf32>
    %t148 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x2x32xf32>
    %t149 = "stablehlo.slice"(%t144) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<2x2x64xf32>) -> tensor<2x2x32xf32>
    %t150 = "stablehlo.slice"(%t144) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 2, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x2x64xf32>) -> tensor<2x2x32xf32>
    %t151 = "stablehlo.multiply"(%t149, %t147) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t152 = "stablehlo.multiply"(%t150, %t148) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t153 = "stablehlo.subtract"(%t151, %t152) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t154 = "stablehlo.multiply"(%t150, %t147) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t155 = "stablehlo.multiply"(%t149, %t148) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t156 = "stablehlo.add"(%t154, %t155) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t157 = "stablehlo.concatenate"(%t153, %t156) {dimension = 2 : i64} : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x64xf32>
    %t158 = "stablehlo.broadcast_in_dim"(%t35) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x1x32xf32>
    %t159 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x1x32xf32>
    %t160 = "stablehlo.slice"(%t145) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<2x1x32xf32>
    %t161 = "stablehlo.slice"(%t145) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 2, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<2x1x32xf32>
    %t162 = "stablehlo.multiply"(%t160, %t158) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t163 = "stablehlo.multiply"(%t161, %t159) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t164 = "stablehlo.subtract"(%t162, %t163) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t165 = "stablehlo.multiply"(%t161, %t158) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t166 = "stablehlo.multiply"(%t160, %t159) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t167 = "stablehlo.add"(%t165, %t166) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t168 = "stablehlo.concatenate"(%t164, %t167) {dimension = 2 : i64} : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x64xf32>
    %t169 = "stablehlo.slice"(%t59) {start_indices = array<i64: 1, 0, 0, 0, 0, 0>, limit_indices = array<i64: 2, 1, 2, 8, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x8x1x64xf32>
    %t170 = "stablehlo.reshape"(%t169) : (tensor<1x1x2x8x1x64xf32>) -> tensor<2x8x1x64xf32>
    %t171 = "stablehlo.slice"(%t59) {start_indices = array<i64: 1, 1, 0, 0, 0, 0>, limit_indices = array<i64: 2, 2, 2, 8, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x8x1x64xf32>
    %t172 = "stablehlo.reshape"(%t171) : (tensor<1x1x2x8x1x64xf32>) -> tensor<2x8x1x64xf32>
    %t173 = "stablehlo.reshape"(%t168) : (tensor<2x1x64xf32>) -> tensor<2x1x1x64xf32>
    %t174 = "stablehlo.concatenate"(%t170, %t173) {dimension = 1 : i64} : (tensor<2x8x1x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x9x1x64xf32>
    %t175 = "stablehlo.reshape"(%t146) : (tensor<2x1x64xf32>) -> tensor<2x1x1x64xf32>
    %t176 = "stablehlo.concatenate"(%t172, %t175) {dimension = 1 : i64} : (tensor<2x8x1x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x9x1x64xf32>
    %t177 = "stablehlo.reshape"(%t157) : (tensor<2x2x64xf32>) -> tensor<2x1x2x64xf32>
    %t178 = "stablehlo.dot_general"(%t177, %t174) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x1x2x64xf32>, tensor<2x9x1x64xf32>) -> tensor<2x1x2x9xf32>
    %t179 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<2x1x2x9xf32>} : () -> tensor<2x1x2x9xf32>
    %t180 = "stablehlo.multiply"(%t178, %t179) : (tensor<2x1x2x9xf32>, tensor<2x1x2x9xf32>) -> tensor<2x1x2x9xf32>
    %t181 = "stablehlo.broadcast_in_dim"(%t77) {broadcast_dimensions = array<i64: 0, 3>} : (tensor<2x9xi1>) -> tensor<2x1x2x9xi1>
    %t182 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<2x1x2x9xf32>} : () -> tensor<2x1x2x9xf32>
    %t183 = "stablehlo.select"(%t181, %t180, %t182) : (tensor<2x1x2x9xi1>, tensor<2x1x2x9xf32>, tensor<2x1x2x9xf32>) -> tensor<2x1x2x9xf32>
    %t184 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t185 = "stablehlo.reduce"(%t183, %t184) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x9xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t186 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t187 = "stablehlo.maximum"(%t185, %t186) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t188 = "stablehlo.broadcast_in_dim"(%t187) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x9xf32>
    %t189 = "stablehlo.subtract"(%t183, %t188) : (tensor<2x1x2x9xf32>, tensor<2x1x2x9xf32>) -> tensor<2x1x2x9xf32>
    %t190 = "stablehlo.exponential"(%t189) : (tensor<2x1x2x9xf32>) -> tensor<2x1x2x9xf32>
    %t191 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t192 = "stablehlo.reduce"(%t190, %t191) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x9xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t193 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t194 = "stablehlo.maximum"(%t192, %t193) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t195 = "stablehlo.broadcast_in_dim"(%t194) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x9xf32>
    %t196 = "stablehlo.divide"(%t190, %t195) : (tensor<2x1x2x9xf32>, tensor<2x1x2x9xf32>) -> tensor<2x1x2x9xf32>
    %t197 = "stablehlo.dot_general"(%t196, %t176) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>} : (tensor<2x1x2x9xf32>, tensor<2x9x1x64xf32>) -> tensor<2x1x2x64xf32>
    %t198 = "stablehlo.reshape"(%t197) : (tensor<2x1x2x64xf32>) -> tensor<2x128xf32>
    %t199 = util.global.load @"model.layers.1.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t200 = "stablehlo.dot_general"(%t198, %t199) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t201 = "stablehlo.add"(%t124, %t200) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t202 = util.global.load @"model.layers.1.post_attention_layernorm.weight" : tensor<128xf32>
    %t203 = "stablehlo.multiply"(%t201, %t201) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t204 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t205 = "stablehlo.reduce"(%t203, %t204) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t206 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t207 = "stablehlo.divide"(%t205, %t206) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t208 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t209 = "stablehlo.add"(%t207, %t208) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t210 = "stablehlo.rsqrt"(%t209) : (tensor<2xf32>) -> tensor<2xf32>
    %t211 = "stablehlo.broadcast_in_dim"(%t210) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t212 = "stablehlo.multiply"(%t201, %t211) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t213 = "stablehlo.broadcast_in_dim"(%t202) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t214 = "stablehlo.multiply"(%t213, %t212) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t215 = util.global.load @"model.layers.1.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t216 = "stablehlo.dot_general"(%t214, %t215) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x256xf32>) -> tensor<2x256xf32>
    %t217 = util.global.load @"model.layers.1.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t218 = "stablehlo.dot_general"(%t214, %t217) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x256xf32>) -> tensor<2x256xf32>
    %t219 = "stablehlo.negate"(%t216) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t220 = "stablehlo.exponential"(%t219) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t221 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<2x256xf32>} : () -> tensor<2x256xf32>
    %t222 = "stablehlo.add"(%t220, %t221) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t223 = "stablehlo.divide"(%t216, %t222) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t224 = "stablehlo.multiply"(%t223, %t218) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t225 = util.global.load @"model.layers.1.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t226 = "stablehlo.dot_general"(%t224, %t225) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x256xf32>, tensor<256x128xf32>) -> tensor<2x128xf32>
    %t227 = "stablehlo.add"(%t201, %t226) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t228 = util.global.load @"model.norm.weight" : tensor<128xf32>
    %t229 = "stablehlo.multiply"(%t227, %t227) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t230 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t231 = "stablehlo.reduce"(%t229, %t230) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t232 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t233 = "stablehlo.divide"(%t231, %t232) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t234 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t235 = "stablehlo.add"(%t233, %t234) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t236 = "stablehlo.rsqrt"(%t235) : (tensor<2xf32>) -> tensor<2xf32>
    %t237 = "stablehlo.broadcast_in_dim"(%t236) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t238 = "stablehlo.multiply"(%t227, %t237) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t239 = "stablehlo.broadcast_in_dim"(%t228) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t240 = "stablehlo.multiply"(%t239, %t238) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t241 = util.global.load @"lm_head.weight#t" : tensor<128x512xf32>
    %t242 = "stablehlo.dot_general"(%t240, %t241) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x512xf32>) -> tensor<2x512xf32>
    %t243 = "stablehlo.reshape"(%t58) : (tensor<2x1x64xf32>) -> tensor<1x1x2x1x1x64xf32>
    %t244 = "stablehlo.reshape"(%t30) : (tensor<2x1x64xf32>) -> tensor<1x1x2x1x1x64xf32>
    %t245 = "stablehlo.reshape"(%t168) : (tensor<2x1x64xf32>) -> tensor<1x1x2x1x1x64xf32>
    %t246 = "stablehlo.reshape"(%t146) : (tensor<2x1x64xf32>) -> tensor<1x1x2x1x1x64xf32>
    %t247 = "stablehlo.concatenate"(%t243, %t244, %t245, %t246) {dimension = 1 : i64} : (tensor<1x1x2x1x1x64xf32>, tensor<1x1x2x1x1x64xf32>, tensor<1x1x2x1x1x64xf32>, tensor<1x1x2x1x1x64xf32>) -> tensor<1x4x2x1x1x64xf32>
    %t248 = "stablehlo.reshape"(%t247) : (tensor<1x4x2x1x1x64xf32>) -> tensor<2x2x2x1x1x64xf32>
    %t249 = "stablehlo.slice"(%t248) {start_indices = array<i64: 0, 0, 0, 0, 0, 0>, limit_indices = array<i64: 2, 2, 1, 1, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x1x1x64xf32>) -> tensor<2x2x1x1x1x64xf32>
    %t250 = "stablehlo.slice"(%t4) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t251 = "stablehlo.reshape"(%t250) : (tensor<1xi32>) -> tensor<i32>
    %t252 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t253 = "stablehlo.dynamic_update_slice"(%t59, %t249, %t5, %t5, %t252, %t251, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<2x2x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t254 = "stablehlo.slice"(%t248) {start_indices = array<i64: 0, 0, 1, 0, 0, 0>, limit_indices = array<i64: 2, 2, 2, 1, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x1x1x64xf32>) -> tensor<2x2x1x1x1x64xf32>
    %t255 = "stablehlo.slice"(%t4) {start_indices = array<i64: 1>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t256 = "stablehlo.reshape"(%t255) : (tensor<1xi32>) -> tensor<i32>
    %t257 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t258 = "stablehlo.dynamic_update_slice"(%t253, %t254, %t5, %t5, %t257, %t256, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<2x2x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    util.global.store %t258, @kv_cache : tensor<2x2x2x40x1x64xf32>
    return %t242 : tensor<2x512xf32>
  }

  func.func @decode_16(%tokens: tensor<2xi32>, %cache_index: tensor<2xi32>, %positions: tensor<2xi32>, %active: tensor<2xi32>) -> tensor<2x512xf32> {
    %t0 = "stablehlo.convert"(%positions) : (tensor<2xi32>) -> tensor<2xf32>
    %t1 = "stablehlo.constant"() {value = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
    %t2 = "stablehlo.compare"(%active, %t1) {comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %t3 = "stablehlo.constant"() {value = dense<32> : tensor<2xi32>} : () -> tensor<2xi32>
    %t4 = "stablehlo.select"(%t2, %cache_index, %t3) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
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
    %t22 = util.global.load @"model.layers.0.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t23 = "stablehlo.dot_general"(%t21, %t22) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t24 = util.global.load @"model.layers.0.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t25 = "stablehlo.dot_general"(%t21, %t24) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
    %t26 = util.global.load @"model.layers.0.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t27 = "stablehlo.dot_general"(%t21, %t26) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
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
    %t60 = "stablehlo.slice"(%t59) {start_indices = array<i64: 0, 0, 0, 0, 0, 0>, limit_indices = array<i64: 1, 1, 2, 16, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x16x1x64xf32>
    %t61 = "stablehlo.reshape"(%t60) : (tensor<1x1x2x16x1x64xf32>) -> tensor<2x16x1x64xf32>
    %t62 = "stablehlo.slice"(%t59) {start_indices = array<i64: 0, 1, 0, 0, 0, 0>, limit_indices = array<i64: 1, 2, 2, 16, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x16x1x64xf32>
    %t63 = "stablehlo.reshape"(%t62) : (tensor<1x1x2x16x1x64xf32>) -> tensor<2x16x1x64xf32>
    %t64 = "stablehlo.reshape"(%t58) : (tensor<2x1x64xf32>) -> tensor<2x1x1x64xf32>
    %t65 = "stablehlo.concatenate"(%t61, %t64) {dimension = 1 : i64} : (tensor<2x16x1x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x17x1x64xf32>
    %t66 = "stablehlo.reshape"(%t30) : (tensor<2x1x64xf32>) -> tensor<2x1x1x64xf32>
    %t67 = "stablehlo.concatenate"(%t63, %t66) {dimension = 1 : i64} : (tensor<2x16x1x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x17x1x64xf32>
    %t68 = "stablehlo.reshape"(%t47) : (tensor<2x2x64xf32>) -> tensor<2x1x2x64xf32>
    %t69 = "stablehlo.dot_general"(%t68, %t65) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x1x2x64xf32>, tensor<2x17x1x64xf32>) -> tensor<2x1x2x17xf32>
    %t70 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<2x1x2x17xf32>} : () -> tensor<2x1x2x17xf32>
    %t71 = "stablehlo.multiply"(%t69, %t70) : (tensor<2x1x2x17xf32>, tensor<2x1x2x17xf32>) -> tensor<2x1x2x17xf32>
    %t72 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x17xi32>
    %t73 = "stablehlo.broadcast_in_dim"(%cache_index) {broadcast_dimensions = array<i64: 0>} : (tensor<2xi32>) -> tensor<2x17xi32>
    %t74 = "stablehlo.compare"(%t72, %t73) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<2x17xi32>, tensor<2x17xi32>) -> tensor<2x17xi1>
    %t75 = "stablehlo.constant"() {value = dense<16> : tensor<2x17xi32>} : () -> tensor<2x17xi32>
    %t76 = "stablehlo.compare"(%t72, %t75) {comparison_direction = #stablehlo<comparison_direction EQ>} : (tensor<2x17xi32>, tensor<2x17xi32>) -> tensor<2x17xi1>
    %t77 = "stablehlo.or"(%t74, %t76) : (tensor<2x17xi1>, tensor<2x17xi1>) -> tensor<2x17xi1>
    %t78 = "stablehlo.broadcast_in_dim"(%t77) {broadcast_dimensions = array<i64: 0, 3>} : (tensor<2x17xi1>) -> tensor<2x1x2x17xi1>
    %t79 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<2x1x2x17xf32>} : () -> tensor<2x1x2x17xf32>
    %t80 = "stablehlo.select"(%t78, %t71, %t79) : (tensor<2x1x2x17xi1>, tensor<2x1x2x17xf32>, tensor<2x1x2x17xf32>) -> tensor<2x1x2x17xf32>
    %t81 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t82 = "stablehlo.reduce"(%t80, %t81) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x17xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t83 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t84 = "stablehlo.maximum"(%t82, %t83) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t85 = "stablehlo.broadcast_in_dim"(%t84) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x17xf32>
    %t86 = "stablehlo.subtract"(%t80, %t85) : (tensor<2x1x2x17xf32>, tensor<2x1x2x17xf32>) -> tensor<2x1x2x17xf32>
    %t87 = "stablehlo.exponential"(%t86) : (tensor<2x1x2x17xf32>) -> tensor<2x1x2x17xf32>
    %t88 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t89 = "stablehlo.reduce"(%t87, %t88) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x17xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t90 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t91 = "stablehlo.maximum"(%t89, %t90) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t92 = "stablehlo.broadcast_in_dim"(%t91) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x17xf32>
    %t93 = "stablehlo.divide"(%t87, %t92) : (tensor<2x1x2x17xf32>, tensor<2x1x2x17xf32>) -> tensor<2x1x2x17xf32>
    %t94 = "stablehlo.dot_general"(%t93, %t67) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>} : (tensor<2x1x2x17xf32>, tensor<2x17x1x64xf32>) -> tensor<2x1x2x64xf32>
    %t95 = "stablehlo.reshape"(%t94) : (tensor<2x1x2x64xf32>) -> tensor<2x128xf32>
    %t96 = util.global.load @"model.layers.0.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t97 = "stablehlo.dot_general"(%t95, %t96) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t98 = "stablehlo.add"(%t8, %t97) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t99 = util.global.load @"model.layers.0.post_attention_layernorm.weight" : tensor<128xf32>
    %t100 = "stablehlo.multiply"(%t98, %t98) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t101 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t102 = "stablehlo.reduce"(%t100, %t101) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t103 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t104 = "stablehlo.divide"(%t102, %t103) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t105 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t106 = "stablehlo.add"(%t104, %t105) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t107 = "stablehlo.rsqrt"(%t106) : (tensor<2xf32>) -> tensor<2xf32>
    %t108 = "stablehlo.broadcast_in_dim"(%t107) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t109 = "stablehlo.multiply"(%t98, %t108) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t110 = "stablehlo.broadcast_in_dim"(%t99) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t111 = "stablehlo.multiply"(%t110, %t109) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t112 = util.global.load @"model.layers.0.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t113 = "stablehlo.dot_general"(%t111, %t112) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x256xf32>) -> tensor<2x256xf32>
    %t114 = util.global.load @"model.layers.0.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t115 = "stablehlo.dot_general"(%t111, %t114) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x256xf32>) -> tensor<2x256xf32>
    %t116 = "stablehlo.negate"(%t113) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t117 = "stablehlo.exponential"(%t116) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t118 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<2x256xf32>} : () -> tensor<2x256xf32>
    %t119 = "stablehlo.add"(%t117, %t118) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t120 = "stablehlo.divide"(%t113, %t119) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t121 = "stablehlo.multiply"(%t120, %t115) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t122 = util.global.load @"model.layers.0.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t123 = "stablehlo.dot_general"(%t121, %t122) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x256xf32>, tensor<256x128xf32>) -> tensor<2x128xf32>
    %t124 = "stablehlo.add"(%t98, %t123) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t125 = util.global.load @"model.layers.1.input_layernorm.weight" : tensor<128xf32>
    %t126 = "stablehlo.multiply"(%t124, %t124) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t127 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t128 = "stablehlo.reduce"(%t126, %t127) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t129 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t130 = "stablehlo.divide"(%t128, %t129) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t131 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t132 = "stablehlo.add"(%t130, %t131) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t133 = "stablehlo.rsqrt"(%t132) : (tensor<2xf32>) -> tensor<2xf32>
    %t134 = "stablehlo.broadcast_in_dim"(%t133) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t135 = "stablehlo.multiply"(%t124, %t134) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t136 = "stablehlo.broadcast_in_dim"(%t125) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t137 = "stablehlo.multiply"(%t136, %t135) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t138 = util.global.load @"model.layers.1.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t139 = "stablehlo.dot_general"(%t137, %t138) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t140 = util.global.load @"model.layers.1.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t141 = "stablehlo.dot_general"(%t137, %t140) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
    %t142 = util.global.load @"model.layers.1.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t143 = "stablehlo.dot_general"(%t137, %t142) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
    %t144 = "stablehlo.reshape"(%t139) : (tensor<2x128xf32>) -> tensor<2x2x64xf32>
    %t145 = "stablehlo.reshape"(%t141) : (tensor<2x64xf32>) -> tensor<2x1x64xf32>
    %t146 = "stablehlo.reshape"(%t143) : (tensor<2x64xf32>) -> tensor<2x1x64xf32>
    %t147 = "stablehlo.broadcast_in_dim"(%t35) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x2x32xf32>
    %t148 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x2x32xf32>
    %t149 = "stablehlo.slice"(%t144) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<2x2x64xf32>) -> tensor<2x2x32xf32>
    %t150 = "stablehlo.slice"(%t144) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 2, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x2x64xf32>) -> tensor<2x2x32xf32>
    %t151 = "stablehlo.multiply"(%t149, %t147) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t152 = "stablehlo.multiply"(%t150, %t148) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t153 = "stablehlo.subtract"(%t151, %t152) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t154 = "stablehlo.multiply"(%t150, %t147) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t155 = "stablehlo.multiply"(%t149, %t148) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t156 = "stablehlo.add"(%t154, %t155) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t157 = "stablehlo.concatenate"(%t153, %t156) {dimension = 2 : i64} : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x64xf32>
    %t158 = "stablehlo.broadcast_in_dim"(%t35) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x1x32xf32>
    %t159 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x1x32xf32>
    %t160 = "stablehlo.slice"(%t145) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<2x1x32xf32>
    %t161 = "stablehlo.slice"(%t145) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 2, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<2x1x32xf32>
    %t162 = "stablehlo.multiply"(%t160, %t158) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t163 = "stablehlo.multiply"(%t161, %t159) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t164 = "stablehlo.subtract"(%t162, %t163) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t165 = "stablehlo.multiply"(%t161, %t158) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t166 = "stablehlo.multiply"(%t160, %t159) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t167 = "stablehlo.add"(%t165, %t166) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t168 = "stablehlo.concatenate"(%t164, %t167) {dimension = 2 : i64} : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x64xf32>
    %t169 = "stablehlo.slice"(%t59) {start_indices = array<i64: 1, 0, 0, 0, 0, 0>, limit_indices = array<i64: 2, 1, 2, 16, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x16x1x64xf32>
    %t170 = "stablehlo.reshape"(%t169) : (tensor<1x1x2x16x1x64xf32>) -> tensor<2x16x1x64xf32>
    %t171 = "stablehlo.slice"(%t59) {start_indices = array<i64: 1, 1, 0, 0, 0, 0>, limit_indices = array<i64: 2, 2, 2, 16, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x16x1x64xf32>
    %t172 = "stablehlo.reshape"(%t171) : (tensor<1x1x2x16x1x64xf32>) -> tensor<2x16x1x64xf32>
    %t173 = "stablehlo.reshape"(%t168) : (tensor<2x1x64xf32>) -> tensor<2x1x1x64xf32>
    %t174 = "stablehlo.concatenate"(%t170, %t173) {dimension = 1 : i64} : (tensor<2x16x1x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x17x1x64xf32>
    %t175 = "stablehlo.reshape"(%t146) : (tensor<2x1x64xf32>) -> tensor<2x1x1x64xf32>
    %t176 = "stablehlo.concatenate"(%t172, %t175) {dimension = 1 : i64} : (tensor<2x16x1x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x17x1x64xf32>
    %t177 = "stablehlo.reshape"(%t157) : (tensor<2x2x64xf32>) -> tensor<2x1x2x64xf32>
    %t178 = "stablehlo.dot_general"(%t177, %t174) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x1x2x64xf32>, tensor<2x17x1x64xf32>) -> tensor<2x1x2x17xf32>
    %t179 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<2x1x2x17xf32>} : () -> tensor<2x1x2x17xf32>
    %t180 = "stablehlo.multiply"(%t178, %t179) : (tensor<2x1x2x17xf32>, tensor<2x1x2x17xf32>) -> tensor<2x1x2x17xf32>
    %t181 = "stablehlo.broadcast_in_dim"(%t77) {broadcast_dimensions = array<i64: 0, 3>} : (tensor<2x17xi1>) -> tensor<2x1x2x17xi1>
    %t182 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<2x1x2x17xf32>} : () -> tensor<2x1x2x17xf32>
    %t183 = "stablehlo.select"(%t181, %t180, %t182) : (tensor<2x1x2x17xi1>, tensor<2x1x2x17xf32>, tensor<2x1x2x17xf32>) -> tensor<2x1x2x17xf32>
    %t184 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t185 = "stablehlo.reduce"(%t183, %t184) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x17xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t186 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t187 = "stablehlo.maximum"(%t185, %t186) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t188 = "stablehlo.broadcast_in_dim"(%t187) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x17xf32>
    %t189 = "stablehlo.subtract"(%t183, %t188) : (tensor<2x1x2x17xf32>, tensor<2x1x2x17xf32>) -> tensor<2x1x2x17xf32>
    %t190 = "stablehlo.exponential"(%t189) : (tensor<2x1x2x17xf32>) -> tensor<2x1x2x17xf32>
    %t191 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t192 = "stablehlo.reduce"(%t190, %t191) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x17xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t193 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t194 = "stablehlo.maximum"(%t192, %t193) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t195 = "stablehlo.broadcast_in_dim"(%t194) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x17xf32>
    %t196 = "stablehlo.divide"(%t190, %t195) : (tensor<2x1x2x17xf32>, tensor<2x1x2x17xf32>) -> tensor<2x1x2x17xf32>
    %t197 = "stablehlo.dot_general"(%t196, %t176) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>} : (tensor<2x1x2x17xf32>, tensor<2x17x1x64xf32>) -> tensor<2x1x2x64xf32>
    %t198 = "stablehlo.reshape"(%t197) : (tensor<2x1x2x64xf32>) -> tensor<2x128xf32>
    %t199 = util.global.load @"model.layers.1.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t200 = "stablehlo.dot_general"(%t198, %t199) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t201 = "stablehlo.add"(%t124, %t200) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t202 = util.global.load @"model.layers.1.post_attention_layernorm.weight" : tensor<128xf32>
    %t203 = "stablehlo.multiply"(%t201, %t201) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t204 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t205 = "stablehlo.reduce"(%t203, %t204) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t206 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t207 = "stablehlo.divide"(%t205, %t206) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t208 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t209 = "stablehlo.add"(%t207, %t208) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t210 = "stablehlo.rsqrt"(%t209) : (tensor<2xf32>) -> tensor<2xf32>
    %t211 = "stablehlo.broadcast_in_dim"(%t210) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t212 = "stablehlo.multiply"(%t201, %t211) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t213 = "stablehlo.broadcast_in_dim"(%t202) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t214 = "stablehlo.multiply"(%t213, %t212) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t215 = util.global.load @"model.layers.1.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t216 = "stablehlo.dot_general"(%t214, %t215) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x256xf32>) -> tensor<2x256xf32>
    %t217 = util.global.load @"model.layers.1.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t218 = "stablehlo.dot_general"(%t214, %t217) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x256xf32>) -> tensor<2x256xf32>
    %t219 = "stablehlo.negate"(%t216) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t220 = "stablehlo.exponential"(%t219) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t221 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<2x256xf32>} : () -> tensor<2x256xf32>
    %t222 = "stablehlo.add"(%t220, %t221) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t223 = "stablehlo.divide"(%t216, %t222) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t224 = "stablehlo.multiply"(%t223, %t218) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t225 = util.global.load @"model.layers.1.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t226 = "stablehlo.dot_general"(%t224, %t225) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x256xf32>, tensor<256x128xf32>) -> tensor<2x128xf32>
    %t227 = "stablehlo.add"(%t201, %t226) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t228 = util.global.load @"model.norm.weight" : tensor<128xf32>
    %t229 = "stablehlo.multiply"(%t227, %t227) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t230 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t231 = "stablehlo.reduce"(%t229, %t230) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t232 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t233 = "stablehlo.divide"(%t231, %t232) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t234 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t235 = "stablehlo.add"(%t233, %t234) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t236 = "stablehlo.rsqrt"(%t235) : (tensor<2xf32>) -> tensor<2xf32>
    %t237 = "stablehlo.broadcast_in_dim"(%t236) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t238 = "stablehlo.multiply"(%t227, %t237) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t239 = "stablehlo.broadcast_in_dim"(%t228) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t240 = "stablehlo.multiply"(%t239, %t238) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t241 = util.global.load @"lm_head.weight#t" : tensor<128x512xf32>
    %t242 = "stablehlo.dot_general"(%t240, %t241) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x512xf32>) -> tensor<2x512xf32>
    %t243 = "stablehlo.reshape"(%t58) : (tensor<2x1x64xf32>) -> tensor<1x1x2x1x1x64xf32>
    %t244 = "stablehlo.reshape"(%t30) : (tensor<2x1x64xf32>) -> tensor<1x1x2x1x1x64xf32>
    %t245 = "stablehlo.reshape"(%t168) : (tensor<2x1x64xf32>) -> tensor<1x1x2x1x1x64xf32>
    %t246 = "stablehlo.reshape"(%t146) : (tensor<2x1x64xf32>) -> tensor<1x1x2x1x1x64xf32>
    %t247 = "stablehlo.concatenate"(%t243, %t244, %t245, %t246) {dimension = 1 : i64} : (tensor<1x1x2x1x1x64xf32>, tensor<1x1x2x1x1x64xf32>, tensor<1x1x2x1x1x64xf32>, tensor<1x1x2x1x1x64xf32>) -> tensor<1x4x2x1x1x64xf32>
    %t248 = "stablehlo.reshape"(%t247) : (tensor<1x4x2x1x1x64xf32>) -> tensor<2x2x2x1x1x64xf32>
    %t249 = "stablehlo.slice"(%t248) {start_indices = array<i64: 0, 0, 0, 0, 0, 0>, limit_indices = array<i64: 2, 2, 1, 1, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x1x1x64xf32>) -> tensor<2x2x1x1x1x64xf32>
    %t250 = "stablehlo.slice"(%t4) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t251 = "stablehlo.reshape"(%t250) : (tensor<1xi32>) -> tensor<i32>
    %t252 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t253 = "stablehlo.dynamic_update_slice"(%t59, %t249, %t5, %t5, %t252, %t251, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<2x2x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t254 = "stablehlo.slice"(%t248) {start_indices = array<i64: 0, 0, 1, 0, 0, 0>, limit_indices = array<i64: 2, 2, 2, 1, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x1x1x64xf32>) -> tensor<2x2x1x1x1x64xf32>
    %t255 = "stablehlo.slice"(%t4) {start_indices = array<i64: 1>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t256 = "stablehlo.reshape"(%t255) : (tensor<1xi32>) -> tensor<i32>
    %t257 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t258 = "stablehlo.dynamic_update_slice"(%t253, %t254, %t5, %t5, %t257, %t256, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<2x2x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    util.global.store %t258, @kv_cache : tensor<2x2x2x40x1x64xf32>
    return %t242 : tensor<2x512xf32>
  }

  func.func @decode(%tokens: tensor<2xi32>, %cache_index: tensor<2xi32>, %positions: tensor<2xi32>, %active: tensor<2xi32>) -> tensor<2x512xf32> {
    %t0 = "stablehlo.convert"(%positions) : (tensor<2xi32>) -> tensor<2xf32>
    %t1 = "stablehlo.constant"() {value = dense<0> : tensor<2xi32>} : () -> tensor<2xi32>
    %t2 = "stablehlo.compare"(%active, %t1) {comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %t3 = "stablehlo.constant"() {value = dense<32> : tensor<2xi32>} : () -> tensor<2xi32>
    %t4 = "stablehlo.select"(%t2, %cache_index, %t3) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
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
    %t22 = util.global.load @"model.layers.0.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t23 = "stablehlo.dot_general"(%t21, %t22) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t24 = util.global.load @"model.layers.0.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t25 = "stablehlo.dot_general"(%t21, %t24) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
    %t26 = util.global.load @"model.layers.0.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t27 = "stablehlo.dot_general"(%t21, %t26) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
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
    %t60 = "stablehlo.slice"(%t59) {start_indices = array<i64: 0, 0, 0, 0, 0, 0>, limit_indices = array<i64: 1, 1, 2, 32, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x32x1x64xf32>
    %t61 = "stablehlo.reshape"(%t60) : (tensor<1x1x2x32x1x64xf32>) -> tensor<2x32x1x64xf32>
    %t62 = "stablehlo.slice"(%t59) {start_indices = array<i64: 0, 1, 0, 0, 0, 0>, limit_indices = array<i64: 1, 2, 2, 32, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x32x1x64xf32>
    %t63 = "stablehlo.reshape"(%t62) : (tensor<1x1x2x32x1x64xf32>) -> tensor<2x32x1x64xf32>
    %t64 = "stablehlo.reshape"(%t58) : (tensor<2x1x64xf32>) -> tensor<2x1x1x64xf32>
    %t65 = "stablehlo.concatenate"(%t61, %t64) {dimension = 1 : i64} : (tensor<2x32x1x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x33x1x64xf32>
    %t66 = "stablehlo.reshape"(%t30) : (tensor<2x1x64xf32>) -> tensor<2x1x1x64xf32>
    %t67 = "stablehlo.concatenate"(%t63, %t66) {dimension = 1 : i64} : (tensor<2x32x1x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x33x1x64xf32>
    %t68 = "stablehlo.reshape"(%t47) : (tensor<2x2x64xf32>) -> tensor<2x1x2x64xf32>
    %t69 = "stablehlo.dot_general"(%t68, %t65) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x1x2x64xf32>, tensor<2x33x1x64xf32>) -> tensor<2x1x2x33xf32>
    %t70 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<2x1x2x33xf32>} : () -> tensor<2x1x2x33xf32>
    %t71 = "stablehlo.multiply"(%t69, %t70) : (tensor<2x1x2x33xf32>, tensor<2x1x2x33xf32>) -> tensor<2x1x2x33xf32>
    %t72 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x33xi32>
    %t73 = "stablehlo.broadcast_in_dim"(%cache_index) {broadcast_dimensions = array<i64: 0>} : (tensor<2xi32>) -> tensor<2x33xi32>
    %t74 = "stablehlo.compare"(%t72, %t73) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<2x33xi32>, tensor<2x33xi32>) -> tensor<2x33xi1>
    %t75 = "stablehlo.constant"() {value = dense<32> : tensor<2x33xi32>} : () -> tensor<2x33xi32>
    %t76 = "stablehlo.compare"(%t72, %t75) {comparison_direction = #stablehlo<comparison_direction EQ>} : (tensor<2x33xi32>, tensor<2x33xi32>) -> tensor<2x33xi1>
    %t77 = "stablehlo.or"(%t74, %t76) : (tensor<2x33xi1>, tensor<2x33xi1>) -> tensor<2x33xi1>
    %t78 = "stablehlo.broadcast_in_dim"(%t77) {broadcast_dimensions = array<i64: 0, 3>} : (tensor<2x33xi1>) -> tensor<2x1x2x33xi1>
    %t79 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<2x1x2x33xf32>} : () -> tensor<2x1x2x33xf32>
    %t80 = "stablehlo.select"(%t78, %t71, %t79) : (tensor<2x1x2x33xi1>, tensor<2x1x2x33xf32>, tensor<2x1x2x33xf32>) -> tensor<2x1x2x33xf32>
    %t81 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t82 = "stablehlo.reduce"(%t80, %t81) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x33xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t83 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t84 = "stablehlo.maximum"(%t82, %t83) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t85 = "stablehlo.broadcast_in_dim"(%t84) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x33xf32>
    %t86 = "stablehlo.subtract"(%t80, %t85) : (tensor<2x1x2x33xf32>, tensor<2x1x2x33xf32>) -> tensor<2x1x2x33xf32>
    %t87 = "stablehlo.exponential"(%t86) : (tensor<2x1x2x33xf32>) -> tensor<2x1x2x33xf32>
    %t88 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t89 = "stablehlo.reduce"(%t87, %t88) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x33xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t90 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t91 = "stablehlo.maximum"(%t89, %t90) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t92 = "stablehlo.broadcast_in_dim"(%t91) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x33xf32>
    %t93 = "stablehlo.divide"(%t87, %t92) : (tensor<2x1x2x33xf32>, tensor<2x1x2x33xf32>) -> tensor<2x1x2x33xf32>
    %t94 = "stablehlo.dot_general"(%t93, %t67) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>} : (tensor<2x1x2x33xf32>, tensor<2x33x1x64xf32>) -> tensor<2x1x2x64xf32>
    %t95 = "stablehlo.reshape"(%t94) : (tensor<2x1x2x64xf32>) -> tensor<2x128xf32>
    %t96 = util.global.load @"model.layers.0.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t97 = "stablehlo.dot_general"(%t95, %t96) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t98 = "stablehlo.add"(%t8, %t97) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t99 = util.global.load @"model.layers.0.post_attention_layernorm.weight" : tensor<128xf32>
    %t100 = "stablehlo.multiply"(%t98, %t98) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t101 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t102 = "stablehlo.reduce"(%t100, %t101) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t103 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t104 = "stablehlo.divide"(%t102, %t103) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t105 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t106 = "stablehlo.add"(%t104, %t105) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t107 = "stablehlo.rsqrt"(%t106) : (tensor<2xf32>) -> tensor<2xf32>
    %t108 = "stablehlo.broadcast_in_dim"(%t107) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t109 = "stablehlo.multiply"(%t98, %t108) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t110 = "stablehlo.broadcast_in_dim"(%t99) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t111 = "stablehlo.multiply"(%t110, %t109) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t112 = util.global.load @"model.layers.0.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t113 = "stablehlo.dot_general"(%t111, %t112) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x256xf32>) -> tensor<2x256xf32>
    %t114 = util.global.load @"model.layers.0.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t115 = "stablehlo.dot_general"(%t111, %t114) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x256xf32>) -> tensor<2x256xf32>
    %t116 = "stablehlo.negate"(%t113) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t117 = "stablehlo.exponential"(%t116) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t118 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<2x256xf32>} : () -> tensor<2x256xf32>
    %t119 = "stablehlo.add"(%t117, %t118) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t120 = "stablehlo.divide"(%t113, %t119) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t121 = "stablehlo.multiply"(%t120, %t115) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t122 = util.global.load @"model.layers.0.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t123 = "stablehlo.dot_general"(%t121, %t122) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x256xf32>, tensor<256x128xf32>) -> tensor<2x128xf32>
    %t124 = "stablehlo.add"(%t98, %t123) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t125 = util.global.load @"model.layers.1.input_layernorm.weight" : tensor<128xf32>
    %t126 = "stablehlo.multiply"(%t124, %t124) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t127 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t128 = "stablehlo.reduce"(%t126, %t127) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t129 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t130 = "stablehlo.divide"(%t128, %t129) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t131 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t132 = "stablehlo.add"(%t130, %t131) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t133 = "stablehlo.rsqrt"(%t132) : (tensor<2xf32>) -> tensor<2xf32>
    %t134 = "stablehlo.broadcast_in_dim"(%t133) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t135 = "stablehlo.multiply"(%t124, %t134) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t136 = "stablehlo.broadcast_in_dim"(%t125) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t137 = "stablehlo.multiply"(%t136, %t135) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t138 = util.global.load @"model.layers.1.self_attn.q_proj.weight#t" : tensor<128x128xf32>
    %t139 = "stablehlo.dot_general"(%t137, %t138) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t140 = util.global.load @"model.layers.1.self_attn.k_proj.weight#t" : tensor<128x64xf32>
    %t141 = "stablehlo.dot_general"(%t137, %t140) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
    %t142 = util.global.load @"model.layers.1.self_attn.v_proj.weight#t" : tensor<128x64xf32>
    %t143 = "stablehlo.dot_general"(%t137, %t142) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
    %t144 = "stablehlo.reshape"(%t139) : (tensor<2x128xf32>) -> tensor<2x2x64xf32>
    %t145 = "stablehlo.reshape"(%t141) : (tensor<2x64xf32>) -> tensor<2x1x64xf32>
    %t146 = "stablehlo.reshape"(%t143) : (tensor<2x64xf32>) -> tensor<2x1x64xf32>
    %t147 = "stablehlo.broadcast_in_dim"(%t35) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x2x32xf32>
    %t148 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x2x32xf32>
    %t149 = "stablehlo.slice"(%t144) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 2, 32>, strides = array<i64: 1, 1, 1>} : (tensor<2x2x64xf32>) -> tensor<2x2x32xf32>
    %t150 = "stablehlo.slice"(%t144) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 2, 2, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x2x64xf32>) -> tensor<2x2x32xf32>
    %t151 = "stablehlo.multiply"(%t149, %t147) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t152 = "stablehlo.multiply"(%t150, %t148) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t153 = "stablehlo.subtract"(%t151, %t152) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t154 = "stablehlo.multiply"(%t150, %t147) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t155 = "stablehlo.multiply"(%t149, %t148) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t156 = "stablehlo.add"(%t154, %t155) : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x32xf32>
    %t157 = "stablehlo.concatenate"(%t153, %t156) {dimension = 2 : i64} : (tensor<2x2x32xf32>, tensor<2x2x32xf32>) -> tensor<2x2x64xf32>
    %t158 = "stablehlo.broadcast_in_dim"(%t35) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x1x32xf32>
    %t159 = "stablehlo.broadcast_in_dim"(%t36) {broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x32xf32>) -> tensor<2x1x32xf32>
    %t160 = "stablehlo.slice"(%t145) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 2, 1, 32>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<2x1x32xf32>
    %t161 = "stablehlo.slice"(%t145) {start_indices = array<i64: 0, 0, 32>, limit_indices = array<i64: 2, 1, 64>, strides = array<i64: 1, 1, 1>} : (tensor<2x1x64xf32>) -> tensor<2x1x32xf32>
    %t162 = "stablehlo.multiply"(%t160, %t158) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t163 = "stablehlo.multiply"(%t161, %t159) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t164 = "stablehlo.subtract"(%t162, %t163) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t165 = "stablehlo.multiply"(%t161, %t158) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t166 = "stablehlo.multiply"(%t160, %t159) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t167 = "stablehlo.add"(%t165, %t166) : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
    %t168 = "stablehlo.concatenate"(%t164, %t167) {dimension = 2 : i64} : (tensor<2x1x32xf32>, tensor<2x1x32xf32>) -> tensor<2x1x64xf32>
    %t169 = "stablehlo.slice"(%t59) {start_indices = array<i64: 1, 0, 0, 0, 0, 0>, limit_indices = array<i64: 2, 1, 2, 32, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x32x1x64xf32>
    %t170 = "stablehlo.reshape"(%t169) : (tensor<1x1x2x32x1x64xf32>) -> tensor<2x32x1x64xf32>
    %t171 = "stablehlo.slice"(%t59) {start_indices = array<i64: 1, 1, 0, 0, 0, 0>, limit_indices = array<i64: 2, 2, 2, 32, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x40x1x64xf32>) -> tensor<1x1x2x32x1x64xf32>
    %t172 = "stablehlo.reshape"(%t171) : (tensor<1x1x2x32x1x64xf32>) -> tensor<2x32x1x64xf32>
    %t173 = "stablehlo.reshape"(%t168) : (tensor<2x1x64xf32>) -> tensor<2x1x1x64xf32>
    %t174 = "stablehlo.concatenate"(%t170, %t173) {dimension = 1 : i64} : (tensor<2x32x1x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x33x1x64xf32>
    %t175 = "stablehlo.reshape"(%t146) : (tensor<2x1x64xf32>) -> tensor<2x1x1x64xf32>
    %t176 = "stablehlo.concatenate"(%t172, %t175) {dimension = 1 : i64} : (tensor<2x32x1x64xf32>, tensor<2x1x1x64xf32>) -> tensor<2x33x1x64xf32>
    %t177 = "stablehlo.reshape"(%t157) : (tensor<2x2x64xf32>) -> tensor<2x1x2x64xf32>
    %t178 = "stablehlo.dot_general"(%t177, %t174) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x1x2x64xf32>, tensor<2x33x1x64xf32>) -> tensor<2x1x2x33xf32>
    %t179 = "stablehlo.constant"() {value = dense<1.250000000e-01> : tensor<2x1x2x33xf32>} : () -> tensor<2x1x2x33xf32>
    %t180 = "stablehlo.multiply"(%t178, %t179) : (tensor<2x1x2x33xf32>, tensor<2x1x2x33xf32>) -> tensor<2x1x2x33xf32>
    %t181 = "stablehlo.broadcast_in_dim"(%t77) {broadcast_dimensions = array<i64: 0, 3>} : (tensor<2x33xi1>) -> tensor<2x1x2x33xi1>
    %t182 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<2x1x2x33xf32>} : () -> tensor<2x1x2x33xf32>
    %t183 = "stablehlo.select"(%t181, %t180, %t182) : (tensor<2x1x2x33xi1>, tensor<2x1x2x33xf32>, tensor<2x1x2x33xf32>) -> tensor<2x1x2x33xf32>
    %t184 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %t185 = "stablehlo.reduce"(%t183, %t184) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x33xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t186 = "stablehlo.constant"() {value = dense<-3.402823466e+38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t187 = "stablehlo.maximum"(%t185, %t186) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t188 = "stablehlo.broadcast_in_dim"(%t187) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x33xf32>
    %t189 = "stablehlo.subtract"(%t183, %t188) : (tensor<2x1x2x33xf32>, tensor<2x1x2x33xf32>) -> tensor<2x1x2x33xf32>
    %t190 = "stablehlo.exponential"(%t189) : (tensor<2x1x2x33xf32>) -> tensor<2x1x2x33xf32>
    %t191 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t192 = "stablehlo.reduce"(%t190, %t191) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<2x1x2x33xf32>, tensor<f32>) -> tensor<2x1x2xf32>
    %t193 = "stablehlo.constant"() {value = dense<1.175494351e-38> : tensor<2x1x2xf32>} : () -> tensor<2x1x2xf32>
    %t194 = "stablehlo.maximum"(%t192, %t193) : (tensor<2x1x2xf32>, tensor<2x1x2xf32>) -> tensor<2x1x2xf32>
    %t195 = "stablehlo.broadcast_in_dim"(%t194) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<2x1x2xf32>) -> tensor<2x1x2x33xf32>
    %t196 = "stablehlo.divide"(%t190, %t195) : (tensor<2x1x2x33xf32>, tensor<2x1x2x33xf32>) -> tensor<2x1x2x33xf32>
    %t197 = "stablehlo.dot_general"(%t196, %t176) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>} : (tensor<2x1x2x33xf32>, tensor<2x33x1x64xf32>) -> tensor<2x1x2x64xf32>
    %t198 = "stablehlo.reshape"(%t197) : (tensor<2x1x2x64xf32>) -> tensor<2x128xf32>
    %t199 = util.global.load @"model.layers.1.self_attn.o_proj.weight#t" : tensor<128x128xf32>
    %t200 = "stablehlo.dot_general"(%t198, %t199) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
    %t201 = "stablehlo.add"(%t124, %t200) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t202 = util.global.load @"model.layers.1.post_attention_layernorm.weight" : tensor<128xf32>
    %t203 = "stablehlo.multiply"(%t201, %t201) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t204 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t205 = "stablehlo.reduce"(%t203, %t204) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t206 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t207 = "stablehlo.divide"(%t205, %t206) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t208 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t209 = "stablehlo.add"(%t207, %t208) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t210 = "stablehlo.rsqrt"(%t209) : (tensor<2xf32>) -> tensor<2xf32>
    %t211 = "stablehlo.broadcast_in_dim"(%t210) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t212 = "stablehlo.multiply"(%t201, %t211) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t213 = "stablehlo.broadcast_in_dim"(%t202) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t214 = "stablehlo.multiply"(%t213, %t212) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t215 = util.global.load @"model.layers.1.mlp.gate_proj.weight#t" : tensor<128x256xf32>
    %t216 = "stablehlo.dot_general"(%t214, %t215) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x256xf32>) -> tensor<2x256xf32>
    %t217 = util.global.load @"model.layers.1.mlp.up_proj.weight#t" : tensor<128x256xf32>
    %t218 = "stablehlo.dot_general"(%t214, %t217) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x256xf32>) -> tensor<2x256xf32>
    %t219 = "stablehlo.negate"(%t216) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t220 = "stablehlo.exponential"(%t219) : (tensor<2x256xf32>) -> tensor<2x256xf32>
    %t221 = "stablehlo.constant"() {value = dense<1.000000000e+00> : tensor<2x256xf32>} : () -> tensor<2x256xf32>
    %t222 = "stablehlo.add"(%t220, %t221) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t223 = "stablehlo.divide"(%t216, %t222) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t224 = "stablehlo.multiply"(%t223, %t218) : (tensor<2x256xf32>, tensor<2x256xf32>) -> tensor<2x256xf32>
    %t225 = util.global.load @"model.layers.1.mlp.down_proj.weight#t" : tensor<256x128xf32>
    %t226 = "stablehlo.dot_general"(%t224, %t225) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x256xf32>, tensor<256x128xf32>) -> tensor<2x128xf32>
    %t227 = "stablehlo.add"(%t201, %t226) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t228 = util.global.load @"model.norm.weight" : tensor<128xf32>
    %t229 = "stablehlo.multiply"(%t227, %t227) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t230 = "stablehlo.constant"() {value = dense<0.000000000e+00> : tensor<f32>} : () -> tensor<f32>
    %t231 = "stablehlo.reduce"(%t229, %t230) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<2x128xf32>, tensor<f32>) -> tensor<2xf32>
    %t232 = "stablehlo.constant"() {value = dense<1.280000000e+02> : tensor<2xf32>} : () -> tensor<2xf32>
    %t233 = "stablehlo.divide"(%t231, %t232) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t234 = "stablehlo.constant"() {value = dense<9.999999747e-06> : tensor<2xf32>} : () -> tensor<2xf32>
    %t235 = "stablehlo.add"(%t233, %t234) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %t236 = "stablehlo.rsqrt"(%t235) : (tensor<2xf32>) -> tensor<2xf32>
    %t237 = "stablehlo.broadcast_in_dim"(%t236) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2x128xf32>
    %t238 = "stablehlo.multiply"(%t227, %t237) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t239 = "stablehlo.broadcast_in_dim"(%t228) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>) -> tensor<2x128xf32>
    %t240 = "stablehlo.multiply"(%t239, %t238) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
    %t241 = util.global.load @"lm_head.weight#t" : tensor<128x512xf32>
    %t242 = "stablehlo.dot_general"(%t240, %t241) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x128xf32>, tensor<128x512xf32>) -> tensor<2x512xf32>
    %t243 = "stablehlo.reshape"(%t58) : (tensor<2x1x64xf32>) -> tensor<1x1x2x1x1x64xf32>
    %t244 = "stablehlo.reshape"(%t30) : (tensor<2x1x64xf32>) -> tensor<1x1x2x1x1x64xf32>
    %t245 = "stablehlo.reshape"(%t168) : (tensor<2x1x64xf32>) -> tensor<1x1x2x1x1x64xf32>
    %t246 = "stablehlo.reshape"(%t146) : (tensor<2x1x64xf32>) -> tensor<1x1x2x1x1x64xf32>
    %t247 = "stablehlo.concatenate"(%t243, %t244, %t245, %t246) {dimension = 1 : i64} : (tensor<1x1x2x1x1x64xf32>, tensor<1x1x2x1x1x64xf32>, tensor<1x1x2x1x1x64xf32>, tensor<1x1x2x1x1x64xf32>) -> tensor<1x4x2x1x1x64xf32>
    %t248 = "stablehlo.reshape"(%t247) : (tensor<1x4x2x1x1x64xf32>) -> tensor<2x2x2x1x1x64xf32>
    %t249 = "stablehlo.slice"(%t248) {start_indices = array<i64: 0, 0, 0, 0, 0, 0>, limit_indices = array<i64: 2, 2, 1, 1, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x1x1x64xf32>) -> tensor<2x2x1x1x1x64xf32>
    %t250 = "stablehlo.slice"(%t4) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t251 = "stablehlo.reshape"(%t250) : (tensor<1xi32>) -> tensor<i32>
    %t252 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %t253 = "stablehlo.dynamic_update_slice"(%t59, %t249, %t5, %t5, %t252, %t251, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<2x2x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    %t254 = "stablehlo.slice"(%t248) {start_indices = array<i64: 0, 0, 1, 0, 0, 0>, limit_indices = array<i64: 2, 2, 2, 1, 1, 64>, strides = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<2x2x2x1x1x64xf32>) -> tensor<2x2x1x1x1x64xf32>
    %t255 = "stablehlo.slice"(%t4) {start_indices = array<i64: 1>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<2xi32>) -> tensor<1xi32>
    %t256 = "stablehlo.reshape"(%t255) : (tensor<1xi32>) -> tensor<i32>
    %t257 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %t258 = "stablehlo.dynamic_update_slice"(%t253, %t254, %t5, %t5, %t257, %t256, %t5, %t5) : (tensor<2x2x2x40x1x64xf32>, tensor<2x2x1x1x1x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x2x40x1x64xf32>
    util.global.store %t258, @kv_cache : tensor<2x2x2x40x1x64xf32>
    return %t242 : tensor<2x512xf32>
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
    %key = "stablehlo.constant"() {value = dense<[1, 5, 1194047130, 1388478293]> : tensor<4xi32>} : () -> tensor<4xi32>
    return %key : tensor<4xi32>
  }
}
