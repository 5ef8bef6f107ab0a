"""The Python half of the xla spike: iree.runtime behind a few calls that the
embedded interpreter in spike.c makes.

Inputs and outputs are C memory handed over as memoryviews. In "import" mode
the inputs are imported once as HAL buffers over that memory (zero copy on
local devices), so a call is one VM invoke plus one copy of each (small)
output into C memory. In "copy" mode every call wraps the C memory afresh and
copies it into new device buffers, the naive way, for comparison.
"""

import numpy as np
import iree.runtime as rt

_ELEMENT = {
    "f32": rt.HalElementType.FLOAT_32,
    "i32": rt.HalElementType.SINT_32,
    "i64": rt.HalElementType.SINT_64,
}
_NUMPY = {"f32": np.float32, "i32": np.int32, "i64": np.int64}
_U8 = np.dtype(np.uint8)


class Session:
    """One compiled module, its device, and its parameters (weights), which
    are resolved by name from checkpoint files at load time."""

    def __init__(self, vmfb_path, driver, scope, parameter_files):
        self.instance = rt.VmInstance()
        self.device = rt.get_device(driver)
        index = rt.ParameterIndex()
        for path in parameter_files:  # .safetensors / .gguf / .irpa, mmapped
            index.load(path)
        params = rt.create_io_parameters_module(
            self.instance, index.create_provider(scope=scope)
        )
        hal = rt.create_hal_module(self.instance, self.device)
        self.module = rt.VmModule.mmap(self.instance, vmfb_path)
        # Creating the context runs the module's initializers: globals (the
        # cache) are allocated and parameters are bound here, once.
        self.context = rt.VmContext(self.instance, [params, hal, self.module])
        self._index = index  # keeps the mapped files alive

    def function(self, name):
        fn = self.module.lookup_function(name)
        if fn is None:
            raise KeyError(f"module has no function '{name}'")
        return fn

    def bind(self, name, inputs, outputs):
        """inputs/outputs: lists of (memoryview over C memory, dtype, shape).
        Returns a callable with no arguments: C writes its input buffers, then
        calls it; the outputs land in C's output buffers."""
        fn = self.function(name)
        args = rt.VmVariantList(len(inputs))
        for mv, dtype, shape in inputs:
            buf = self.device.allocator.import_host_allocation(
                mv,
                rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE,
                rt.BufferUsage.DEFAULT,
            )
            args.push_ref(rt.HalBufferView(buf, list(shape), _ELEMENT[dtype]))
        outs = [(np.frombuffer(mv, _U8), mv.nbytes) for mv, _, _ in outputs]
        context = self.context

        def call():
            results = rt.VmVariantList(len(outs))
            context.invoke(fn, args, results)
            for i, (dst, nbytes) in enumerate(outs):
                view = results.get_as_object(i, rt.HalBufferView)
                np.copyto(dst, self._read(view, nbytes))

        return call

    def call_copy(self, name, inputs, outputs):
        """Same contract as bind()+call, but wraps and copies every time."""
        fn = self.function(name)
        args = rt.VmVariantList(len(inputs))
        for mv, dtype, shape in inputs:
            host = np.frombuffer(mv, _NUMPY[dtype]).reshape(shape)
            args.push_ref(
                self.device.allocator.allocate_buffer_copy(
                    memory_type=rt.MemoryType.DEVICE_LOCAL,
                    allowed_usage=rt.BufferUsage.DEFAULT,
                    device=self.device,
                    buffer=host,
                    element_type=_ELEMENT[dtype],
                )
            )
        results = rt.VmVariantList(len(outputs))
        self.context.invoke(fn, args, results)
        for i, (mv, _, _) in enumerate(outputs):
            view = results.get_as_object(i, rt.HalBufferView)
            np.copyto(np.frombuffer(mv, _U8), self._read(view, mv.nbytes))

    def _read(self, view, nbytes):
        """A result's bytes: mapped in place on local devices (CPU), a
        device-to-host transfer where the memory is not host-visible (CUDA)."""
        buf = view.get_buffer()
        if buf.memory_type() & int(rt.MemoryType.HOST_VISIBLE):
            return view.map().asarray((nbytes,), _U8)
        return rt.DeviceArray(self.device, view).to_host().view(_U8).reshape(-1)
