// cudashim: no legacy `texture<T, dim, readMode>` references (removed in CUDA 12); a program
// that declares one fails to compile and is reported `needs_gpu`. Texture objects: texture_types.h.
#pragma once
#include <texture_types.h>
