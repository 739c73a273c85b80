"""airtcp testbed: network-namespace experiments for TCP over lossy wireless links."""
