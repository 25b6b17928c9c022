#pragma once
// Fills lane[i] with the hardware lane of thread i, read with inline PTX (needs a GPU).
void read_lanes(unsigned* lane, int n);
