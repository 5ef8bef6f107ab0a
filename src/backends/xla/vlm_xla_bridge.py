"""The Python half of vlm's xla backend (src/backends/xla/xla_runtime.c).

The C engine embeds CPython and drives the pinned iree-base-runtime wheel
through this module (docs/XLA_ROUTE.md: the wheel has no C API). It stays
small on purpose: C owns every buffer (64-byte aligned, handed over as
memoryviews), validates every input, and decides what to call; this module
only loads the artifact with its parameters and invokes functions.
"""

import numpy as np
import iree.runtime as rt
import iree.runtime.version as rt_version

_ELEMENT = {
    "f32": rt.HalElementType.FLOAT_32,
    "i32": rt.HalElementType.SINT_32,
}
_U8 = np.dtype(np.uint8)


def version():
    """The runtime's release and revision, spelled as the compiler's
    ("3.13.0rc20261016@89ece87..."), for the compatibility key."""
    return f"{rt_version.VERSION}@{rt_version.REVISIONS.get('IREE', 'unknown')}"


_configured_workers = None


def configure_workers(count):
    """The local-task driver's worker count, process-wide: IREE reads its
    flags when the driver is first created, so the first caller decides."""
    global _configured_workers
    if _configured_workers is None:
        rt.flags.parse_flags(f"--task_topology_group_count={int(count)}")
        _configured_workers = int(count)
    return _configured_workers


class Session:
    """One artifact, its device, and its parameters, resolved by name from
    the checkpoint's safetensors shards (scope "model") when the context is
    created. Creating the context also allocates the KV globals, once."""

    def __init__(self, vmfb_path, driver, shard_paths, buffers=()):
        """shard_paths: (path, scope) pairs; the model's shards share scope
        "model", each extra file (a LoRA adapter, whose names repeat the
        other adapters') has its own. buffers: (scope, name, memoryview)
        triples of parameters laid out in C memory (xla_layout.c), imported
        without a copy; C keeps the memory alive longer than the session."""
        self.instance = rt.VmInstance()
        self.device = rt.get_device(driver)
        self.indexes = {}  # scope -> ParameterIndex; keeps the mapped shards alive
        for path, scope in shard_paths:
            self.indexes.setdefault(scope, rt.ParameterIndex()).load(path)
        for scope, name, view in buffers:
            self.indexes.setdefault(scope, rt.ParameterIndex()).add_buffer(name, view)
        params = rt.create_io_parameters_module(
            self.instance, *[index.create_provider(scope=scope) for scope, index in self.indexes.items()]
        )
        hal = rt.create_hal_module(self.instance, self.device)
        self.module = rt.VmModule.mmap(self.instance, vmfb_path)
        self.context = rt.VmContext(self.instance, [params, hal, self.module])

    def bind(self, name, inputs, outputs):
        """inputs/outputs: lists of (memoryview over C memory, dtype, shape).
        Inputs are imported once, zero copy on local devices; returns a
        callable with no arguments that invokes the function and copies each
        result into its C output buffer."""
        fn = self.module.lookup_function(name)
        if fn is None:
            raise KeyError(f"the artifact has no function '{name}'")
        args = rt.VmVariantList(len(inputs))
        for view, dtype, shape in inputs:
            buffer = self.device.allocator.import_host_allocation(
                view,
                rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE,
                rt.BufferUsage.DEFAULT,
            )
            args.push_ref(rt.HalBufferView(buffer, list(shape), _ELEMENT[dtype]))
        outs = [(np.frombuffer(view, _U8), view.nbytes) for view, _, _ in outputs]
        context, device = self.context, self.device

        def call():
            results = rt.VmVariantList(len(outs))
            context.invoke(fn, args, results)
            for i, (destination, nbytes) in enumerate(outs):
                view = results.get_as_object(i, rt.HalBufferView)
                np.copyto(destination, _read(device, view, nbytes))

        return call


def _read(device, view, nbytes):
    """A result's bytes: mapped in place where host-visible (CPU), else a
    device-to-host transfer (CUDA)."""
    buffer = view.get_buffer()
    if buffer.memory_type() & int(rt.MemoryType.HOST_VISIBLE):
        return view.map().asarray((nbytes,), _U8)
    return rt.DeviceArray(device, view).to_host().view(_U8).reshape(-1)
