// Parameter residency probe (params_probe.py): one 64 MiB bf16 weight looked
// up by name in a safetensors file, read one row at a time.
module @params {
  util.global private @big = #stream.parameter.named<"model"::"big"> : tensor<262144x128xbf16>
  func.func @row(%pos: tensor<i32>) -> tensor<1x128xf32> {
    %b = util.global.load @big : tensor<262144x128xbf16>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %r = stablehlo.dynamic_slice %b, %pos, %zero, sizes = [1, 128] : (tensor<262144x128xbf16>, tensor<i32>, tensor<i32>) -> tensor<1x128xbf16>
    %f = stablehlo.convert %r : (tensor<1x128xbf16>) -> tensor<1x128xf32>
    return %f : tensor<1x128xf32>
  }
}
