"""Reusable layers shared by the model files."""
