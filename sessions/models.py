"""The live table keeps no rows of its own.

Presence (who is at the table) lived here as a row per socket, written on
every connect and heartbeat; it now lives in Redis or process memory
(sessions/presence.py). Migration 0003 drops the old table.
"""
