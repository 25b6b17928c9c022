// Its test checks the refusal of a bad argument: exit status 2 with a usage line, after a
// kernel has checked the arguments it was given (here: the size must be a multiple of 32).
#include <cstdio>
#include <cstdlib>
#include "check.h"

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 0;
  if (!size_ok(n)) {
    fprintf(stderr, "usage: %s N (N a positive multiple of 32), got %s\n", argv[0], argc > 1 ? argv[1] : "nothing");
    return 2;
  }
  printf("N=%d accepted\n", n);
  return 0;
}
