#pragma once
int count_mismatches(const float* x, const float* y, int n);
int check_double_scale();
int check_block_sums(const float* x, int n);
