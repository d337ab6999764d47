"""Dotfight: the exercise-book war game of flicked soldier dots."""

__version__ = "0.1.0"
