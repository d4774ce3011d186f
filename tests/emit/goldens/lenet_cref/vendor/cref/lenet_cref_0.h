/* cref function lenet_cref_0: DLTensor in, DLTensor out (see aot/vendor/base.py). */
#ifndef LENET_CREF_0_H
#define LENET_CREF_0_H

#include <stdint.h>

#include "dltensor.h"

int32_t lenet_cref_0(const DLTensor *const *inputs, DLTensor *const *outputs, void *workspace);

#endif /* LENET_CREF_0_H */
