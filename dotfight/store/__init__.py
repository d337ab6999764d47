"""Storage of pages: SQLAlchemy models, the database connection and the repository functions, the
`PageStore` protocol with its plain records (`records.py`, free of SQLAlchemy so that the page authority
may import it) and its two implementations (`sql_pages.py`, `memory.py`)."""
