"""Compiled Cython kernels (built from ``src/_ext/*.pyx``). Import them through
:func:`spare_core._native.load`, which explains how to build them when missing."""
