"""The one exception the library raises for bad user input."""


class SpecError(ValueError):
    """Bad user input: says what is wrong and how to mend it, in one line.

    The CLI prints ``error: <message>`` and exits with code 2; bugs are not SpecErrors.
    """
