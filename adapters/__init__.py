"""Platform adapters: translate platform payloads to and from the core types."""
