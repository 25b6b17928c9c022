// cudashim: <thrust/sort.h> as nvcc's CUDA device system gives it. Its CUDA backend
// (thrust/system/cuda/detail/sort.h) includes the headers below, so programs built with nvcc
// call their algorithms without including them (tsne, logic-rewrite: thrust::sequence,
// thrust::minmax_element after <thrust/sort.h>); the CPP system the shim runs does not.
#pragma once
#include_next <thrust/sort.h>
#include <thrust/extrema.h>
#include <thrust/sequence.h>
