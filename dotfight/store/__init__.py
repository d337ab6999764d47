"""Storage of pages: SQLAlchemy models, the database connection and the repository functions."""
