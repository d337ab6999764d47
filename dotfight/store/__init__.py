"""Storage of pages: SQLAlchemy models, the database connection and the repository functions."""

# Imported with the package so that the tombstone table of expired pages is part of `Base.metadata`
# wherever the models are (the schema comparison of the migrations sees every table).
from dotfight.store import expiry as expiry
