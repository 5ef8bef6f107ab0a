"""How iree.runtime resolves a named weight from a safetensors file, and what
it costs in memory: for each data alignment of the tensor in the file and
each ParameterIndex.load mode, the load time and the process's anonymous and
file-backed resident memory. usage: params_probe.py PARAMS.vmfb WORK_DIR"""

import json, os, struct, subprocess, sys, time

import numpy as np
import iree.runtime as rt

ROWS, COLS = 262144, 128


def write(path, align):
    nbytes = ROWS * COLS * 2
    hdr = json.dumps({"big": {"dtype": "BF16", "shape": [ROWS, COLS],
                              "data_offsets": [0, nbytes]}}).encode()
    hdr += b" " * (-(8 + len(hdr)) % align)  # data starts at 8 + len(hdr)
    row = (np.arange(COLS, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hdr)) + hdr)
        f.write(np.tile(row, (ROWS, 1)).tobytes())
    return 8 + len(hdr)


def rss_mib():
    out = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in ("RssAnon", "RssFile"):
            out[key] = int(value.split()[0]) // 1024
    return out


def probe(vmfb, path, mode):
    before = rss_mib()
    t = time.perf_counter()
    inst, dev = rt.VmInstance(), rt.get_device("local-sync")
    index = rt.ParameterIndex()
    index.load(path, **({"mode": mode} if mode == "file_async" else {"mmap": mode == "mmap"}))
    params = rt.create_io_parameters_module(inst, index.create_provider(scope="model"))
    module = rt.VmModule.mmap(inst, vmfb)
    ctx = rt.VmContext(inst, [params, rt.create_hal_module(inst, dev), module])
    load_ms = (time.perf_counter() - t) * 1e3
    row = rt.FunctionInvoker(ctx, dev, module.lookup_function("row"))
    ok = np.array_equal(row(np.array(12345, np.int32)).to_host()[0], np.arange(COLS))
    after = rss_mib()
    return {"load_ms": round(load_ms, 1), "correct": bool(ok),
            "anon_mib": after["RssAnon"] - before["RssAnon"],
            "file_mib": after["RssFile"] - before["RssFile"]}


if __name__ == "__main__":
    vmfb, work = sys.argv[1], sys.argv[2]
    if len(sys.argv) == 5:  # child: one measurement in a fresh process
        print(json.dumps(probe(vmfb, sys.argv[3], sys.argv[4])))
        sys.exit(0)
    for align in (8, 64):
        path = os.path.join(work, f"params_align{align}.safetensors")
        offset = write(path, align)
        for mode in ("mmap", "preload", "file_async"):
            r = subprocess.run([sys.executable, __file__, vmfb, work, path, mode],
                               check=True, capture_output=True, text=True)
            res = json.loads(r.stdout)
            print(json.dumps({"params": "64 MiB bf16", "data_offset": offset,
                              "mode": mode, **res}))
        os.remove(path)
