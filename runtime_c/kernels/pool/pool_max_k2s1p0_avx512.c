/* aotc_maxpool_k2s1p0_f32: the float MaxPool's AVX-512F rows (pool_avx512.h) for windows of 2 columns at
 * column stride 1 after 0 leading pad columns, any height and row stride: 2 x 2 / 1 pools. */
#include "pool_avx512.h"

MP16_ENTRY(aotc_maxpool_k2s1p0_f32, 2, 1, 0)
