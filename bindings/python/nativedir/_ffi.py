"""Loads the compiled cffi module and checks it speaks this package's ABI."""
from __future__ import annotations

import sys

from ._unavailable import looked_for, unavailable

try:
    from ._native import ffi, lib
except ImportError as exc:
    # missing, corrupted, another architecture, a C library symbol it needs is missing: one
    # documented error (NativeLibraryUnavailable) with the platform, the file and the loader's
    # reason, raised again, the same, by every later import
    raise unavailable(str(exc), looked_for(exc)) from exc

# The header the module was compiled against and the library loaded at run
# time must agree; a mismatch would mean calls with the wrong meaning.
if lib.nd_abi_version() != lib.ND_ABI_VERSION:  # pragma: no cover
    raise unavailable(f"the loaded libnativedir implements ABI {lib.nd_abi_version()}, but "
                      f"nativedir._native was built for ABI {lib.ND_ABI_VERSION}",
                      getattr(sys.modules.get(f"{__package__}._native"), "__file__", "?"))

__all__ = ["ffi", "lib"]
