"""Names of CUDA device intrinsics, as the CUDA Math API and the Programming Guide document them.

A g++ error naming one of these as undeclared means the program uses an intrinsic the shim does
not provide (a GPU feature: `needs_gpu`), not that the program is wrong. The families are
spelled out exactly (stems, lane widths, rounding suffixes) so that a program's own undeclared
`__helper` never reads as an intrinsic.
"""

from __future__ import annotations

import re

_ROUND = r"_r[nduz]"
_SIMD_STEMS = (
    "abs|absss|absdiffs|absdiffu|add|addss|addus|sub|subss|subus|avgs|avgu|hadd|haddu|maxs|maxu"
    "|mins|minu|neg|negss|sads|sadu"
    "|cmpeq|cmpne|cmpges|cmpgeu|cmpgts|cmpgtu|cmples|cmpleu|cmplts|cmpltu"
    "|seteq|setne|setges|setgeu|setgts|setgtu|setles|setleu|setlts|setltu"
)
_NUMBER_TYPES = "float|double|int|uint|ll|ull|half|bfloat16|short|ushort"

_FAMILIES = [
    # SIMD Intrinsics: per-halfword (2) and per-byte (4).
    rf"v(?:{_SIMD_STEMS})[24]",
    # SIMD Intrinsics, DPX.
    r"vi(?:max3|min3|addmax|addmin)_(?:s32|u32|s16x2|u16x2)(?:_relu)?",
    r"vi(?:max|min)_(?:s32|s16x2)_relu",
    r"vib(?:max|min)_(?:s32|u32|s16x2|u16x2)",
    # Single and double precision intrinsics with a rounding mode.
    rf"f(?:add|sub|mul|div|sqrt|rcp|rsqrt){_ROUND}",
    rf"fmaf(?:_ieee)?{_ROUND}",
    rf"d(?:add|sub|mul|div|sqrt|rcp){_ROUND}",
    rf"fma{_ROUND}",
    r"(?:exp|exp10|log|log2|log10|pow|sin|cos|tan|sincos)f|saturatef|fdividef|fdivide",
    # Type casting intrinsics.
    rf"(?:{_NUMBER_TYPES})2(?:{_NUMBER_TYPES})2?(?:{_ROUND})?",
    r"double2(?:hi|lo)int|hiloint2double",
    r"(?:int|uint|float|double|longlong|short|ushort)_as_(?:int|uint|float|double|longlong)",
    # Integer intrinsics.
    r"brev|brevll|clz|clzll|ffs|ffsll|fns|popc|popcll|byte_perm|mul24|umul24|mulhi|umulhi"
    r"|mul64hi|umul64hi|hadd|rhadd|uhadd|urhadd|sad|usad|dp4a|dp2a_hi|dp2a_lo"
    r"|funnelshift_(?:l|lc|r|rc)",
    # Load/store functions using cache hints, synchronisation, warp and other device functions.
    r"ld(?:g|cg|ca|cs|lu|cv)|st(?:wb|cg|cs|wt)",
    r"syncthreads(?:_count|_and|_or)?|syncwarp|threadfence(?:_block|_system)?",
    r"shfl(?:_up|_down|_xor)?(?:_sync)?|ballot(?:_sync)?|all(?:_sync)?|any(?:_sync)?|uni_sync",
    r"activemask|match_(?:any|all)_sync|reduce_(?:add|min|max|and|or|xor)_sync",
    r"nanosleep|trap|brkpt|prof_trigger|is(?:Global|Shared|Constant|Local|GridConstant)",
    r"cvta_generic_to_(?:global|shared|constant|local)|cvta_(?:global|shared|constant|local)_to_generic",
]
_INTRINSIC = re.compile(r"__(?:" + "|".join(f"(?:{f})" for f in _FAMILIES) + r")")


def is_cuda_intrinsic(name: str) -> bool:
    """True for the exact name of a documented CUDA device intrinsic (`__vadd2`, `__fadd_rz`)."""
    return _INTRINSIC.fullmatch(name) is not None
