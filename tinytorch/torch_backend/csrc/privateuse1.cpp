// The parts of tinytorch's PrivateUse1 backend that PyTorch only accepts from C++: an allocator, a device guard
// that knows every device, the PrivateUse1 hooks (generators, pinned memory, storage resize) and a direct
// constructor of device tensors. Built at first use by tinytorch/torch_backend/_native.py against the installed
// torch (torch.utils.cpp_extension), so it always matches that torch's ABI.
//
// Device memory stays tinytorch's: every allocation and free is a call into Python (the callbacks given to
// init), which makes a tinytorch Storage and hands back a fake address that is never read. C++ only keeps
// PyTorch's bookkeeping: which address belongs to which device, and when it dies.

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/GeneratorImpl.h>
#include <c10/core/StorageImpl.h>
#include <c10/core/TensorImpl.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/Storage.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace py = pybind11;

namespace {

constexpr c10::DeviceType kDev = c10::DeviceType::PrivateUse1;

// ---- state set once by init() -------------------------------------------------------------------------------

c10::DeviceIndex g_count = 0;
bool g_available = false;
bool g_initialized = false;

// Strong references, deliberately never released: a storage may die during interpreter shutdown, after static
// destructors would have dropped them.
PyObject* g_alloc = nullptr;
PyObject* g_free = nullptr;
PyObject* g_copy = nullptr;
PyObject* g_resize = nullptr;
PyObject* g_sync = nullptr;

// The current device is per thread, as in CUDA: a DeviceGuard in one thread must not move another's work.
thread_local c10::DeviceIndex t_current = 0;

py::handle callback(PyObject* f) {
  return py::handle(f);
}

bool python_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// RuntimeError, as PyTorch's CUDA says it, and the Python side's check_index
void check_index(c10::DeviceIndex i) {
  TORCH_CHECK(i >= 0 && i < g_count, c10::get_privateuse1_backend(), ": invalid device ordinal ", static_cast<int>(i),
              ": the platform has ", static_cast<int>(g_count), " device", g_count == 1 ? "" : "s");
}

c10::DeviceIndex resolve(c10::DeviceIndex i) {
  if (i < 0) i = t_current;
  check_index(i);
  return i;
}

// "opencl" without an index names the current device
c10::Device resolve(c10::Device d) {
  return c10::Device(kDev, resolve(d.index()));
}

// Runs `f` (which calls Python) under the GIL. A Python exception becomes a c10::Error carrying its type and
// message, so PyTorch raises it as RuntimeError (MemoryError as torch.OutOfMemoryError) instead of crashing.
template <typename F>
auto call_python(const char* what, F&& f) -> decltype(f()) {
  std::string message;
  bool oom = false;
  {
    py::gil_scoped_acquire gil;
    try {
      return f();
    } catch (py::error_already_set& e) {
      oom = e.matches(PyExc_MemoryError);
      std::string type = py::str(e.type().attr("__name__"));
      message = type + ": " + std::string(py::str(e.value()));
    } catch (py::cast_error& e) {
      message = std::string("bad result: ") + e.what();
    }
  }
  TORCH_CHECK_WITH(OutOfMemoryError, !oom, "tinytorch ", what, " failed: ", message);
  TORCH_CHECK(false, "tinytorch ", what, " failed: ", message);
}

// ---- the device allocator -----------------------------------------------------------------------------------

void free_device(void* ptr) noexcept {
  // Storages still alive at shutdown are freed after Python is gone; their memory goes with the process.
  if (g_free == nullptr || !Py_IsInitialized() || python_finalizing()) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  // A storage may die while an exception is being raised; the callback must neither see nor clear it.
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject* r = PyObject_CallFunction(g_free, "K", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(ptr)));
  if (r == nullptr) {
    PyErr_WriteUnraisable(g_free);
  } else {
    Py_DECREF(r);
  }
  PyErr_Restore(type, value, traceback);
  PyGILState_Release(gil);
}

c10::DataPtr device_ptr(uintptr_t address, c10::DeviceIndex index) {
  void* p = reinterpret_cast<void*>(address);
  return c10::DataPtr(p, p, &free_device, c10::Device(kDev, index));
}

// Fake device addresses (never read: tinytorch's memory is not host-addressable): one increasing range, so two
// live storages never overlap (PyTorch compares data pointers to find shared and overlapping memory).
std::atomic<uint64_t> g_next_address{uint64_t(1) << 48};

uintptr_t reserve(size_t nbytes) {
  constexpr uint64_t align = 256;
  return static_cast<uintptr_t>(g_next_address.fetch_add((std::max<uint64_t>(nbytes, 1) + align - 1) / align * align));
}

// A kernel result's storage holds its tinytorch Storage (a Python object) as the DataPtr's context: the storage
// owns it without a Python storage object, and the last reference to the StorageImpl drops it.
// Live owners by base address too (borrowed references, guarded by the GIL): PyTorch sometimes views a storage's
// memory through a new storage of its own (at::from_blob in Storage._write_file, used by pickling), whose DataPtr
// only has the address.
std::unordered_map<uintptr_t, PyObject*> g_owners;

struct Owner {
  PyObject* object;
  uintptr_t address;
};

void release_owner(void* ctx) noexcept {
  auto* owner = static_cast<Owner*>(ctx);
  if (!Py_IsInitialized() || python_finalizing()) {
    delete owner;
    return;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  g_owners.erase(owner->address);
  Py_DECREF(owner->object);
  delete owner;
  PyErr_Restore(type, value, traceback);
  PyGILState_Release(gil);
}

struct DeviceAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    TORCH_CHECK(g_initialized, "tinytorch: the PrivateUse1 allocator is used before init()");
    // Like CUDA's allocator: the device is the current one, which PyTorch sets with a DeviceGuard first.
    c10::DeviceIndex index = t_current;
    uintptr_t address = call_python("allocation", [&] {
      return callback(g_alloc)(nbytes, static_cast<int>(index)).cast<uintptr_t>();
    });
    return device_ptr(address, index);
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return &free_device;
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    call_python("device copy", [&] {
      callback(g_copy)(reinterpret_cast<uintptr_t>(dest), reinterpret_cast<uintptr_t>(src), count);
      return 0;
    });
  }
};

DeviceAllocator g_device_allocator;

// ---- pinned host memory -------------------------------------------------------------------------------------
// The device is reached through OpenCL buffers that tinytorch copies itself, so page-locked memory buys nothing:
// "pinned" memory is ordinary host memory. The allocator remembers its pointers so that is_pinned() is true for
// exactly the tensors pin_memory() made.

std::mutex g_pinned_mutex;
std::unordered_set<const void*> g_pinned;

struct PinnedContext {
  c10::DataPtr host;
};

void free_pinned(void* ctx) noexcept {
  auto* c = static_cast<PinnedContext*>(ctx);
  {
    std::lock_guard<std::mutex> lock(g_pinned_mutex);
    g_pinned.erase(c->host.get());
  }
  delete c;
}

struct PinnedAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    c10::DataPtr host = c10::GetCPUAllocator()->allocate(nbytes);
    void* p = host.get();
    if (p != nullptr) {
      std::lock_guard<std::mutex> lock(g_pinned_mutex);
      g_pinned.insert(p);
    }
    return c10::DataPtr(p, new PinnedContext{std::move(host)}, &free_pinned, c10::Device(c10::DeviceType::CPU));
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};

PinnedAllocator g_pinned_allocator;

// ---- device guard ---------------------------------------------------------------------------------------------
// tinytorch's OpenCL work runs on one in-order queue per device and every host read waits for it, so there is
// one stream per device and events are complete as soon as they are recorded.

struct Guard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override {
    return kDev;
  }

  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old(kDev, t_current);
    setDevice(d);
    return old;
  }

  c10::Device getDevice() const override {
    return c10::Device(kDev, t_current);
  }

  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kDev, "tinytorch: expected a PrivateUse1 device, got ", d);
    if (d.index() < 0) return;  // "opencl" without an index means the current device
    check_index(d.index());
    t_current = d.index();
  }

  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0) t_current = d.index();
  }

  c10::Stream getStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, resolve(d));
  }

  c10::Stream getDefaultStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::DEFAULT, resolve(d));
  }

  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override {
    return c10::Stream(c10::Stream::DEFAULT, resolve(d));
  }

  c10::Stream getNewStream(c10::Device d, int) const override {
    return c10::Stream(c10::Stream::DEFAULT, resolve(d));
  }

  c10::Stream exchangeStream(c10::Stream s) const override {
    return c10::Stream(c10::Stream::DEFAULT, resolve(s.device()));
  }

  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}

  void record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {}

  void block(void*, const c10::Stream&) const override {}

  bool queryEvent(void*) const override {
    return true;
  }

  c10::DeviceIndex deviceCount() const noexcept override {
    return g_count;
  }

  bool queryStream(const c10::Stream&) const override {
    return true;
  }

  void synchronizeStream(const c10::Stream& s) const override {
    synchronizeDevice(s.device_index());
  }

  void synchronizeEvent(void*) const override {}

  void synchronizeDevice(const c10::DeviceIndex index) const override {
    c10::DeviceIndex i = resolve(index);
    call_python("synchronize", [&] {
      callback(g_sync)(static_cast<int>(i));
      return 0;
    });
  }
};

Guard g_guard;

// ---- generator ----------------------------------------------------------------------------------------------
// A seed and an offset, as CUDA's Philox generator keeps: enough for torch.Generator(<device>) and the seeding
// APIs. The device's random numbers are drawn by tinytorch's own generator.

struct Generator final : c10::GeneratorImpl {
  explicit Generator(c10::DeviceIndex index)
      : c10::GeneratorImpl(c10::Device(kDev, index), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)) {}

  static c10::DeviceType device_type() {
    return kDev;
  }

  void set_current_seed(uint64_t seed) override {
    seed_ = seed;
    offset_ = 0;
  }

  uint64_t current_seed() const override {
    return seed_;
  }

  uint64_t seed() override {
    uint64_t s = c10::detail::getNonDeterministicRandom();
    set_current_seed(s);
    return s;
  }

  void set_offset(uint64_t offset) override {
    offset_ = offset;
  }

  uint64_t get_offset() const override {
    return offset_;
  }

  // The state: 16 bytes of a uint8 CPU tensor, the seed then the offset (native byte order).
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override {
    c10::Storage storage(c10::Storage::use_byte_size_t(), 2 * sizeof(uint64_t), c10::GetCPUAllocator(), false);
    auto* p = static_cast<uint8_t*>(storage.mutable_data());
    std::memcpy(p, &seed_, sizeof(uint64_t));
    std::memcpy(p + sizeof(uint64_t), &offset_, sizeof(uint64_t));
    auto t = c10::make_intrusive<c10::TensorImpl>(std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                  caffe2::TypeMeta::Make<uint8_t>());
    t->set_sizes_contiguous({static_cast<int64_t>(2 * sizeof(uint64_t))});
    return t;
  }

  void set_state(const c10::TensorImpl& state) override {
    TORCH_CHECK(state.device().is_cpu() && state.dtype() == caffe2::TypeMeta::Make<uint8_t>() &&
                    state.numel() == 2 * sizeof(uint64_t) && state.is_contiguous(),
                "tinytorch: a generator state is a contiguous uint8 CPU tensor of 16 bytes (seed, offset); got ",
                state.numel(), " elements of ", state.dtype().name(), " on ", state.device());
    const auto* p = static_cast<const uint8_t*>(state.data());
    std::memcpy(&seed_, p, sizeof(uint64_t));
    std::memcpy(&offset_, p + sizeof(uint64_t), sizeof(uint64_t));
  }

 private:
  Generator* clone_impl() const override {
    auto* g = new Generator(device_.index());
    g->seed_ = seed_;
    g->offset_ = offset_;
    return g;
  }

  uint64_t seed_ = c10::default_rng_seed_val;
  uint64_t offset_ = 0;
};

// one default generator per device, made at init; a deque never moves its elements, so references stay valid
std::deque<at::Generator> g_default_generators;

// ---- hooks --------------------------------------------------------------------------------------------------

struct Hooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override {
    return true;
  }

  bool isAvailable() const override {
    return g_available;
  }

  bool hasPrimaryContext(c10::DeviceIndex) const override {
    return true;
  }

  void init() const override {}

  c10::DeviceIndex deviceCount() const override {
    return g_count;
  }

  void setCurrentDevice(c10::DeviceIndex index) const override {
    check_index(index);
    t_current = index;
  }

  c10::DeviceIndex getCurrentDevice() const override {
    return t_current;
  }

  c10::DeviceIndex exchangeDevice(c10::DeviceIndex index) const override {
    c10::DeviceIndex old = t_current;
    setCurrentDevice(index);
    return old;
  }

  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex index) const override {
    return exchangeDevice(index);
  }

  const at::Generator& getDefaultGenerator(c10::DeviceIndex index) const override {
    return g_default_generators.at(static_cast<size_t>(resolve(index)));
  }

  at::Generator getNewGenerator(c10::DeviceIndex index) const override {
    return at::make_generator<Generator>(resolve(index));
  }

  bool isPinnedPtr(const void* data) const override {
    std::lock_guard<std::mutex> lock(g_pinned_mutex);
    return g_pinned.count(data) != 0;
  }

  c10::Allocator* getPinnedMemoryAllocator() const override {
    return &g_pinned_allocator;
  }

  // UntypedStorage.resize_: Python makes the new allocation and copies the bytes both sizes share; the storage
  // then points at it, so every tensor over the storage sees the new memory.
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t nbytes) const override {
    c10::DeviceIndex index = storage.device().index() < 0 ? t_current : storage.device().index();
    uintptr_t address = call_python("storage resize", [&] {
      py::object s = py::reinterpret_steal<py::object>(THPStorage_Wrap(storage));
      return callback(g_resize)(s, nbytes, static_cast<int>(index)).cast<uintptr_t>();
    });
    c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
    impl->set_data_ptr_noswap(device_ptr(address, index));
    impl->set_nbytes(nbytes);
  }
};

Hooks g_hooks;

// ---- Python functions ---------------------------------------------------------------------------------------

void init(int count, bool available, py::object alloc, py::object free, py::object copy, py::object resize,
          py::object synchronize) {
  if (g_initialized) return;
  TORCH_CHECK(count >= 0 && count <= std::numeric_limits<c10::DeviceIndex>::max(), "tinytorch: bad device count ",
              count);
  // PyTorch takes one set of PrivateUse1 hooks per process and refuses a second.
  TORCH_CHECK(!at::isPrivateUse1HooksRegistered(),
              "tinytorch: PrivateUse1 hooks are already registered in this process (by Python or another backend)");
  g_count = static_cast<c10::DeviceIndex>(count);
  g_available = available;
  g_alloc = alloc.release().ptr();
  g_free = free.release().ptr();
  g_copy = copy.release().ptr();
  g_resize = resize.release().ptr();
  g_sync = synchronize.release().ptr();
  for (c10::DeviceIndex i = 0; i < g_count; ++i) g_default_generators.push_back(at::make_generator<Generator>(i));
  c10::SetAllocator(kDev, &g_device_allocator);
  c10::impl::registerDeviceGuard(kDev, &g_guard);
  at::RegisterPrivateUse1HooksInterface(&g_hooks);
  g_initialized = true;
}

// A device tensor over `storage` with the given geometry, made without going through the dispatcher
// (create_empty_tensor + set_ cost two dispatches and always say device index 0). Its device is the storage's.
at::Tensor tensor_over(c10::Storage st, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                       int64_t offset, at::ScalarType dtype);

at::Tensor make_tensor(py::handle storage, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                       int64_t offset, at::ScalarType dtype) {
  TORCH_CHECK(THPStorage_Check(storage.ptr()), "make_tensor: expected a torch.UntypedStorage, got ",
              Py_TYPE(storage.ptr())->tp_name);
  return tensor_over(THPStorage_Unpack(storage.ptr()), sizes, strides, offset, dtype);
}

at::Tensor tensor_over(c10::Storage st, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                       int64_t offset, at::ScalarType dtype) {
  TORCH_CHECK(st.device_type() == kDev, "make_tensor: the storage is on ", st.device(), ", not a ", kDev, " device");
  TORCH_CHECK(sizes.size() == strides.size(), "make_tensor: ", sizes.size(), " sizes but ", strides.size(),
              " strides");
  TORCH_CHECK(offset >= 0, "make_tensor: negative storage offset ", offset);
  const auto meta = c10::scalarTypeToTypeMeta(dtype);
  // the same bounds rule as Tensor.set_: the last element must lie inside the storage
  bool empty = false;
  int64_t last = offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    TORCH_CHECK(sizes[i] >= 0 && strides[i] >= 0, "make_tensor: negative size or stride");
    if (sizes[i] == 0) empty = true;
    last += (sizes[i] - 1) * strides[i];
  }
  if (!empty) {
    TORCH_CHECK(static_cast<uint64_t>(last + 1) * meta.itemsize() <= st.nbytes(), "make_tensor: sizes ",
                c10::IntArrayRef(sizes), ", strides ", c10::IntArrayRef(strides), " and offset ", offset,
                " need more than the storage's ", st.nbytes(), " bytes");
  }
  at::Tensor t = at::detail::make_tensor<c10::TensorImpl>(
      std::move(st), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), meta);
  t.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides, offset);
  return t;
}

// A resizable device storage over `address`, which the caller keeps alive (the tinytorch Storage it sets as the
// storage's `_tinytorch` attribute): no deleter. Resizable because its allocator is this backend's.
py::object make_storage(uintptr_t address, size_t nbytes, int index) {
  check_index(static_cast<c10::DeviceIndex>(index));
  void* p = reinterpret_cast<void*>(address);
  c10::Storage st(c10::make_intrusive<c10::StorageImpl>(
      c10::StorageImpl::use_byte_size_t(), nbytes,
      c10::DataPtr(p, c10::Device(kDev, static_cast<c10::DeviceIndex>(index))), &g_device_allocator, true));
  return py::reinterpret_steal<py::object>(THPStorage_Wrap(std::move(st)));
}

// The tinytorch Storage behind a device storage: the DataPtr's context for a kernel result (wrap), else the
// storage's `_tinytorch` attribute, else the torch storage itself (the allocator's, found by address in Python).
py::object storage_owner(const c10::Storage& storage) {
  const c10::DataPtr& dp = storage.data_ptr();
  if (dp.get_deleter() == &release_owner) {
    return py::reinterpret_borrow<py::object>(static_cast<Owner*>(dp.get_context())->object);
  }
  py::object s = py::reinterpret_steal<py::object>(THPStorage_Wrap(storage));
  PyObject* attr = PyObject_GetAttrString(s.ptr(), "_tinytorch");
  if (attr != nullptr) return py::reinterpret_steal<py::object>(attr);
  PyErr_Clear();
  auto it = g_owners.find(reinterpret_cast<uintptr_t>(dp.get()));
  if (it != g_owners.end()) return py::reinterpret_borrow<py::object>(it->second);
  return s;
}

// The hot path of every kernel, one call per argument: for a device tensor, (its storage's `_tinytorch` attribute or
// the storage itself when it has none, sizes, strides, storage offset, dtype); None for anything else. Five
// attribute calls from Python cost four times as much.
py::object unpack(py::handle obj) {
  if (!THPVariable_Check(obj.ptr())) return py::none();
  const at::Tensor& t = THPVariable_Unpack(obj.ptr());
  if (t.device().type() != kDev || !t.has_storage()) return py::none();
  py::object owner = storage_owner(t.storage());
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  py::tuple sz(sizes.size()), st(strides.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    sz[i] = py::int_(sizes[i]);
    st[i] = py::int_(strides[i]);
  }
  return py::make_tuple(owner, sz, st, t.storage_offset(),
                        py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(
                            torch::getTHPDtype(t.scalar_type()))));
}

// A kernel's result: a new device storage of `nbytes` owning `owner` (the tinytorch Storage, in the DataPtr), and
// the tensor over it, in one call. Resizable, as every storage of this device.
at::Tensor wrap(py::handle owner, size_t nbytes, int index, const std::vector<int64_t>& sizes,
                const std::vector<int64_t>& strides, int64_t offset, at::ScalarType dtype) {
  check_index(static_cast<c10::DeviceIndex>(index));
  uintptr_t address = reserve(nbytes);
  void* p = reinterpret_cast<void*>(address);
  Py_INCREF(owner.ptr());
  g_owners[address] = owner.ptr();
  c10::DataPtr dp(p, new Owner{owner.ptr(), address}, &release_owner,
                  c10::Device(kDev, static_cast<c10::DeviceIndex>(index)));
  c10::Storage st(c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), nbytes, std::move(dp),
                                                         &g_device_allocator, true));
  return tensor_over(std::move(st), sizes, strides, offset, dtype);
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "tinytorch's PrivateUse1 allocator, device guard, hooks and generator (C++ parts)";
  m.def("init", &init, py::arg("count"), py::arg("available"), py::arg("alloc"), py::arg("free"), py::arg("copy"),
        py::arg("resize"), py::arg("synchronize"),
        "Register the allocator, device guard and hooks for PrivateUse1 (once per process).");
  m.def("make_tensor", &make_tensor, py::arg("storage"), py::arg("sizes"), py::arg("strides"), py::arg("offset"),
        py::arg("dtype"));
  m.def("make_storage", &make_storage, py::arg("address"), py::arg("nbytes"), py::arg("index"));
  m.def("unpack", &unpack, py::arg("obj"));
  m.def("wrap", &wrap, py::arg("owner"), py::arg("nbytes"), py::arg("index"), py::arg("sizes"), py::arg("strides"),
        py::arg("offset"), py::arg("dtype"));
  m.def("reserve", &reserve, py::arg("nbytes"));
  m.def("owner", [](py::handle storage) {
    TORCH_CHECK(THPStorage_Check(storage.ptr()), "owner: expected a torch.UntypedStorage");
    return storage_owner(THPStorage_Unpack(storage.ptr()));
  }, py::arg("storage"));
  m.def("current_device", [] { return static_cast<int>(t_current); });
  m.def("set_device", [](int index) {
    check_index(static_cast<c10::DeviceIndex>(index));
    t_current = static_cast<c10::DeviceIndex>(index);
  });
  m.def("device_count", [] { return static_cast<int>(g_count); });
}
