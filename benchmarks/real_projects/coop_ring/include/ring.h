#pragma once
// Launches the cooperative ring kernel of kernels.cu on a grid the occupancy API sizes; returns
// the value every thread saw after grid.sync() (0 if they disagreed) and the grid's block count.
unsigned run_ring(int* blocks);
