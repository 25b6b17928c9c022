// cudashim: the runtime API with C linkage, for a program's C units.
//
// libcudart exports the runtime API as C functions, so a .c unit that nvcc hands to the host C
// compiler calls cudaMalloc, cudaSetDevice, ... by their plain names (with
// include_c/cuda_runtime_api.h, or declared implicitly as C89 allows). The shim's API is C++, its
// symbols mangled; each function here takes the plain name as its symbol (an asm label, so its
// C++ name differs from the function it forwards to) and calls the C++ function. Weak: a
// program that defines one of these names itself (a C stub, an interposer) keeps its own, as it
// would next to the shared libcudart.
//
// Included at the end of cudashim_runtime.cpp, so it is built into the runtime object of every
// variant; not into the torch extension's library (CUDASHIM_LIBRARY), which shares a process
// with torch, whose own CUDA runtime may export the same names.
#ifndef CUDASHIM_LIBRARY

#include <cstddef>

#include "../include_c/cudashim_c_lists.h"

#define CUDASHIM_C_DEFINE(_Ret, _Name, _Params, _Args)                                         \
  extern "C" __attribute__((weak, used)) _Ret cudashim_c_##_Name _Params __asm__(#_Name);     \
  extern "C" _Ret cudashim_c_##_Name _Params { return ::_Name _Args; }
CUDASHIM_C_FUNCTIONS(CUDASHIM_C_DEFINE)
#undef CUDASHIM_C_DEFINE

// A C unit is compiled against the lists, the rest of the program against include/cuda_runtime.h:
// every value and field the lists give must be that header's, or the two sides would disagree
// silently on an error code or where cudaDeviceProp's fields lie.
#define CUDASHIM_C_SAME_VALUE(_Name, _Value) \
  static_assert(static_cast<long long>(::_Name) == (_Value), "C value differs: " #_Name);
#define CUDASHIM_C_SAME_ENUM(_Name)                                                             \
  static_assert(sizeof(::_Name) == sizeof(int), "C enum size differs: " #_Name);              \
  CUDASHIM_C_ENUM_##_Name(CUDASHIM_C_SAME_VALUE)
CUDASHIM_C_ENUMS(CUDASHIM_C_SAME_ENUM)
#undef CUDASHIM_C_SAME_ENUM
#undef CUDASHIM_C_SAME_VALUE

namespace cudashim_c_abi {
#define CUDASHIM_C_FIELD(_Type, _Name, _Bounds) _Type _Name _Bounds;
#define CUDASHIM_C_STRUCT(_Name) struct _Name { CUDASHIM_C_STRUCT_##_Name(CUDASHIM_C_FIELD) };
CUDASHIM_C_STRUCTS(CUDASHIM_C_STRUCT)
#undef CUDASHIM_C_STRUCT
#undef CUDASHIM_C_FIELD
}  // namespace cudashim_c_abi

#define CUDASHIM_C_SAME_FIELD(_Type, _Name, _Bounds)                                            \
  static_assert(offsetof(cudashim_c_abi::CUDASHIM_C_CHECKED, _Name) ==                        \
                        offsetof(::CUDASHIM_C_CHECKED, _Name) &&                              \
                    sizeof(cudashim_c_abi::CUDASHIM_C_CHECKED::_Name) ==                      \
                        sizeof(::CUDASHIM_C_CHECKED::_Name),                                  \
                "C field differs: " #_Name);
#define CUDASHIM_C_SAME_STRUCT(_Name)                                                           \
  static_assert(sizeof(cudashim_c_abi::_Name) == sizeof(::_Name) &&                           \
                    alignof(cudashim_c_abi::_Name) == alignof(::_Name),                       \
                "C struct differs: " #_Name);
CUDASHIM_C_STRUCTS(CUDASHIM_C_SAME_STRUCT)
#define CUDASHIM_C_CHECKED cudaDeviceProp
CUDASHIM_C_STRUCT_cudaDeviceProp(CUDASHIM_C_SAME_FIELD)
#undef CUDASHIM_C_CHECKED
#define CUDASHIM_C_CHECKED cudaPointerAttributes
CUDASHIM_C_STRUCT_cudaPointerAttributes(CUDASHIM_C_SAME_FIELD)
#undef CUDASHIM_C_CHECKED
#undef CUDASHIM_C_SAME_STRUCT
#undef CUDASHIM_C_SAME_FIELD

#endif  // CUDASHIM_LIBRARY
