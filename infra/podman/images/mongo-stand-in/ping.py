#!/opt/nx/bin/python
"""Health check: the server answers `ping` over the wire protocol."""

from pymongo import MongoClient

MongoClient("mongodb://127.0.0.1:27017", serverSelectionTimeoutMS=3000).admin.command("ping")
