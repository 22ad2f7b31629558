"""The kit's tests: python3 -m unittest, from kits/python.

They import the kit from src/ of this checkout, whether or not it is
installed.
"""

import os
import sys

_SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
if _SRC not in sys.path:
    sys.path.insert(0, _SRC)
