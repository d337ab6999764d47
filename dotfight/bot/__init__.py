"""Dawood-bot, the computer opponent: `DawoodBot(strength, seed, policy).choose(state, budget_s)`."""

from dotfight.bot.dawood import DawoodBot
from dotfight.bot.strength import POLICIES, STRENGTHS, Strength

__all__ = ["POLICIES", "STRENGTHS", "DawoodBot", "Strength"]
