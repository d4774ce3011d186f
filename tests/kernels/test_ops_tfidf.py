"""TfIdfVectorizer of integer tokens (issue 51), written as comparisons of shifted slices and sums on import
(aot/frontend/onnx/tfidf.py), against onnxruntime: each mode, with and without weights, skips, unigrams to
trigrams, rows shorter than a gram, int32 and int64 tokens, one row or a batch. A string pool is refused."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from opcheck import Case, shared_build

from aot.compiler import Options, compile_model
from aot.errors import AotcError

rng = np.random.default_rng(9)
# 3 unigrams, 3 bigrams, 2 trigrams
POOL = dict(ngram_counts=[0, 3, 9], pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 5, 2, 2, 3, 5],
            ngram_indexes=[0, 1, 2, 3, 4, 5, 6, 7])


def _case(case_id: str, x: np.ndarray, out: list[int], **attrs: object) -> Case:
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf", **{**POOL, **attrs})
    g = helper.make_graph([node], case_id, [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype),
                                                                          x.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return Case(case_id, model, {"x": x})


TOKENS = rng.integers(2, 9, (3, 20)).astype(np.int32)
CASES = [
    _case("tf_unigrams_to_trigrams_skip2", TOKENS, [3, 8], mode="TF", min_gram_length=1, max_gram_length=3,
          max_skip_count=2),
    _case("tf_bigrams_only_one_row_int64", TOKENS[0].astype(np.int64), [8], mode="TF", min_gram_length=2,
          max_gram_length=2, max_skip_count=5),
    _case("idf_weighted", TOKENS, [3, 8], mode="IDF", min_gram_length=1, max_gram_length=2, max_skip_count=1,
          weights=[0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 4.0]),
    _case("tfidf_weighted_trigrams", TOKENS, [3, 8], mode="TFIDF", min_gram_length=3, max_gram_length=3,
          max_skip_count=3, weights=[0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 4.0]),
    _case("idf_unweighted_short_rows", TOKENS[:, :2].copy(), [3, 8], mode="IDF", min_gram_length=1,
          max_gram_length=3, max_skip_count=4),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return shared_build(CASES, tmp_path_factory.mktemp("tfidf"))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_tfidf_matches_onnxruntime(built, case_id):
    built.check(case_id)


def test_a_string_pool_is_refused():
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf", mode="TF", min_gram_length=1,
                            max_gram_length=1, max_skip_count=0, ngram_counts=[0], ngram_indexes=[0],
                            pool_strings=["a"])
    g = helper.make_graph([node], "s", [helper.make_tensor_value_info("x", TensorProto.INT64, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(AotcError, match=r"node 'tfidf' \(TfIdfVectorizer\): TfIdfVectorizer of strings"):
        compile_model(model, Options())
