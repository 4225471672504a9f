"""Persistence behind one interface (`storage.base.Storage`); SQLite by default."""
