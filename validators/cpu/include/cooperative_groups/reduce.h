// cudashim: reduce/scan live in cooperative_groups.h.
#pragma once
#include <cooperative_groups.h>
