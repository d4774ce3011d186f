/* aotc_maxpool_k3s1p0_f32: the float MaxPool's AVX-512F rows (pool_avx512.h) for windows of 3 columns at
 * column stride 1 after 0 leading pad columns, any height and row stride: 3 x 3 / 1 without a leading pad. */
#include "pool_avx512.h"

MP16_ENTRY(aotc_maxpool_k3s1p0_f32, 3, 1, 0)
