"""Pure logic: request validation, hashing, documents, outbox policy. No I/O."""
