#pragma once
void scale(float* x, float a, int n);
