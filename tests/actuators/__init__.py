"""Tests of actuators."""
