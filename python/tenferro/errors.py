"""The exceptions tenferro raises: one class per C++ error kind.

Every class derives from :class:`Error`, and also from the Python built-in
exception a NumPy user would catch for the same mistake: shape and argument
errors are ``ValueError``, dtype errors ``TypeError``, axis errors
``IndexError`` (and ``ValueError``, as NumPy's ``AxisError``), ``Unsupported``
is ``NotImplementedError`` and ``OutOfMemory`` is ``MemoryError``.

Each exception carries the C++ error's ``kind``, ``phase`` ("build",
"compile" or "execute") and ``op`` (the function that failed); its message
is the C++ message, which starts with ``[op]`` and says what to do.
"""

from __future__ import annotations


class Error(Exception):
    """Base class of every tenferro error."""

    kind: str = "Internal"
    phase: str = "build"
    op: str = ""


class ValidationError(Error, ValueError):
    """Bad arguments: shapes, ranks, values."""


class InvalidArgument(ValidationError):
    pass


class ShapeMismatch(ValidationError):
    pass


class RankMismatch(ValidationError):
    pass


class DuplicateAxis(ValidationError):
    pass


class AxisOutOfBounds(ValidationError, IndexError):
    """An axis or index out of range (NumPy's AxisError is both kinds too)."""


class DTypeMismatch(Error, TypeError):
    pass


class ContextMismatch(Error, ValueError):
    """Tensors of different runtimes or devices mixed in one operation."""


class RuntimeState(Error, RuntimeError):
    """An operation not allowed in the current state (e.g. numpy() of a tensor
    that requires grad)."""


class Unsupported(Error, NotImplementedError):
    pass


class UnsupportedAdRule(Unsupported):
    """An operation without the derivative rule a transform needs."""


class MissingExtension(Error, RuntimeError):
    pass


class NoInputIngress(Error, RuntimeError):
    pass


class ExtensionContract(Error, RuntimeError):
    """An extension family broke its contract (a bug in that extension)."""


class OutOfMemory(Error, MemoryError):
    pass


class NumericalError(Error, ArithmeticError):
    """The inputs are valid but the numerics failed (singular matrix, ...)."""


class Singular(NumericalError):
    pass


class NoConvergence(NumericalError):
    pass


class GaugeIllDefined(NumericalError):
    """A derivative through a decomposition depends on a gauge (phase or a
    degenerate subspace) the loss does not fix; see docs/linalg.md."""


class Internal(Error, RuntimeError):
    pass


_BY_KIND = {
    cls.__name__: cls
    for cls in (
        InvalidArgument, ShapeMismatch, RankMismatch, DuplicateAxis, AxisOutOfBounds,
        DTypeMismatch, ContextMismatch, RuntimeState, Unsupported, UnsupportedAdRule,
        MissingExtension, NoInputIngress, ExtensionContract, OutOfMemory, Singular,
        NoConvergence, GaugeIllDefined, Internal,
    )
}


def class_for(kind: str) -> type:
    """The exception class of a C++ ErrorKind name."""
    return _BY_KIND.get(kind, Internal)
