"""Component kinds beyond the built-in ones, one module per mechanism.

Every module in this package is imported before a scheme is built, so a new
mechanism (a pepd filter, a receiver module, the ARQ link layer) registers
its component kind with ``@components.register("kind")`` in a file of its
own here, without editing the runner or any shared file.
"""
