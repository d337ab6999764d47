"""Worker processes, one abstraction for all: `WorkerPool` (pool.py) runs work by value in processes of
its own, for Dawood-bot's decisions (bot.py), the engine's moves on pages outside the new-page limits
(engine.py) and the page's pictures (routes/picture.py)."""

from dotfight.server.workers.pool import WorkerFailed, WorkerPool, WorkerTimeout

__all__ = ["WorkerFailed", "WorkerPool", "WorkerTimeout"]
