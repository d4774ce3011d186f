/* aotc_maxpool_k3s2p1_f32: the float MaxPool's AVX-512F rows (pool_avx512.h) for windows of 3 columns at
 * column stride 2 after 1 leading pad columns, any height and row stride: ResNet's and torchvision's 3 x 3 / 2 pool with pads of 1. */
#include "pool_avx512.h"

MP16_ENTRY(aotc_maxpool_k3s2p1_f32, 3, 2, 1)
