#include <cstdio>
#include "ring.h"

int main() {
  int nb = 0;
  unsigned got = run_ring(&nb);
  unsigned want = 7;
  for (int b = 1; b < nb; ++b) want = want * 131u + b;
  want = want * 131u;  // block 0 adds itself last
  printf("%d blocks: %u (want %u) %s\n", nb, got, want, got == want && nb > 1 ? "PASS" : "FAIL");
  return got == want ? 0 : 1;
}
