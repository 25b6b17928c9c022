// Shared by both translation units: the kernel's launcher is defined in kernels.cu.
#pragma once
void axpb(const float* x, float* y, float a, float b, int n);
