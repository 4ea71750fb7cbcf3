"""Loads the compiled cffi module and checks it speaks this package's ABI."""
from __future__ import annotations

try:
    from ._native import ffi, lib
except ImportError as exc:  # pragma: no cover - depends on how the package was built
    raise ImportError(
        "nativedir: the compiled module nativedir._native is missing or cannot load "
        f"libnativedir ({exc}). Build it with bindings/python/build_ffi.py or install the "
        "package with pip (see bindings/python/README.md)."
    ) from exc

# The header the module was compiled against and the library loaded at run
# time must agree; a mismatch would mean calls with the wrong meaning.
if lib.nd_abi_version() != lib.ND_ABI_VERSION:  # pragma: no cover
    raise ImportError(
        f"nativedir: libnativedir implements ABI {lib.nd_abi_version()}, "
        f"but nativedir._native was built for ABI {lib.ND_ABI_VERSION}; rebuild the module"
    )

__all__ = ["ffi", "lib"]
