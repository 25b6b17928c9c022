// Poisoned memory for PyTorch in the answer's process (validators/cpu/torch_cuda.py): every new
// CPU allocation, from Python (torch.empty) or from an extension (torch::empty), starts filled
// with the caller's byte, as the emulator's device allocations do under CUDASHIM_POISON. An
// output an answer never writes then holds the poison, not what a freed tensor of the reference
// (or a previous call) left at that address.
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <cstring>

namespace {
struct PoisonAllocator final : c10::Allocator {
  c10::Allocator* base = nullptr;
  int byte = 0;
  c10::DataPtr allocate(size_t n) override {
    c10::DataPtr p = base->allocate(n);
    if (n && p.get()) std::memset(p.get(), byte, n);
    return p;
  }
  c10::DeleterFnPtr raw_deleter() const override { return base->raw_deleter(); }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
};
}  // namespace

extern "C" __attribute__((visibility("default"))) void cudashim_torch_poison(int byte) {
  static PoisonAllocator alloc;
  if (alloc.base == nullptr) alloc.base = c10::GetCPUAllocator();
  alloc.byte = byte & 0xff;
  // The highest priority: nothing torch registers later replaces it.
  c10::SetCPUAllocator(&alloc, 255);
}
