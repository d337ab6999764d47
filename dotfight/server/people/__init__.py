"""Time, absence, rematch offers and phrases of pages between two people (issue 19), as pure values.

Nothing here does I/O: no FastAPI, no SQLAlchemy, no sockets, no clock of its own (every time is a number
of seconds since the Unix epoch handed in by the caller). The room wires these into a page: `clock.py`
(live Fischer clocks, link per-move deadlines), `lag.py` (the lag allowance), `absence.py` (claiming a
live page the other side left), `alarm.py` (one timer for the earliest deadline of many pages),
`phrases.py` and `rematch.py`. Every refusal is a `PeopleError` (`errors.py`) with a stable code.
"""
