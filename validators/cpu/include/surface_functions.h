// cudashim: surface functions are the surface-object ones (legacy references are absent).
#pragma once
#include <surface_indirect_functions.h>
