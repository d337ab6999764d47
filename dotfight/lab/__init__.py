"""The rules lab: bots play many pages under some rules; the report says what the numbers do."""

from dotfight.lab.config import LabConfig
from dotfight.lab.report import build_report
from dotfight.lab.runner import run_pages

__all__ = ["LabConfig", "build_report", "run_pages"]
