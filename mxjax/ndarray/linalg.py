"""``mx.nd.linalg``: MXNet 1.x's batched BLAS/LAPACK routines (the ``linalg_*`` ops without the prefix)."""
from __future__ import annotations

from ._maker import nd_function

gemm = nd_function("_linalg_gemm", name="gemm")
gemm2 = nd_function("_linalg_gemm2", name="gemm2")
potrf = nd_function("_linalg_potrf", name="potrf")
potri = nd_function("_linalg_potri", name="potri")
trsm = nd_function("_linalg_trsm", name="trsm")
trmm = nd_function("_linalg_trmm", name="trmm")
syrk = nd_function("_linalg_syrk", name="syrk")
sumlogdiag = nd_function("_linalg_sumlogdiag", name="sumlogdiag")
inverse = nd_function("_linalg_inverse", name="inverse")
det = nd_function("_linalg_det", name="det")
slogdet = nd_function("_linalg_slogdet", name="slogdet")
extractdiag = nd_function("_linalg_extractdiag", name="extractdiag")
makediag = nd_function("_linalg_makediag", name="makediag")
extracttrian = nd_function("_linalg_extracttrian", name="extracttrian")
maketrian = nd_function("_linalg_maketrian", name="maketrian")
gelqf = nd_function("_linalg_gelqf", name="gelqf")
syevd = nd_function("_linalg_syevd", name="syevd")

__all__ = ["gemm", "gemm2", "potrf", "potri", "trsm", "trmm", "syrk", "sumlogdiag", "inverse", "det",
           "slogdet", "extractdiag", "makediag", "extracttrian", "maketrian", "gelqf", "syevd"]
