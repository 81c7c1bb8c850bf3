"""The one error of the reference layer."""


class ReferenceDataError(ValueError):
    """Shipped reference data that does not decode or contradicts itself: a packaging error, never input."""
