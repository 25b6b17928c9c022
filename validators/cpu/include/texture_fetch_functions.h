// cudashim: CUDA's texture fetch functions are the texture-object ones here; the legacy
// texture-reference overloads (removed in CUDA 12) are deliberately absent.
#pragma once
#include <texture_indirect_functions.h>
