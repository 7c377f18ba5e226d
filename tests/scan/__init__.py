"""Tests of scan."""
