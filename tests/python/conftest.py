"""pytest setup: the package under test is the build tree's (PYTHONPATH set by
CTest, python.pytest) unless TENFERRO_PYTHONPATH points elsewhere."""

import os
import sys

_extra = os.environ.get("TENFERRO_PYTHONPATH")
if _extra:
    sys.path.insert(0, _extra)
