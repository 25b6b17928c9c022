// cudashim: cuSPARSE (a host subset: see cusparse.h and validators/cpu/README.md).
#pragma once
#include <cusparse.h>
