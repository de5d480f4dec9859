"""A module that cannot be imported: discovery notes it, its case is an error row, the others run."""
import a_module_that_does_not_exist  # noqa: F401


def time_unreachable():
    pass
