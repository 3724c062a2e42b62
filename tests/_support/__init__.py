"""Helpers shared by the tests: reference implementations, audit statistics, the golden
master's cases and a poisoning transformer. Not tests themselves."""
