// cudashim: <math.h> as libstdc++ gives it, without the global `lerp`.
//
// The shim builds as C++20, where libstdc++'s <math.h> adds `using std::lerp;` to the global
// namespace. nvcc compiles CUDA as C++17, where no global lerp exists, and CUDA code defines
// its own (the CUDA samples' helper_math.h: `float lerp(float a, float b, float t)`): that
// definition then conflicts with the using-declaration. std::lerp itself stays.
#pragma once
#include <cmath>
// <cmath> is in (its guard makes the wrapper's own #include a no-op), so the macro below renames
// only the wrapper's `using std::lerp;`, to a tag type nobody names.
namespace std {
struct __cudashim_no_global_lerp;
}
#define lerp __cudashim_no_global_lerp
#include_next <math.h>
#undef lerp
