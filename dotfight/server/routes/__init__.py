"""HTTP and WebSocket routes of the server."""
