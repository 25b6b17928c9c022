// cudashim: cudaCreateChannelDesc lives with the rest of the texture host API.
#pragma once
#include <cudashim/texture_runtime.h>
