"""``mx.gluon.metric``: online evaluation metrics, as in MXNet 2.0.

Metrics accumulate on the host: every ``update`` turns its arrays (``mx.np``, ``mx.nd``, NumPy, lists) into
NumPy arrays, and the arithmetic keeps MXNet's dtypes (float32 sums for regression metrics, float64 counts
for accuracy and the confusion statistics).  ``get()`` returns a Python float for a scalar result and an
``mx.np.ndarray`` for a vector one (``F1(average=None)``), as MXNet does.
"""
from ._base import CompositeEvalMetric, CustomMetric, EvalMetric, alias, check_label_shapes, create, np, register
from ._classification import (MCC, F1, Accuracy, BinaryAccuracy, Fbeta, TopKAccuracy, one_hot,
                              predict_with_threshold)
from ._regression import (MAE, MSE, PCC, RMSE, CrossEntropy, Loss, MeanCosineSimilarity,
                          MeanPairwiseDistance, PearsonCorrelation, Perplexity, Torch)

__all__ = ["check_label_shapes", "EvalMetric", "register", "alias", "create", "CompositeEvalMetric", "Accuracy",
           "TopKAccuracy", "predict_with_threshold", "one_hot", "F1", "Fbeta", "BinaryAccuracy", "MCC", "MAE",
           "MSE", "RMSE", "MeanPairwiseDistance", "MeanCosineSimilarity", "CrossEntropy", "Perplexity",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "CustomMetric", "np"]
