"""The server: the watches of everything served (catalog.py), the JSON each page asks for (api.py), the buttons'
actions through the existing commands (actions.py), who may ask (access.py), and HTTP itself (server.py)."""
