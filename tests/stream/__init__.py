"""Tests of stream."""
