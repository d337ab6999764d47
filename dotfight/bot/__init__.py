"""Dawood-bot, the computer opponent: `DawoodBot(strength, seed).choose(state) -> action`."""

from dotfight.bot.dawood import DawoodBot
from dotfight.bot.strength import STRENGTHS, Strength

__all__ = ["STRENGTHS", "DawoodBot", "Strength"]
