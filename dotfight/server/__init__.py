"""The Dotfight server: FastAPI app, the page authority, the WebSocket hub and the bot seat."""
