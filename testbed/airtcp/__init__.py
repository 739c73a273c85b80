"""airtcp testbed: network-namespace experiments for TCP over lossy wireless links."""

__version__ = "0.1.0"
