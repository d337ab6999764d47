"""Helpers shared by the test suites and the benchmarks: a real server process and a simple player."""
