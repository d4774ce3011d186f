"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss as inference ops against onnxruntime (issue 16):
every reduction, class weights, ignore_index, extra dims, int32/int64 targets, the optional log_prob."""

from __future__ import annotations

import numpy as np
import pytest
from opcheck import op_case, shared_build

RNG = np.random.default_rng(3)
CASES = []
for op, opset in (("NegativeLogLikelihoodLoss", 13), ("SoftmaxCrossEntropyLoss", 13)):
    for shape in ((4, 5), (3, 5, 2, 3)):
        target_shape = (shape[0], *shape[2:])
        for reduction in ("none", "sum", "mean"):
            for weighted in (False, True):
                for ignore in (None, 2):
                    for tdt in (np.int64, np.int32):
                        target = RNG.integers(0, shape[1], size=target_shape).astype(tdt)
                        target.flat[0] = 2  # an ignored element when ignore_index is 2
                        tag = f"{op[:3].lower()}_{len(shape)}d_{reduction}_w{int(weighted)}_i{ignore}_{tdt.__name__}"
                        attrs = {"reduction": reduction, **({"ignore_index": ignore} if ignore is not None else {})}
                        consts = {"w": RNG.random(shape[1]).astype(np.float32) + 0.5} if weighted else {}
                        CASES.append(op_case(tag, op, {"x": RNG.standard_normal(shape).astype(np.float32),
                                                       "t": target}, consts=consts, attrs=attrs, opset=opset))
    CASES.append(op_case(f"{op[:3].lower()}_float64", op, {"x": RNG.standard_normal((3, 4)), "t":
                                                           RNG.integers(0, 4, size=3)}, out_dtype="float64",
                         opset=opset))
CASES.append(op_case("sce_log_prob", "SoftmaxCrossEntropyLoss",
                     {"x": RNG.standard_normal((3, 6, 2)).astype(np.float32),
                      "t": RNG.integers(0, 6, size=(3, 2))}, outputs=2, attrs={"reduction": "sum"}, opset=13))


@pytest.fixture(scope="module")
def built():
    return shared_build(CASES)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_matches_onnxruntime(built, case_id):
    built.check(case_id)
