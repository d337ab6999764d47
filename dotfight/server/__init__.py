"""The Dotfight server: FastAPI app, the page authority, the pages' rooms and the bot seat."""
