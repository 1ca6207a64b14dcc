"""Talekeeper's load and store benchmarks (not part of the test run): see bench/README.md."""
