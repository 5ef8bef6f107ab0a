#!/usr/bin/env bash
# Builds and runs the xla route spike (docs/XLA_ROUTE.md). Needs Debian's
# python3.11 + libpython3.11-dev and the venv from requirements.txt:
#   /usr/bin/python3.11 -m venv .venv-xla
#   .venv-xla/bin/pip install -r tools/xla_spike/requirements.txt
# usage: tools/xla_spike/run.sh [ROWS...]   (default: 1024 16384 262144 1048576)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${VENV:-$root/.venv-xla}
out=${OUT_DIR:-$root/build/xla_spike}
steps=${STEPS:-1000}
mkdir -p "$out"
[ -x "$venv/bin/iree-compile" ] || { echo "run.sh: no $venv (see header)" >&2; exit 2; }

# The C harness: headers and libpython from Debian's libpython3.11-dev (the
# venv's interpreter) through pkg-config, nothing copied into the repo. (Not
# python3.11-config from PATH: a pyenv one there links another libpython.)
cc -std=c11 -O2 -Wall -Wextra -Werror $(pkg-config --cflags python-3.11-embed) \
  "$here/spike.c" -o "$out/spike" $(pkg-config --libs python-3.11-embed) -lm

rows_list=${*:-1024 16384 262144 1048576}
for rows in $rows_list; do
  sed "s/@ROWS@/$rows/g" "$here/spike.mlir.in" > "$out/spike_$rows.mlir"
  t0=$(date +%s.%N)
  "$venv/bin/iree-compile" --iree-hal-target-device=local \
    --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=host \
    "$out/spike_$rows.mlir" -o "$out/spike_$rows.vmfb"
  t1=$(date +%s.%N)
  echo "{\"compile\":\"llvm-cpu\",\"rows\":$rows,\"seconds\":$(awk "BEGIN{printf \"%.2f\", $t1 - $t0}")," \
       "\"vmfb_bytes\":$(stat -c %s "$out/spike_$rows.vmfb")}"
done

# CUDA: compiles without a GPU. 3.13.0 has no sm_90 target description
# ("missing GPU target"), so Hopper runs the sm_80 PTX through the driver's JIT.
first=${rows_list%% *}
t0=$(date +%s.%N)
"$venv/bin/iree-compile" --iree-hal-target-device=cuda --iree-cuda-target=sm_80 \
  "$out/spike_$first.mlir" -o "$out/spike_${first}_cuda.vmfb"
t1=$(date +%s.%N)
echo "{\"compile\":\"cuda sm_80\",\"rows\":$first,\"seconds\":$(awk "BEGIN{printf \"%.2f\", $t1 - $t0}")," \
     "\"vmfb_bytes\":$(stat -c %s "$out/spike_${first}_cuda.vmfb")}"

status=0
for driver in ${DRIVERS:-local-sync local-task}; do
  for rows in $rows_list; do
    "$out/spike" "$venv" "$here" "$out/spike_$rows.vmfb" "$out/weights.safetensors" \
      "$rows" "$driver" "$steps" || status=1
  done
  # The runtime's own floor, no Python: iree-benchmark-module (C, from the wheel).
  for fn in noop step; do
    case $fn in noop) inputs=(--input=4xf32=0) ;; step) inputs=(--input=1x64xf32=1 --input=i32=5) ;; esac
    "$venv/bin/iree-benchmark-module" --device="$driver" --module="$out/spike_$first.vmfb" \
      --parameters=model="$out/weights.safetensors" --function=$fn "${inputs[@]}" \
      --benchmark_min_time=1s --benchmark_format=json 2>/dev/null |
      "$venv/bin/python" -c "import json,sys; b=json.load(sys.stdin)['benchmarks'][0]; \
print(json.dumps({'floor':'iree-benchmark-module','driver':'$driver','function':'$fn', \
'us_per_call':round(b['real_time']*{'ns':1e-3,'us':1,'ms':1e3}[b['time_unit']],2)}))"
  done
done

# Weights by name from safetensors: load time and resident memory per mode.
"$venv/bin/iree-compile" --iree-hal-target-device=local \
  --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=host \
  "$here/params.mlir" -o "$out/params.vmfb"
"$venv/bin/python" "$here/params_probe.py" "$out/params.vmfb" "$out" || status=1
exit $status
