"""Tests of userpaths."""
