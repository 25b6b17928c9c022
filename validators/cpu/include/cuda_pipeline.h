// cudashim: <cuda_pipeline.h> gives the pipeline primitives (cuda_pipeline_primitives.h). The
// experimental C++ nvcuda::experimental::pipeline class is not provided (needs_gpu).
#pragma once
#include <cuda_pipeline_primitives.h>
